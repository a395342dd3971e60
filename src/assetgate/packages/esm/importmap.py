"""``/npm/importmap?pkg=react@18.3.1&pkg=react-dom@18.3.1/client``: an import map to paste.

Each ``pkg`` is ``<name>[@<version, range or tag>][/<subpath>]``; ranges resolve to one exact
version. Every module the requested ones import, transitively, is built (``esm.modules``) and
listed: under ``imports`` by its bare specifier (``react``, ``react-dom/client``) when one version
of it is in the graph; where several versions of a specifier are, ``imports`` keeps the one a
request named (else the highest) and ``scopes`` maps the others for the packages that use them.
``integrity`` holds the sha512 SRI of every module URL, so the browser checks each one it loads.
The modules import each other by pinned URL already; the map makes bare names work in the page.
Each listed package's exported subpaths (``react-dom/client``, ``preact/hooks``) are in the map
too, where they build. A module importing a package ``ASSETGATE_PACKAGES_ALLOW``/``_DENY`` refuses
is a 404 naming the package and the setting.

Bounded before the work: each level of the graph is counted before it is built (at most
``MAX_MODULES`` modules, ``MAX_DEPTH`` levels), and the route gives the whole map a deadline
(``ASSETGATE_IMPORTMAP_TIMEOUT_S``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from semantic_version import Version

from assetgate.errors import AppError
from assetgate.packages.address import PackageAddress, parse_address
from assetgate.packages.esm.exports import exported_subpaths
from assetgate.packages.esm.modules import Module, Modules, module_url
from assetgate.packages.integrity import make_sri
from assetgate.packages.policy import OPEN, ServePolicy

log = logging.getLogger("assetgate.packages")

MAX_REQUESTED: Final = 32
MAX_MODULES: Final = 400
MAX_DEPTH: Final = 32  # import levels below the requested modules
BUILDS_AT_ONCE: Final = 4


@dataclass(frozen=True, slots=True)
class Wanted:
    name: str
    spec: str
    subpath: str

    @property
    def specifier(self) -> str:
        return f"{self.name}/{self.subpath}" if self.subpath else self.name


@dataclass(frozen=True, slots=True)
class ModuleRef:
    name: str
    version: str
    subpath: str

    @property
    def specifier(self) -> str:
        return f"{self.name}/{self.subpath}" if self.subpath else self.name

    @property
    def url(self) -> str:
        return module_url(self.name, self.version, self.subpath)


def parse_wanted(values: Sequence[str]) -> list[Wanted]:
    """The ``pkg`` parameters; 400 naming ``pkg`` for a missing, malformed or excess one."""
    if not values:
        raise AppError.missing_param("pkg")
    if len(values) > MAX_REQUESTED:
        raise AppError.bad_param("pkg", f"at most {MAX_REQUESTED} packages")
    wanted: list[Wanted] = []
    for value in values:
        address = None if "%" in value else parse_address(value.strip())
        if not isinstance(address, PackageAddress) or address.directory:
            raise AppError.bad_param("pkg", "<name>[@<version>][/<subpath>]", value)
        subpath = (address.file or "").removesuffix("/+esm").removesuffix("+esm")
        wanted.append(Wanted(address.name, address.spec, subpath))
    return wanted


def parse_module_url(url: str) -> ModuleRef | None:
    """``/npm/<name>@<exact>[/<sub>]/+esm`` (as the bundler wrote it) -> its parts."""
    if not url.startswith("/npm/") or not url.endswith("/+esm"):
        return None
    address = parse_address(url.removeprefix("/npm/"))
    if not isinstance(address, PackageAddress) or address.file is None:
        return None
    return ModuleRef(address.name, address.spec, address.file.removesuffix("+esm").rstrip("/"))


def _newest(versions: Iterable[str]) -> str:
    def order(text: str) -> tuple[int, Version | str]:
        try:
            return (1, Version(text))
        except ValueError:
            return (0, text)

    return max(versions, key=order)


def make_import_map(
    base: str,
    top: Sequence[ModuleRef],
    graph: dict[ModuleRef, Module],
    users: dict[ModuleRef, set[ModuleRef]],
) -> dict[str, object]:
    """The map from the resolved graph (pure). ``users``: who imports each module."""
    by_specifier: dict[str, dict[str, ModuleRef]] = {}
    for ref in graph:
        by_specifier.setdefault(ref.specifier, {})[ref.version] = ref
    chosen = {ref.specifier: ref for ref in top}
    imports: dict[str, str] = {}
    scopes: dict[str, dict[str, str]] = {}
    for specifier in sorted(by_specifier):
        versions = by_specifier[specifier]
        main = chosen.get(specifier) or versions[_newest(versions)]
        imports[specifier] = base + main.url
        for ref in versions.values():
            if ref == main:
                continue
            for user in sorted(users.get(ref, ()), key=lambda r: r.url):
                scope = f"{base}/npm/{user.name}@{user.version}/"
                scopes.setdefault(scope, {})[specifier] = base + ref.url
    integrity = {
        base + ref.url: make_sri("sha512", bytes.fromhex(module.row.sha512))
        for ref, module in sorted(graph.items(), key=lambda item: item[0].url)
    }
    body: dict[str, object] = {"imports": imports}
    if scopes:
        body["scopes"] = scopes
    body["integrity"] = integrity
    return body


Graph = dict[ModuleRef, Module]
Users = dict[ModuleRef, set[ModuleRef]]


async def resolve_graph(
    modules: Modules, wanted: Sequence[Wanted], policy: ServePolicy = OPEN
) -> tuple[list[ModuleRef], Graph, Users]:
    """Pin every request, then build and follow the modules' imports, a level at a time; then
    add each listed package's exported subpaths (``esm.exports``), each with what it imports,
    where it builds and stays within the limits (a subpath that does not is left out)."""
    versions = await asyncio.gather(*(modules.packages.resolve(w.name, w.spec) for w in wanted))
    top = [ModuleRef(w.name, v, w.subpath) for w, v in zip(wanted, versions, strict=True)]
    graph: Graph = {}
    users: Users = {}
    gate = asyncio.Semaphore(BUILDS_AT_ONCE)
    await _walk(modules, list(dict.fromkeys(top)), graph, users, gate, policy)
    extras = [ref for ref in await _exported(modules, top) if ref not in graph]
    walked = await asyncio.gather(
        *(_try_walk(modules, ref, graph, users, gate, policy) for ref in extras)
    )
    for found in walked:
        if found is None or len(graph) + len(found[0].keys() - graph.keys()) > MAX_MODULES:
            continue
        graph.update(found[0])
        for ref, by in found[1].items():
            users.setdefault(ref, set()).update(by)
    return top, graph, users


async def _exported(modules: Modules, top: Sequence[ModuleRef]) -> list[ModuleRef]:
    """The exported subpaths of each listed package version, as module references."""
    found: list[ModuleRef] = []
    for name, version in dict.fromkeys((ref.name, ref.version) for ref in top):
        await modules.packages.ensure_version(name, version)
        manifest = await modules.manifest(name, version)
        found.extend(ModuleRef(name, version, sub) for sub in exported_subpaths(manifest))
    return found


async def _try_walk(
    modules: Modules,
    ref: ModuleRef,
    graph: Graph,
    users: Users,
    gate: asyncio.Semaphore,
    policy: ServePolicy,
) -> tuple[Graph, Users] | None:
    """``ref`` and what it imports on copies of the graph; None when any of it fails."""
    mine, their = dict(graph), {k: set(v) for k, v in users.items()}
    try:
        await _walk(modules, [ref], mine, their, gate, policy)
    except AppError as exc:
        log.info("import map: %s left out (%s)", ref.specifier, exc.message)
        return None
    return mine, their


async def _walk(
    modules: Modules,
    level: list[ModuleRef],
    graph: Graph,
    users: Users,
    gate: asyncio.Semaphore,
    policy: ServePolicy,
) -> None:
    async def build(ref: ModuleRef) -> Module:
        async with gate:
            return await modules.ensure(ref.name, ref.version, ref.subpath)

    depth = 0
    while level:
        # Counted before the level is built: a graph too wide or too deep is refused before its
        # builds, not after them (a chain of 450 modules once ran 100 s of builds first).
        if len(graph) + len(level) > MAX_MODULES:
            expected = f"packages whose import graph has at most {MAX_MODULES} modules"
            raise AppError.bad_param("pkg", expected)
        if depth > MAX_DEPTH:
            expected = f"packages whose imports are at most {MAX_DEPTH} levels deep"
            raise AppError.bad_param("pkg", expected)
        depth += 1
        built = await asyncio.gather(*(build(ref) for ref in level))
        following: list[ModuleRef] = []
        for ref, module in zip(level, built, strict=True):
            graph[ref] = module
            for url in module.imports:
                dep = parse_module_url(url)
                if dep is None:
                    continue
                setting = policy.refusal(dep.name)
                if setting is not None:
                    raise AppError.not_found(
                        f"{ref.name}@{ref.version} imports {dep.name}, which is not served"
                        f" here ({setting})"
                    )
                users.setdefault(dep, set()).add(ref)
                if dep not in graph and dep not in following:
                    following.append(dep)
        level = [ref for ref in following if ref not in graph]
