"""Whois dates in all their spellings -> ISO 8601 UTC with ``Z`` (pure).

Seen in registry answers: ``1997-09-15T04:00:00Z``, ``2019-09-09T15:39:04.000+00:00``,
``1997-09-15T07:00:00-0700`` (registrar side), ``2001/02/07`` and ``2025/03/01 01:05:03 (JST)``
(JPRS), ``11-Jun-2014`` (Nominet), ``30.6.2006 12:00:00`` (Ficora, FRED), ``19990221 #12345``
(registro.br), ``2024.01.02 13:14:15`` (NASK), ``2003-09-02 19:00:00 (GMT+0:00)`` (.kz),
``Tue Jun 11 10:00:00 GMT 2014`` (ctime), ``30th April 2003 at 00:00:00.000`` (Island Networks),
``January 18 2000`` (ISNIC), ``27-July-1999`` (IEDR), ``01/15/2015`` month first (Freenom, through
``month_first``). A stated zone is honoured; a date or time with no
zone is taken as UTC, as docs/whois.md says (never guess a registry's local zone).
Anything else gives ``None``; the caller adds an ``unparsed_date`` warning, never a 500.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Final

_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "janv", "jän"),
            ("feb", "fév", "fev"),
            ("mar", "mär", "mrz"),
            ("apr", "avr"),
            ("may", "mai"),
            ("jun", "juin"),
            ("jul", "juil"),
            ("aug", "aoû", "aou"),
            ("sep", "sept"),
            ("oct", "okt"),
            ("nov",),
            ("dec", "déc", "dez"),
        ),
        start=1,
    )
    for name in names
}
_ZONES_MIN: Final = {
    "z": 0, "ut": 0, "utc": 0, "gmt": 0, "jst": 540, "kst": 540, "cet": 60, "cest": 120,
    "eet": 120, "eest": 180, "msk": 180, "ist": 330, "brt": -180, "est": -300, "edt": -240,
    "cst": -360, "cdt": -300, "mst": -420, "mdt": -360, "pst": -480, "pdt": -420,
}  # fmt: skip

_MONTH = r"(?P<mon>[^\W\d_]{3,9})\.?"
_DATE_PATTERNS: Final = tuple(
    re.compile(p)
    for p in (
        r"(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)",
        r"(?<!\d)(?P<d>\d{1,2})[-/.](?P<m>\d{1,2})[-/.](?P<y>\d{4})",
        r"(?<!\d)(?P<d>\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?[-\s/]" + _MONTH + r"[-\s/,]+(?P<y>\d{4})",
        _MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+"
        r"(?:(?P<ct>\d{1,2}:\d{2}(?::\d{2})?)(?:\s+(?P<ctz>[A-Za-z]{1,5}))?\s+)?(?P<y>\d{4})",
        r"(?P<y>\d{4})[-\s]" + _MONTH + r"[-\s](?P<d>\d{1,2})(?!\d)",
        r"(?<!\d)(?P<y>\d{4})(?P<m>\d{2})(?P<d>\d{2})(?!\d)",
    )
)
_TIME: Final = re.compile(
    r"^\s*(?:T|\s|at\s|,)?\s*(?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,]\d+)?)?"
    r"\s*(?P<ampm>[AaPp][Mm](?![A-Za-z]))?"
)
_ZONE: Final = re.compile(
    r"^\s*\(?\s*(?P<word>[A-Za-z]{1,5}(?![A-Za-z]))?\s*"
    r"(?:(?P<sign>[+-])(?P<hh>\d{1,2})(?::?(?P<mm>\d{2}))?)?"
)


_MONTH_FIRST: Final = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{4})")


def month_first(text: str) -> str:
    """``01/15/2015`` (US order, as Freenom writes it) -> ``2015-01-15``; other text unchanged."""
    return _MONTH_FIRST.sub(lambda m: f"{m[3]}-{int(m[1]):02d}-{int(m[2]):02d}", text, count=1)


def parse_date(text: str | None) -> str | None:
    """``text`` -> ``YYYY-MM-DDTHH:MM:SSZ`` or ``None`` when no date can be read."""
    if not text:
        return None
    moment = parse_datetime(text)
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_datetime(text: str) -> datetime | None:
    for pattern in _DATE_PATTERNS:
        match = pattern.search(text)
        if match is None:
            continue
        parts = match.groupdict()
        month = _month(parts)
        if month is None:
            continue
        try:
            day = datetime(int(parts["y"]), month, int(parts["d"]))
        except ValueError:
            return None
        if not 1900 <= day.year <= 9999:
            return None
        if parts.get("ct"):  # ctime: "Tue Jun 11 10:00:00 GMT 2014"
            rest = parts["ct"] + " " + (parts.get("ctz") or "")
        else:
            rest = text[match.end() :]
        return _with_time_and_zone(day, rest)
    return None


def _month(parts: dict[str, str | None]) -> int | None:
    if parts.get("m") is not None:
        value = int(parts["m"] or 0)
        return value if 1 <= value <= 12 else None
    name = (parts.get("mon") or "").lower()
    return _MONTHS.get(name) or _MONTHS.get(name[:4]) or _MONTHS.get(name[:3])


def _with_time_and_zone(day: datetime, rest: str) -> datetime | None:
    time = _TIME.match(rest)
    if time is not None:
        hour, minute = int(time["H"]), int(time["M"])
        second = int(time["S"] or 0)
        if time["ampm"]:
            hour = hour % 12 + (12 if time["ampm"].lower() == "pm" else 0)
        if hour > 23 or minute > 59 or second > 60:
            return None
        day = day.replace(hour=hour, minute=minute, second=min(second, 59))
        rest = rest[time.end() :]
    offset = _zone_minutes(rest)
    return day.replace(tzinfo=timezone(timedelta(minutes=offset))).astimezone(UTC)


def _zone_minutes(rest: str) -> int:
    zone = _ZONE.match(rest)
    if zone is None:
        return 0
    minutes = 0
    word = (zone["word"] or "").lower()
    if word in _ZONES_MIN:
        minutes = _ZONES_MIN[word]
    if zone["sign"]:
        stated = int(zone["hh"]) * 60 + int(zone["mm"] or 0)
        if stated > 14 * 60:
            return 0
        minutes = stated if zone["sign"] == "+" else -stated
    return minutes
