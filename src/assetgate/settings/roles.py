"""Who sets a setting and where it belongs: the marker every field of ``Settings`` carries.

An **operator** setting says where things are and who may do what — the document root and
sources, the store and caches on disk, Redis, the shared result store, keys and tokens, the
public URL, the registries and the CDNs' APIs: a deployment sets them, they have no default that
fits it. A **tuning** setting is a figure with a default that fits (limits, deadlines, budgets,
effort levels); the budgets among them are derived from the machine (``assetgate.machine``).

docs/configuration.md's tables are generated from these markers and the fields' docstrings
(``python -m assetgate.cli.settings_doc``): the operator table first, then one tuning table per
family, in ``FAMILIES`` order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Family = Literal[
    "server", "work", "optimizer", "sources", "caches", "packages", "convert", "whois", "purge"
]

#: Each family's heading, in the order the tuning tables appear.
FAMILIES: Final[dict[Family, str]] = {
    "server": "Server and connections",
    "work": "Work: threads, queues, deadlines, memory",
    "optimizer": "Optimizer (A)",
    "sources": "Sources and the shared result store",
    "caches": "Caches",
    "packages": "Package library (B)",
    "convert": "Conversion (C) and the shared rate limit",
    "whois": "Whois (D)",
    "purge": "Cache tags and purge",
}


@dataclass(frozen=True, slots=True)
class Role:
    """A field's marker (pydantic keeps it in ``FieldInfo.metadata``)."""

    family: Family
    operator: bool
    #: The default as the docs show it, when it is no constant (derived, a path, another
    #: setting's value); None: the default value itself.
    shown: str | None = None


def operator(family: Family, shown: str | None = None) -> Role:
    return Role(family, operator=True, shown=shown)


def tuning(family: Family, shown: str | None = None) -> Role:
    return Role(family, operator=False, shown=shown)


def role_of(metadata: list[object]) -> Role | None:
    """The marker among a field's metadata, or None."""
    return next((item for item in metadata if isinstance(item, Role)), None)
