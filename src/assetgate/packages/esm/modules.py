"""ES modules of pinned npm versions: built once, kept in the store beside the package.

``/npm/<pkg>@<version>[/<sub>]/+esm`` is the package's entry (or subpath export, or file) bundled
and minified by esbuild (``esm.bundler``), with every dependency, peer dependency and the package
itself external: each import is rewritten to ``/npm/<dep>@<exact>/+esm``, the exact version that
the package's range resolves to now, so that two modules importing ``react`` share one React.
The output is stored under the namespace ``esm`` of the index, keyed by name, version and
``<bundler version>/<subpath>``; a new esbuild, lexer or build script builds anew. Beside each
module its list of imported module URLs is kept, for import maps (``esm.importmap``).

Only the dependencies the module really imports are pinned: the build sees every declared name,
writes an import of one as ``/npm/<dep>@<token>…`` (a random token per build), and the names it
used are then resolved, at most ``RESOLVES_AT_ONCE`` at a time, and written into the module (512
declared dependencies never imported used to cost 512 registry documents). Every import URL of a
built module is checked to be a pinned module address (no ``..``, ``?``, ``#``, ``%``).

One build per module however many requests arrive together (the ingest single flight in this
process, a ``flock`` across worker processes); the build runs in the build pool (``esm.pool``)
and is stopped when nobody waits for it any more. A failure answers 502 naming the package and
the bundler's first error line, is remembered for a minute, and stores nothing. A build that
cost its whole deadline or memory is remembered for the package version (``COSTLY_TTL_S``):
its other subpaths answer the same at once instead of trying again, each for 20 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio.to_thread
from cachetools import TTLCache

from assetgate.cpu.workgate import WorkGate
from assetgate.errors import AppError, TimedOut, Unavailable
from assetgate.packages.address import (
    PackageAddress,
    is_package_name,
    is_version_spec,
    parse_address,
)
from assetgate.packages.esm.bundler import BuildFailed, BuildJob, Bundler
from assetgate.packages.ingest import Packages
from assetgate.packages.store import FileRow, Store, VersionKey
from assetgate.packages.versions import is_exact

log = logging.getLogger("assetgate.packages")

DEPENDENCY_FIELDS: Final = ("optionalDependencies", "peerDependencies", "dependencies")
MAX_MANIFEST_BYTES: Final = 1024 * 1024
MAX_DEPENDENCIES: Final = 4096  # declared names: only the imported ones are ever fetched
RESOLVES_AT_ONCE: Final = 8  # registry documents fetched at once for one build's imports
COSTLY_TTL_S: Final = 600.0  # a build past its deadline or memory, remembered per version
_UNSAFE_IN_URL: Final = frozenset("?#%\\")


@dataclass(frozen=True, slots=True)
class Module:
    row: FileRow  # the built module in the store
    imports: tuple[str, ...]  # module URLs it imports ("/npm/<dep>@<exact>[/<sub>]/+esm")


def module_url(name: str, version: str, subpath: str) -> str:
    return f"/npm/{name}@{version}{'/' + subpath if subpath else ''}/+esm"


def is_module_url(url: str, allowed: Iterable[str]) -> bool:
    """``url`` is ``/npm/<name>@<exact>[/<sub>]/+esm`` for a name in ``allowed``, written the
    one way ``module_url`` writes it: no dot segment, query, fragment or escape can make the
    browser load anything but that pinned module."""
    if any(c in _UNSAFE_IN_URL for c in url) or not url.startswith("/npm/"):
        return False
    address = parse_address(url.removeprefix("/npm/"))
    if not isinstance(address, PackageAddress) or address.module is None:
        return False
    return (
        address.name in allowed
        and is_exact(address.spec)
        and module_url(address.name, address.spec, address.module) == url
    )


def dependency_ranges(manifest: Mapping[str, object]) -> dict[str, str]:
    """Every dependency a module may import, with its range; ``dependencies`` wins over a peer's
    range for the same name (it is what npm installs)."""
    ranges: dict[str, str] = {}
    for field in DEPENDENCY_FIELDS:
        listed = manifest.get(field)
        if isinstance(listed, Mapping):
            ranges.update(
                {
                    k: v.strip()
                    for k, v in listed.items()
                    # The manifest is the package author's: only names and ranges npm accepts.
                    if isinstance(k, str)
                    and isinstance(v, str)
                    and is_package_name(k)
                    and (not v.strip() or is_version_spec(v.strip()))
                }
            )
    return dict(list(ranges.items())[:MAX_DEPENDENCIES])


class Modules:
    def __init__(self, packages: Packages, bundler: Bundler | str, builds: WorkGate) -> None:
        self.packages = packages
        self.store: Store = packages.store
        self.bundler = bundler
        self.builds = builds  # the build pool (``esm.pool``)
        # (name, version) -> the error of a build that took its whole deadline or memory.
        self._costly: TTLCache[tuple[str, str], AppError] = TTLCache(4096, COSTLY_TTL_S)

    def _bundler(self) -> Bundler:
        if isinstance(self.bundler, str):
            raise AppError.not_implemented(f"ES module builds are unavailable: {self.bundler}")
        return self.bundler

    def _paths(self, subpath: str) -> tuple[str, str]:
        stem = f"{self._bundler().version}/{subpath or '.'}"
        return stem + ".mjs", stem + ".imports.json"

    async def row(self, name: str, version: str, subpath: str) -> FileRow:
        """The built module's row: from the index's memory on the warm path (a module row is
        only ever added after its import list), built on first use."""
        found = self.store.file("esm", name, version, self._paths(subpath)[0])
        if found is not None:
            return found
        return (await self.ensure(name, version, subpath)).row

    async def ensure(self, name: str, version: str, subpath: str) -> Module:
        """The built module (building it on first use); ``version`` must be exact."""
        found = await self._present(name, version, subpath)
        if found is not None:
            return found
        key = ("esm", name, version, subpath, self._bundler().version)
        await self.packages.once(key, lambda: self._build(name, version, subpath))
        found = await self._present(name, version, subpath)
        if found is None:
            raise Unavailable("the built module is not available, retry")
        return found

    async def _present(self, name: str, version: str, subpath: str) -> Module | None:
        module_path, imports_path = self._paths(subpath)
        row = self.store.file("esm", name, version, module_path)
        listed = self.store.file("esm", name, version, imports_path)
        if row is None or listed is None:
            return None
        blob = self.store.blob_path(listed.blob)
        if blob is None or self.store.blob_path(row.blob) is None:
            return None
        try:
            doc = json.loads(await anyio.to_thread.run_sync(blob.read_bytes))
        except (OSError, ValueError):
            return None
        imports = tuple(i for i in doc.get("imports", ()) if isinstance(i, str))
        return Module(row, imports)

    async def _pin(
        self, where: str, ranges: Mapping[str, str], used: Iterable[str]
    ) -> dict[str, str]:
        """The exact version of each dependency the module imports (``used``), a few at a time;
        a 502 naming the first that cannot be pinned."""
        gate = asyncio.Semaphore(RESOLVES_AT_ONCE)

        async def pin(dep: str) -> tuple[str, str]:
            spec = ranges[dep]
            async with gate:
                try:
                    exact = await self.packages.resolve(dep, spec)
                except AppError as exc:
                    raise AppError.upstream(
                        f"cannot build {where} as an ES module: dependency {dep}@{spec or '*'}:"
                        f" {exc.message}"
                    ) from exc
            if not is_exact(exact):  # a registry's version goes into URLs: no odd characters
                raise AppError.upstream(f"cannot build {where}: {dep} has no usable version")
            return dep, exact

        return dict(await asyncio.gather(*(pin(dep) for dep in sorted(set(used)))))

    async def manifest(self, name: str, version: str) -> Mapping[str, object]:
        """The stored ``package.json`` of an ingested version ({} when none or unreadable)."""
        return await self._manifest(name, version)

    async def _manifest(self, name: str, version: str) -> Mapping[str, object]:
        row = self.store.file("npm", name, version, "package.json")
        blob = None if row is None else self.store.blob_path(row.blob)
        if row is None or blob is None or row.size > MAX_MANIFEST_BYTES:
            return {}
        try:
            doc = json.loads(await anyio.to_thread.run_sync(blob.read_bytes))
        except (OSError, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}

    async def _build(self, name: str, version: str, subpath: str) -> None:
        bundler = self._bundler()
        remembered = self._costly.get((name, version))
        if remembered is not None:
            raise remembered.again()
        await self.packages.ensure_version(name, version)
        ranges = dependency_ranges(await self._manifest(name, version))
        ranges.pop(name, None)
        key: VersionKey = ("esm", name, version)
        lock = self.store.process_lock(("esm", name, f"{version}/{subpath}"))
        await anyio.to_thread.run_sync(lock.__enter__)
        try:
            if await self._present(name, version, subpath) is not None:
                return  # another worker process built it while we waited
            files = {
                row.path: path
                for row in self.store.files("npm", name, version)
                if (path := self.store.blob_path(row.blob)) is not None
            }
            started = time.perf_counter()
            where = f"{name}@{version}{'/' + subpath if subpath else ''}"
            pending = "pending-" + secrets.token_hex(16)
            with self._work_dir() as work:
                job = BuildJob(
                    work,
                    name,
                    subpath,
                    {name: f"/npm/{name}@{version}"},  # its own other entries: one instance
                    work / "out.mjs",
                    tuple(ranges),
                    pending,
                )
                imports = await self._run(bundler, job, files, (name, version), where)
                body = await anyio.to_thread.run_sync(job.out.read_bytes)
            used = {dep for url in imports if (dep := _pending_dep(url, pending)) in ranges}
            pins = await self._pin(where, ranges, used)
            body, imports = _pinned(body, imports, pending, pins)
            if not all(is_module_url(url, {name, *pins}) for url in imports):
                raise AppError.upstream(f"cannot build {where}: an import is no pinned module")
            await anyio.to_thread.run_sync(self._keep, key, subpath, body, imports)
            log.info(
                "ES module %s built in %.0f ms (%d bytes)",
                module_url(name, version, subpath),
                1000 * (time.perf_counter() - started),
                len(body),
            )
        finally:
            lock.__exit__(None, None, None)
        await anyio.to_thread.run_sync(self.store.evict, key)

    async def _run(
        self,
        bundler: Bundler,
        job: BuildJob,
        files: Mapping[str, Path],
        package: tuple[str, str],
        where: str,
    ) -> list[str]:
        """One bundler run in the build pool; a run that cost its whole deadline or memory is
        remembered for the package version (``COSTLY_TTL_S``)."""
        try:
            return await self.builds.run(_lay_out_and_build, bundler, job, files)
        except BuildFailed as exc:
            if exc.no_entry:
                raise AppError.not_found(f"{where}: {exc.line}") from exc
            log.warning("ES module build of %s failed: %s", where, exc.line)
            error = AppError.upstream(f"cannot build {where} as an ES module: {exc.line}")
            if exc.costly:
                self._costly[package] = error
            raise error from exc
        except AppError as exc:
            if isinstance(exc, TimedOut):  # past ASSETGATE_ESM_BUILD_TIMEOUT_S (not the pool's)
                self._costly[package] = exc
            raise

    def _keep(self, key: VersionKey, subpath: str, body: bytes, imports: list[str]) -> None:
        module_path, imports_path = self._paths(subpath)
        listing = json.dumps({"imports": imports}, separators=(",", ":")).encode()
        sink = self.store.new_sink()
        try:
            # The import list first: a module row is only ever seen with its list present.
            self.store.add_file(key, imports_path, sink.put_bytes(listing, ""))
            self.store.add_file(key, module_path, sink.put_bytes(body, ".mjs"))
        except BaseException:
            sink.discard(set(sink.created))
            raise

    @contextlib.contextmanager
    def _work_dir(self) -> Iterator[Path]:
        work = Path(tempfile.mkdtemp(dir=self.store.tmp_dir, prefix="esm-"))
        try:
            yield work
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _pending_dep(url: str, pending: str) -> str | None:
    """The dependency an import stands for until it is pinned (``/npm/<dep>@<pending>…``)."""
    head, found, _ = url.partition(f"@{pending}")
    return head.removeprefix("/npm/") if found and head.startswith("/npm/") else None


def _pinned(
    body: bytes, imports: list[str], pending: str, pins: Mapping[str, str]
) -> tuple[bytes, list[str]]:
    """The module and its import list with every dependency's token replaced by its version."""
    for dep, exact in pins.items():
        body = body.replace(f"/npm/{dep}@{pending}".encode(), f"/npm/{dep}@{exact}".encode())
        imports = [i.replace(f"/npm/{dep}@{pending}", f"/npm/{dep}@{exact}") for i in imports]
    if pending.encode() in body or any(pending in i for i in imports):
        raise AppError.upstream("the bundler left an import unpinned")
    return body, sorted(set(imports))


def _lay_out_and_build(bundler: Bundler, job: BuildJob, files: Mapping[str, Path]) -> list[str]:
    """The package's files as ``node_modules/<name>/`` (hard links to the blobs: the names come
    from the index, each already a checked logical path), then one bundler run."""
    root = job.work / "node_modules" / job.name
    for logical, blob in files.items():
        target = root / logical
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(blob, target)
        except OSError:
            shutil.copyfile(blob, target)
    return bundler.build(job)
