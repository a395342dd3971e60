"""A bad setting becomes one line naming the ``ASSETGATE_*`` variable, never a traceback."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from assetgate.settings import Settings

ENV_PREFIX = "ASSETGATE_"
#: Settings whose messages name the value themselves (a whole path), or whose value is JSON.
SELF_NAMED = frozenset({"watermarks", "whois_servers", "rdap_bootstrap", "presets", "sources"})


def load_settings(overrides: Mapping[str, Any], flags: Mapping[str, str]) -> Settings:
    """``Settings`` from the environment and ``overrides``; raises ``SystemExit(2)`` with a message.

    ``flags`` maps a field to the command-line flag that set it, so the message names what the
    user actually typed.
    """
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SystemExit(describe(exc, overrides, flags)) from None


def describe(
    exc: ValidationError, overrides: Mapping[str, object], flags: Mapping[str, str]
) -> str:
    lines = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else "?"
        name = flags.get(field) if field in overrides else None
        name = name or f"{ENV_PREFIX}{field.upper()}"
        got = error.get("input")
        secret = field in Settings.model_fields and not Settings.model_fields[field].repr
        quiet = isinstance(got, dict) or secret or field in SELF_NAMED
        shown = "" if quiet else f", got {_shown(field, got)!r}"
        lines.append(f"assetgate: {name}: {_expected(error)}{shown}")
    return "\n".join(lines)


def _shown(field: str, got: object) -> str:
    """The value as given: a path whole (a cut path names another one), anything else cut at
    80 characters."""
    text = str(got)
    known = Settings.model_fields.get(field)
    if known is not None and "Path" in str(known.annotation):
        return text
    return text if len(text) <= 80 else text[:79] + "…"


def _expected(error: Mapping[str, object]) -> str:
    message = str(error.get("msg", "invalid value"))
    message = message.removeprefix("Value error, ")
    return message[:1].lower() + message[1:]
