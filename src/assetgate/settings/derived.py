"""Defaults that are not constants: the directories under the user's cache, and the budgets
derived from the machine (``assetgate.machine``: memory and cores) for the settings an operator
did not set. An explicit value always wins; ``0`` for a pool's workers also means "derive"."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assetgate.machine import (
    helper_workers,
    render_budget,
    render_workers,
    usable_cores,
    usable_memory,
)

#: Derived from the memory the process may use when not set.
DERIVED_MEMORY = ("render_memory_bytes", "render_job_memory_bytes")
#: Process pools whose ``0`` (the documented default) means half the cores.
DERIVED_HELPERS = ("minify_workers", "esm_build_workers")


def cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")) / "assetgate"


def default_store() -> Path:
    return cache_home() / "packages"


def default_results() -> Path:
    return cache_home() / "results"


def default_sources() -> Path:
    return cache_home() / "sources"


def _workers(data: dict[str, Any]) -> int:
    """``ASSETGATE_WORKERS`` as given; an unusable value counts as one (its own error is
    reported by its field)."""
    try:
        return max(1, int(data.get("workers", 1)))
    except (TypeError, ValueError):
        return 1


def _unset(data: dict[str, Any], name: str, *, zero: bool = False) -> bool:
    value = data.get(name)
    return value is None or (zero and str(value).strip() == "0")


def with_derived(data: Any) -> Any:
    """``data`` (the raw values, before validation) with the budgets it leaves unset derived
    from the machine and ``ASSETGATE_WORKERS``."""
    if not isinstance(data, dict):
        return data
    derived: dict[str, Any] = {}
    workers = _workers(data)
    if any(_unset(data, name) for name in DERIVED_MEMORY):
        budget = render_budget(usable_memory(), workers)
        derived |= {name: budget for name in DERIVED_MEMORY if _unset(data, name)}
    if _unset(data, "render_workers") or any(_unset(data, n, zero=True) for n in DERIVED_HELPERS):
        cores = usable_cores()
        if _unset(data, "render_workers"):
            derived["render_workers"] = render_workers(cores, workers)
        for name in DERIVED_HELPERS:
            if _unset(data, name, zero=True):
                derived[name] = helper_workers(cores)
    return data | derived
