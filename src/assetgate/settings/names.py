"""The names assetgate reads: every field's variable, the old names still read for one release
(``RENAMED``), and the ``ASSETGATE_*`` variables no setting reads (a typo is otherwise silently
ignored)."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping

from assetgate.settings.fields import Settings

#: Old variable -> the one that replaced it; the old name is still read for one release (the
#: field's ``validation_alias``), and every entry point warns when it is set (``renamed_in_use``).
RENAMED: dict[str, str] = {
    "ASSETGATE_ORIGIN_CONNECT_TIMEOUT_S": "ASSETGATE_SOURCE_CONNECT_TIMEOUT_S",
    "ASSETGATE_ORIGIN_READ_TIMEOUT_S": "ASSETGATE_SOURCE_READ_TIMEOUT_S",
}


def variable(field: str) -> str:
    """The environment variable of a field: ``ASSETGATE_`` and its name in capitals."""
    return f"ASSETGATE_{field.upper()}"


def known_names() -> list[str]:
    """Every variable assetgate reads: the fields' names and the old names still read."""
    return [variable(name) for name in Settings.model_fields] + list(RENAMED)


def unknown_names(environ: Mapping[str, str] | None = None) -> list[tuple[str, str | None]]:
    """``ASSETGATE_*`` variables no setting reads, each with the closest known name, or None
    when none is close."""
    env = os.environ if environ is None else environ
    known = known_names()
    found = []
    for name in sorted(env):
        if name.startswith("ASSETGATE_") and name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
            found.append((name, close[0] if close else None))
    return found


def renamed_in_use(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The old setting names set in ``environ`` (default: the process's), with their new names."""
    env = os.environ if environ is None else environ
    return [(old, new) for old, new in RENAMED.items() if old in env]
