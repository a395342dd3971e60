"""Layout shapes many registries share, as structures the per-format rules query (pure).

- Indented sections (Nominet, EURid, DNS Belgium, SIDN, Island Networks, Freenom): a heading
  line ``Registrar:`` then deeper-indented lines; ``flush=True`` also takes the lines under a
  heading at the same indentation up to the next blank line (NASK's ``REGISTRAR:`` block).
- Handle-keyed objects (RPSL-like answers, Norid): blank-line separated objects, each object
  findable by the handle it defines (``nic-hdl: X``, ``contact: X``, ``NORID Handle...: X``), so
  a ``registrant: X`` / ``Registrar Handle: X`` reference is resolved inside the answer.
- Key/value lines whose value continues on indented lines without a key (NASK name servers).
- Free-text postal addresses (Freenom, Traficom): street lines, a postal code, a city.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

Block = list[tuple[str, str]]

COMMENT_PREFIXES: Final = ("%", "#", ">>>", "--", "NOTICE", "TERMS OF USE")
HANDLE_KEYS: Final = (
    "nic-hdl", "nic-hdl-br", "contact", "handle", "norid handle", "registrar handle"
)  # fmt: skip
_PAIR: Final = re.compile(r"^([^:]{1,60}?)\s*(?:\.{2,}\s*)?:(?:\s+(.*?)|\s*)$")
_POSTAL: Final = re.compile(r"^(?:[A-Z]{1,3}-)?\d{3,6}(?:[ -]?[A-Z\d]{2,3})?$")
_CODE: Final = re.compile(r"^[A-Z]{2,3}$")  # a state or country code, not a city
_POSTAL_CITY: Final = re.compile(r"^((?:[A-Z]{1,3}-)?\d{3,6}(?:[ -]?[A-Z]{2})?)\s+(\D.*)$")


def norm_key(key: str) -> str:
    """``Name Server Handle.........`` -> ``name server handle``."""
    return " ".join(key.lower().split()).rstrip(".").strip()


def pair(line: str) -> tuple[str, str] | None:
    """``Key: value`` or ``Key......: value`` -> (normalised key, stripped value)."""
    match = _PAIR.match(line.strip())
    if match is None or "//" in match[1]:
        return None
    return norm_key(match[1]), (match[2] or "").strip()


class Section(NamedTuple):
    """A heading (lower case, no colon; ``""`` for a top-level line) and its stripped lines."""

    heading: str
    lines: list[str]

    def pairs(self) -> list[tuple[str, str]]:
        return [p for p in map(pair, self.lines) if p is not None]

    def get(self, key: str) -> str | None:
        return next((v for k, v in self.pairs() if k == key), None)

    def free_lines(self) -> list[str]:
        """The lines that are not ``Key: value`` pairs (free text, addresses)."""
        return [line for line in self.lines if pair(line) is None]


def sections(text: str, *, flush: bool = False) -> list[Section]:
    """Heading + indented lines; top-level ``Key: value`` lines are one-line sections ``""``."""
    out: list[Section] = []
    header_indent = -1
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(COMMENT_PREFIXES):
            if not stripped:
                header_indent = -1
            continue
        indent = len(line) - len(line.lstrip())
        if out and header_indent >= 0 and (indent > header_indent or flush):
            out[-1].lines.append(stripped)
        elif stripped.endswith(":") and ": " not in stripped:
            if not norm_key(stripped[:-1]):
                continue  # a line of colons names no section (and must not be a key-less one)
            out.append(Section(norm_key(stripped[:-1]), []))
            header_indent = indent
        else:
            out.append(Section("", [stripped]))
            header_indent = -1
    return out


def continued_pairs(text: str) -> Iterator[tuple[str, list[str]]]:
    """``key: v1`` then indented key-less lines ``v2`` -> (key, [v1, v2])."""
    current: tuple[str, list[str]] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(COMMENT_PREFIXES):
            if current is not None:
                yield current
            current = None
            continue
        found = pair(line)
        if found is None and current is not None and line[:1] in (" ", "\t"):
            current[1].append(stripped)
            continue
        if current is not None:
            yield current
        current = None if found is None else (found[0], [found[1]] if found[1] else [])
    if current is not None:
        yield current


def handle_index(blocks: Iterable[Block]) -> dict[str, Block]:
    """Objects by the handle they define: the object's first key, or ``nic-hdl`` anywhere."""
    index: dict[str, Block] = {}
    for block in blocks:
        for position, (key, value) in enumerate(block):
            if value and (key in HANDLE_KEYS[:2] or (position == 0 and key in HANDLE_KEYS)):
                index.setdefault(value.upper(), block)
    return index


def first(block: Sequence[tuple[str, str]], *keys: str) -> str | None:
    return next((v for k, v in block if k in keys and v), None)


@dataclass(slots=True)
class Address:
    street: list[str] = field(default_factory=list)
    postal_code: str | None = None
    city: str | None = None
    after: list[str] = field(default_factory=list)  # lines after the city (often the country)


def split_address(lines: Iterable[str]) -> Address:
    """Street lines, then ``00100`` + ``Helsinki`` or ``1234 AB Amsterdam`` -> parts.

    The postal line is the *last* line shaped like one, never the first: ``1600 Amphitheatre
    Parkway`` or ``10400 Overland Rd.`` have the shape of ``00100 Helsinki``, and a house
    number comes before the postal line. ``<code> <city>`` gives both; a code alone takes the
    next line as the city (``00100`` / ``HELSINKI``), or the line before it when the next one
    is a state or country code (CZ.NIC: ``Mountain View`` / ``94043`` / ``CA`` / ``US``).
    Lines before are the street, lines after ``after`` (often the country).
    """
    kept = [s.strip() for s in lines if s.strip()]
    at = next(
        (
            i
            for i in range(len(kept) - 1, 0, -1)
            if _POSTAL.match(kept[i]) or _POSTAL_CITY.match(kept[i])
        ),
        None,
    )
    if at is None:
        return Address(street=kept)
    combined = _POSTAL_CITY.match(kept[at])
    if combined is not None and not _POSTAL.match(kept[at]):
        return Address(kept[:at], combined[1], combined[2].strip(), kept[at + 1 :])
    following = kept[at + 1] if at + 1 < len(kept) else None
    if following is not None and not _CODE.match(following):
        return Address(kept[:at], kept[at], following, kept[at + 2 :])
    if at >= 2:
        return Address(kept[: at - 1], kept[at], kept[at - 1], kept[at + 1 :])
    return Address(kept[:at], kept[at], None, kept[at + 1 :])
