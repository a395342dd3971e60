"""Typed readers over a query mapping; each rejection names the parameter.

Pure: no Starlette, so any ``Mapping[str, str]`` works (tests pass plain dicts). ``alias`` is the
short name (``w`` for ``width``); the long name wins when both are present, as the spec says, and
a rejection names the one the client sent (``w: expected …`` for a bad ``w``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar

from assetgate.errors import AppError

T = TypeVar("T")

_INT = re.compile(r"[+-]?[0-9]{1,10}")  # every bound of the tables fits in 10 digits
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})
_NUMBER = re.compile(r"[0-9]{1,2}(?:\.[0-9]{1,40})?")


def raw_value(query: Mapping[str, str], name: str, alias: str | None = None) -> str | None:
    given = _given(query, name, alias)
    return None if given is None else given[1]


def _given(query: Mapping[str, str], name: str, alias: str | None) -> tuple[str, str] | None:
    """(the key the client used, its value), the long name first."""
    if name in query:
        return name, query[name]
    if alias is not None and alias in query:
        return alias, query[alias]
    return None


def read_int(
    query: Mapping[str, str],
    name: str,
    *,
    low: int,
    high: int,
    alias: str | None = None,
    default: int | None = None,
) -> int | None:
    given = _given(query, name, alias)
    if given is None:
        return default
    key, raw = given
    text = raw.strip()
    if not _INT.fullmatch(text) or not low <= int(text) <= high:
        raise AppError.bad_param(key, f"an integer {low}..{high}", raw)
    return int(text)


def require_int(query: Mapping[str, str], name: str, *, low: int, high: int, default: int) -> int:
    value = read_int(query, name, low=low, high=high, default=default)
    assert value is not None
    return value


def read_bool(
    query: Mapping[str, str], name: str, *, alias: str | None = None, default: bool = False
) -> bool:
    given = _given(query, name, alias)
    if given is None:
        return default
    key, raw = given
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise AppError.bad_param(key, "a boolean (true, false, 1 or 0)", raw)


def read_flag(query: Mapping[str, str], name: str) -> bool:
    """A 0/1 switch (``min``, ``compress``, ``safe``): nothing else is accepted."""
    raw = raw_value(query, name)
    if raw is None:
        return False
    if raw not in ("0", "1"):
        raise AppError.bad_param(name, "0 or 1", raw)
    return raw == "1"


def read_choice(
    query: Mapping[str, str],
    name: str,
    choices: Mapping[str, T],
    *,
    alias: str | None = None,
    default: T | None = None,
) -> T | None:
    given = _given(query, name, alias)
    if given is None:
        return default
    key, raw = given
    choice = raw.strip().lower()
    if choice not in choices:
        allowed = ", ".join(choices)
        raise AppError.bad_param(key, f"one of {allowed}", raw)
    return choices[choice]


def read_str(
    query: Mapping[str, str],
    name: str,
    *,
    min_len: int = 0,
    max_len: int = 2048,
    required: bool = False,
    pattern: re.Pattern[str] | None = None,
    expected: str | None = None,
) -> str | None:
    raw = raw_value(query, name)
    if raw is None:
        if required:
            raise AppError.missing_param(name)
        return None
    if not min_len <= len(raw) <= max_len:
        raise AppError.bad_param(name, f"{min_len}..{max_len} characters", raw)
    if pattern is not None and not pattern.fullmatch(raw):
        raise AppError.bad_param(name, expected or f"a value matching {pattern.pattern}", raw)
    return raw


def long_names(query: Mapping[str, str], aliases: Mapping[str, str]) -> dict[str, str]:
    """Short names renamed to their long ones; a short name loses to its long name, as in the
    readers above (``w=1&width=2`` is ``width=2``)."""
    named: dict[str, str] = {}
    for name, value in query.items():
        long = aliases.get(name)
        if long is None:
            named[name] = value
        elif long not in query:
            named[long] = value
    return named


def refuse_empty(query: Mapping[str, str], name: str, expected: str) -> None:
    """``?flip=`` is a question without an answer: a 400, not a silent ``false``."""
    raw = query.get(name)
    if raw is not None and not raw.strip():
        raise AppError.bad_param(name, expected, raw)


def read_strength(query: Mapping[str, str], name: str, low: int, high: int, on: int) -> int:
    """A switch with a strength: ``true`` is ``on``, ``false`` 0, else an integer low..high."""
    raw = query.get(name)
    if raw is None:
        return 0
    expected = f"true, false or an integer {low}..{high} (the bare name means true)"
    refuse_empty(query, name, expected)
    lowered = raw.strip().lower()
    if lowered in ("true", "yes", "on"):
        return on
    if lowered in ("false", "no", "off"):
        return 0
    try:
        value = read_int(query, name, low=low, high=high)
    except AppError:
        raise AppError.bad_param(name, expected, raw) from None
    assert value is not None
    return value


def read_number(query: Mapping[str, str], name: str, low: int, high: int) -> float | None:
    """A small decimal (two integer digits, as ``dpr`` takes it), its range checked on the value."""
    raw = query.get(name)
    if raw is None:
        return None
    text = raw.strip()
    if not _NUMBER.fullmatch(text) or not low <= float(text) <= high:
        raise AppError.bad_param(name, f"a number {low}..{high} (decimals allowed)", raw)
    return float(text)
