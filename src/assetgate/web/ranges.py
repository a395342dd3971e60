"""Which ``Range`` headers to act on (RFC 9110 §14.2): pure, no I/O.

A server may ignore ``Range``, and must ignore a range unit it does not understand; a byte range
set that does not parse, or whose range has its last position before its first (``bytes=5-1``),
is not a range request at all, so the answer is the whole file with 200. Starlette's
``FileResponse`` answered those with a ``text/plain`` 400 (issue 35). A valid range past the
end is still its 416.
"""

from __future__ import annotations

import re
from typing import Final

_SPEC: Final = re.compile(r"(?:(\d+)-(\d*)|-(\d+))")
_UNIT: Final = re.compile(r"[ \t]*bytes[ \t]*=", re.IGNORECASE)


def usable_range(value: str | None) -> bool:
    """Whether ``value`` is a byte-range set to answer with 206 or 416; False: ignore it."""
    if not value:
        return False
    unit = _UNIT.match(value)
    if unit is None:
        return False
    specs = [spec.strip(" \t") for spec in value[unit.end() :].split(",")]
    specs = [spec for spec in specs if spec]  # the list rule allows empty elements
    if not specs:
        return False
    for spec in specs:
        found = _SPEC.fullmatch(spec)
        if found is None:
            return False
        first, last, _suffix = found.groups()
        if first is not None and last and int(last) < int(first):
            return False
    return True
