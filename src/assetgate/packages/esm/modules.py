"""ES modules of pinned npm versions: built once, kept in the store beside the package.

``/npm/<pkg>@<version>[/<sub>]/+esm`` is the package's entry (or subpath export, or file) bundled
and minified by esbuild (``esm.bundler``), with every dependency, peer dependency and the package
itself external: each import is rewritten to ``/npm/<dep>@<exact>/+esm``, the exact version that
the package's range resolves to now, so that two modules importing ``react`` share one React.
The output is stored under the namespace ``esm`` of the index, keyed by name, version and
``<bundler version>/<subpath>``; a new esbuild, lexer or build script builds anew. Beside each
module its list of imported module URLs is kept, for import maps (``esm.importmap``).

One build per module however many requests arrive together (the ingest single flight in this
process, a ``flock`` across worker processes). A failure answers 502 naming the package and the
bundler's first error line, is remembered for a minute, and stores nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio.to_thread

from assetgate.errors import AppError
from assetgate.packages.address import is_package_name, is_version_spec
from assetgate.packages.esm.bundler import BuildFailed, BuildJob, Bundler
from assetgate.packages.ingest import Packages
from assetgate.packages.store import FileRow, Store, VersionKey

log = logging.getLogger("assetgate.packages")

DEPENDENCY_FIELDS: Final = ("optionalDependencies", "peerDependencies", "dependencies")
MAX_MANIFEST_BYTES: Final = 1024 * 1024
MAX_DEPENDENCIES: Final = 512


@dataclass(frozen=True, slots=True)
class Module:
    row: FileRow  # the built module in the store
    imports: tuple[str, ...]  # module URLs it imports ("/npm/<dep>@<exact>[/<sub>]/+esm")


def module_url(name: str, version: str, subpath: str) -> str:
    return f"/npm/{name}@{version}{'/' + subpath if subpath else ''}/+esm"


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
    def __init__(self, packages: Packages, bundler: Bundler | str) -> None:
        self.packages = packages
        self.store: Store = packages.store
        self.bundler = bundler

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
            raise AppError.upstream("the built module is not available, retry", status=503)
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

    async def _externals(self, name: str, version: str) -> dict[str, str]:
        manifest = await self._manifest(name, version)
        ranges = dependency_ranges(manifest)
        ranges.pop(name, None)

        async def pin(dep: str, spec: str) -> tuple[str, str] | None:
            try:
                return dep, await self.packages.resolve(dep, spec)
            except AppError as exc:
                # Left out: if the code imports it, the bundler names it in the 502.
                log.info("%s@%s: dependency %s@%s left out (%s)", name, version, dep, spec, exc)
                return None

        pinned = await asyncio.gather(*(pin(d, s) for d, s in ranges.items()))
        externals = {
            dep: f"/npm/{dep}@{exact}"
            for dep, exact in filter(None, pinned)
            if is_version_spec(exact)  # a registry's version goes into URLs: no odd characters
        }
        externals[name] = f"/npm/{name}@{version}"  # its own other entries: one instance
        return externals

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
        await self.packages.ensure_version(name, version)
        externals = await self._externals(name, version)
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
            with self._work_dir() as work:
                job = BuildJob(work, name, subpath, externals, work / "out.mjs")
                try:
                    imports = await self.packages.gate.run(_lay_out_and_build, bundler, job, files)
                except BuildFailed as exc:
                    where = f"{name}@{version}{'/' + subpath if subpath else ''}"
                    if exc.no_entry:
                        raise AppError.not_found(f"{where}: {exc.line}") from exc
                    log.warning("ES module build of %s failed: %s", where, exc.line)
                    raise AppError.upstream(
                        f"cannot build {where} as an ES module: {exc.line}"
                    ) from exc
                body = await anyio.to_thread.run_sync(job.out.read_bytes)
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
