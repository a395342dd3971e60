"""The ``domain`` query parameter -> a validated, normalised ``Domain`` (pure).

Validation comes before anything touches the network: the whois query line is built only from
the A-label returned here plus fixed per-server decorations, so nothing a client types can
become a whois command (``-h host``, ``=xxx``, ``!handle``) or a second query line (CR/LF).
Normalisation is IDNA 2008 with the UTS 46 mapping, non-transitional (RFC 5891, UTS #46 §4):
full-width forms, upper case and ideographic full stops all collapse to the same A-label, so
the restricted-TLD check below cannot be dodged by spelling ``.edu`` as ``．ＥＤＵ``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Final

import idna

from assetgate.errors import AppError

PARAM: Final = "domain"
MAX_INPUT_CHARS: Final = 1024
MAX_NAME_OCTETS: Final = 253  # RFC 1035 §2.3.4, without the root label
EXPECTED: Final = "a domain name such as example.com"
NO_EMPTY_LABEL: Final = "a domain name without empty labels"
# The full stops UTS 46 maps to "." (U+002E, ideographic, full-width, half-width ideographic).
_DOTS: Final = re.compile("[.\u3002\uff0e\uff61]")

# Characters a whois server could read as syntax: query flags, handles, URLs, a second line.
_FORBIDDEN: Final = frozenset("\r\n\t\x00 /\\:@?#%*=!&;,\"'<>|`$(){}[]~^+")
_FLAG_PREFIXES: Final = ("-", "=", "!")
# Controls, separators, private use, surrogates. Format characters (Cf) are left to IDNA: the
# joiners U+200C/U+200D are legitimate in some scripts and IDNA rejects the rest.
_BAD_CATEGORIES: Final = frozenset({"Cc", "Co", "Cs", "Zs", "Zl", "Zp"})
# LDH labels (RFC 5890 §2.3.1 NR-LDH): no leading/trailing hyphen, no "--" in positions 3-4.
_LDH_LABEL: Final = r"(?![a-z0-9-]{2}--)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_LDH_NAME: Final = re.compile(rf"{_LDH_LABEL}(?:\.{_LDH_LABEL})*")

# The documented shape (OpenAPI): LDH names of two or more labels under an alphabetic TLD, the
# hyphen rule spelled without a lookahead so generators honour it. Every such name is accepted;
# Unicode and A-label names are accepted as well, beyond what a pattern can say.
_ALNUM: Final = "[A-Za-z0-9]"
_LDH: Final = "[A-Za-z0-9-]"
_SCHEMA_LABEL: Final = (
    f"{_ALNUM}(?:{_LDH}?{_ALNUM})?"  # 1-3 characters
    f"|{_ALNUM}{_LDH}{_LDH}{_ALNUM}"  # 4 characters: the 4th is no hyphen
    f"|{_ALNUM}{_LDH}(?:{_ALNUM}{_LDH}|-{_ALNUM}){_LDH}{{0,58}}{_ALNUM}"  # no "--" at 3-4
)
SCHEMA_PATTERN: Final = rf"^(?:(?:{_SCHEMA_LABEL})\.)+[A-Za-z]{{2,63}}\.?$"


@dataclass(frozen=True, slots=True)
class Domain:
    """A domain name ready for a lookup: ``ascii`` is what goes on the wire."""

    ascii: str
    unicode: str
    tld: str


def parse_domain(raw: str | None, *, restricted: Collection[str]) -> Domain:
    """Validate and normalise ``raw``; 400 names the parameter, 403 names the restricted TLD."""
    if raw is None:
        raise AppError.missing_param(PARAM)
    if raw == "" or len(raw) > MAX_INPUT_CHARS:
        raise AppError.bad_param(PARAM, EXPECTED, raw)
    _reject_empty_labels(raw, raw)  # first: "example.edu.." must never reach the TLD check
    _reject_syntax(raw, raw)
    fast = _plain_ascii(raw)
    if fast is not None:
        return _checked(fast, fast, raw, restricted)
    try:
        mapped = idna.uts46_remap(raw, std3_rules=True, transitional=False)
    except (idna.IDNAError, UnicodeError, ValueError):
        raise AppError.bad_param(PARAM, EXPECTED, raw) from None
    _reject_empty_labels(mapped, raw)  # a mapping may produce a full stop of its own
    _reject_syntax(mapped, raw)  # full-width '－' or '＝' only show up after the mapping
    name = mapped[:-1] if mapped.endswith(".") else mapped
    if not name or name.startswith("."):
        raise AppError.bad_param(PARAM, EXPECTED, raw)
    try:
        ascii_name = idna.encode(name, uts46=False).decode("ascii")
        unicode_name = idna.decode(ascii_name)
    except (idna.IDNAError, UnicodeError, ValueError):
        raise AppError.bad_param(PARAM, EXPECTED, raw) from None
    return _checked(ascii_name, unicode_name, raw, restricted)


def _checked(ascii_name: str, unicode_name: str, raw: str, restricted: Collection[str]) -> Domain:
    labels = ascii_name.split(".")
    if "" in labels:  # the restricted-TLD check below needs a real last label
        raise AppError.bad_param(PARAM, NO_EMPTY_LABEL, raw)
    tld = labels[-1]
    if tld in _normalised_tlds(restricted):
        raise AppError(403, f"whois of .{tld} domains is restricted", param=PARAM)
    if len(labels) < 2:
        raise AppError.bad_param(PARAM, "a domain name with at least two labels", raw)
    if len(ascii_name) > MAX_NAME_OCTETS:
        raise AppError.bad_param(PARAM, f"at most {MAX_NAME_OCTETS} characters", raw)
    if tld.isdigit() or all(label.isdigit() for label in labels):
        raise AppError.bad_param(PARAM, "a domain name, not an IP address", raw)
    return Domain(ascii=ascii_name, unicode=unicode_name, tld=tld)


def registrable(domain: Domain, private_suffix: Callable[[str], str | None]) -> Domain:
    """Cut ``www.example.co.uk`` down to ``example.co.uk``: registries only know the latter.

    ``private_suffix`` is the ICANN-section Public Suffix List lookup built once at start-up
    (``publicsuffixlist.PublicSuffixList(only_icann=True).privatesuffix``); a name that is
    itself a public suffix is left as it is.
    """
    cut = private_suffix(domain.ascii)
    if cut is None or cut == domain.ascii:
        return domain
    return Domain(ascii=cut, unicode=idna.decode(cut), tld=domain.tld)


@functools.lru_cache(maxsize=256)
def normalise_tld(tld: str) -> str:
    """A configured TLD (``EDU``, ``.edu``, ``рф``) in the A-label form lookups compare with."""
    text = tld.strip().strip(".")
    try:
        return idna.encode(idna.uts46_remap(text, transitional=False), uts46=False).decode()
    except (idna.IDNAError, UnicodeError, ValueError):
        return text.lower()


def _normalised_tlds(tlds: Collection[str]) -> frozenset[str]:
    return frozenset(normalise_tld(t) for t in tlds)


def _plain_ascii(raw: str) -> str | None:
    """The common case without IDNA: letters, digits and inner hyphens only, no ``xn--``.

    For such names UTS 46 mapping is lower-casing and IDNA 2008 accepts every label (RFC 5891
    §4.2.3.1 hyphen rules included, checked here), so the result is identical and ten times
    cheaper. Anything else goes the full IDNA way.
    """
    name = raw.lower()
    name = name[:-1] if name.endswith(".") else name
    if not _LDH_NAME.fullmatch(name):
        return None
    return name


def _reject_empty_labels(text: str, raw: str) -> None:
    """One trailing full stop is the DNS root and is dropped; any other empty label is a 400.

    Without this, ``example.edu..`` normalised to an empty last label and skipped the
    restricted-TLD check (docs/whois.md, status 403).
    """
    labels = _DOTS.split(text)
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    if "" in labels:
        raise AppError.bad_param(PARAM, NO_EMPTY_LABEL, raw)


def _reject_syntax(text: str, raw: str) -> None:
    if text.startswith(_FLAG_PREFIXES):
        raise AppError.bad_param(PARAM, "a domain name, not a whois query flag", raw)
    for char in text:
        if char in _FORBIDDEN or char.isspace() or unicodedata.category(char) in _BAD_CATEGORIES:
            raise AppError.bad_param(PARAM, EXPECTED, raw)
