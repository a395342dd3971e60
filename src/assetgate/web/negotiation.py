"""Pure content negotiation over header strings (RFC 9110 §12.5), read once per request.

An ``Accept`` (or ``Accept-Encoding``) value is a comma-separated list of ranges, each with
parameters; a quoted string may hold commas and semicolons, so the list is split by a tokenizer,
not by ``str.split``. For one representation (our outputs carry no media-type parameters):

- a range with parameters other than ``q`` does not apply to it (``image/webp;level=1`` says
  nothing about ``image/webp``); the weight ``q`` must be a valid qvalue (``0``–``1``, at most
  three decimals), else the element is ignored;
- the most specific range that applies decides (``image/webp`` over ``image/*`` over ``*/*``),
  and ``q=0`` means "not acceptable";
- **a range repeated** (``image/webp;q=0, image/webp``): RFC 9110 does not say which wins. Here
  the lowest weight does, so any ``q=0`` for the range excludes it. It is the reading a cache key
  can follow with one pattern (the nginx template's map: a ``q=0`` anywhere means no), and the
  cautious one: a client that once says it cannot take WebP does not get WebP (issue 35: the
  last one won here while nginx read the first, and one request poisoned the edge cache).

Several header lines of one field are one list (RFC 9110 §5.3): callers join them
(``joined_field``). ``edge_bucket`` is the format bucket the nginx template keys its cache on,
from this same reading, so the app can tell when the edge read a header otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

# A list element: a token (or type/subtype) and ";"-parameters, quoted strings kept whole.
_ELEMENT: Final = re.compile(r'(?:[^,"]|"(?:[^"\\]|\\.)*")+')
_PARAM: Final = re.compile(r';\s*([^=;\s]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^;\s]*))?\s*')
_QVALUE: Final = re.compile(r"0(?:\.\d{0,3})?|1(?:\.0{0,3})?")
_RANGE: Final = re.compile(r"\s*([^;\s]+)\s*")


def _element(text: str) -> tuple[str, float] | None:
    """``(range, weight)`` of one list element; None when it does not apply or is malformed."""
    found = _RANGE.match(text)
    if found is None:
        return None
    weight = 1.0
    rest = text[found.end() :]
    position = 0
    while position < len(rest):
        param = _PARAM.match(rest, position)
        if param is None:
            return None
        name, value = param.group(1).lower(), param.group(2)
        if name != "q":
            return None  # a parameter our representations do not carry: not this range
        if value is None or not _QVALUE.fullmatch(value):
            return None
        weight = float(value)
        position = param.end()
    return found.group(1).lower(), weight


def parse_header_list(header: str | None) -> dict[str, float]:
    """``"image/webp;q=0.9, */*;q=0.1"`` -> ``{"image/webp": 0.9, "*/*": 0.1}`` (lower-cased);
    a repeated range keeps its lowest weight."""
    result: dict[str, float] = {}
    if not header:
        return result
    for match in _ELEMENT.finditer(header):
        parsed = _element(match.group(0))
        if parsed is None:
            continue
        token, weight = parsed
        result[token] = min(weight, result.get(token, weight))
    return result


def joined_field(values: Iterable[str]) -> str | None:
    """The lines of one header field as the one list they are (RFC 9110 §5.3)."""
    joined = ", ".join(value for value in values if value.strip())
    return joined or None


def accepts(accept: str | None, media_type: str) -> bool:
    """True when ``media_type`` is explicitly acceptable (q > 0) — wildcards do not count.

    ``*/*`` is sent by every client, including ones that cannot decode WebP, so only an explicit
    mention negotiates a modern format (as imgproxy and Cloudflare do).
    """
    return parse_header_list(accept).get(media_type.lower(), 0.0) > 0.0


def accepts_encoding(accept_encoding: str | None, coding: str) -> bool:
    """RFC 9110 §12.5.3: the coding, else ``*``, with q > 0; ``gzip;q=0`` means no."""
    table = parse_header_list(accept_encoding)
    coding = coding.lower()
    if coding in table:
        return table[coding] > 0.0
    return table.get("*", 0.0) > 0.0


def edge_bucket(accept: str | None) -> str:
    """The nginx template's cache bucket for ``accept`` (``$assetgate_avif_bucket`` then
    ``$assetgate_format_bucket``): ``avif+`` when AVIF is named, then ``webp`` or ``auto``."""
    table = parse_header_list(accept)
    avif = "avif+" if table.get("image/avif", 0.0) > 0.0 else ""
    return avif + ("webp" if table.get("image/webp", 0.0) > 0.0 else "auto")
