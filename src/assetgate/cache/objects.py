"""S3-compatible object storage through obstore, and the result store: a tier every node shares.

Why obstore (docs/sources.md has the comparison): it is async-native (no thread per request, as
``boto3`` would need), streams without copying through Python (Rust ``object_store``, the crate
behind DataFusion and Arrow), supports conditional GETs, and is a single wheel without the
botocore version pins ``aiobotocore`` carries. The credentials come from the standard AWS
variables (obstore reads them) and, when those are absent, from the shared credentials and config
files (``AWS_PROFILE``, read here: object_store does not read them).

``ObjectTier`` is the lowest tier of ``Cache``: an entry is the same packed form as on disk (magic,
length, BLAKE2b), sealed with a keyed MAC (``seal``): BLAKE2b keyed with
``ASSETGATE_RESULT_STORE_KEY``, the secret every node shares, over the entry's name and bytes.
Anyone with write access to the bucket could forge the unkeyed form, and another node served the
forgery as a hit under the real ETag; an entry that fails the MAC (forged, damaged,
copied under another name, written with another key) is a miss, with one warning per name. A
read asks for at most ``max_entry_bytes`` (the largest entry a render can produce,
``largest_entry``): a bigger object is a miss without being read whole, and a bigger entry is
never written. A read waits at most ``READ_TIMEOUT_S``;
a write is a background task that never delays an answer. Any failure marks the store down for
``RETRY_AFTER_S`` (nobody waits for it meanwhile), logged once when it goes and once when it is
back: the store down means "render here", never an error.
"""

from __future__ import annotations

import asyncio
import configparser
import hashlib
import hmac
import logging
import os
from datetime import timedelta
from pathlib import Path
from typing import Final

import anyio.to_thread
import obstore
from cachetools import LRUCache
from obstore.exceptions import GenericError
from obstore.store import S3Store
from prometheus_client import Counter

from assetgate.breaker import Breaker
from assetgate.settings import Settings

log = logging.getLogger("assetgate.cache")

READ_TIMEOUT_S: Final = 2.0
WRITE_TIMEOUT_S: Final = 30.0
RETRY_AFTER_S: Final = 5.0
MAX_PENDING_WRITES: Final = 64
OK: Final = "ok"
# A read is one ranged GET past any object's end, answered with the whole object in one await:
# ``get_async`` then ``bytes_async`` is two hops between the event loop and obstore's runtime
# (about 0.15 ms of a 2 ms read, the most of node B's answer: docs/sources.md). A store that
# ignores the range (a 200) gets plain GETs from then on (``ObjectTier._read``).
WHOLE: Final = 1 << 50
SEAL: Final = b"AGS1"  # an entry sealed with the shared key
MAC_BYTES: Final = 32
OVERHEAD: Final = len(SEAL) + MAC_BYTES
#: Entries up to this size are sealed and checked on the event loop (~0.1 ms); larger in a thread.
ON_LOOP_BYTES: Final = 1024 * 1024
#: Names a bad entry was warned about (one warning each; a flood of forgeries stays bounded).
WARNED_NAMES: Final = 1024


def largest_entry(settings: Settings) -> int:
    """The largest result-store entry a render can produce: its output pixels (the input limit,
    or the upscale limit when that is larger) at 4 bytes each — 8-bit RGBA as it is, more than
    any encoder's output of real images — plus 1 MiB for the entry's header and description."""
    return max(settings.max_input_pixels, settings.max_upscale_pixels) * 4 + (1 << 20)


def mac_key(secret: str) -> bytes:
    """The 64-byte BLAKE2b key made from ``ASSETGATE_RESULT_STORE_KEY``."""
    return hashlib.blake2b(secret.encode(), digest_size=64, person=b"assetgate-rs").digest()


def _mac(key: bytes, name: str, data: bytes | memoryview) -> bytes:
    digest = hashlib.blake2b(key=key, digest_size=MAC_BYTES, person=b"assetgate-rs")
    digest.update(name.encode())
    digest.update(b"\0")
    digest.update(data)
    return digest.digest()


def seal(key: bytes, name: str, data: bytes) -> bytes:
    """``data`` as stored under ``name``: the mark, the MAC of name and data, then the data."""
    return SEAL + _mac(key, name, data) + data


def unseal(key: bytes, name: str, stored: bytes | memoryview) -> bytes | None:
    """The data ``seal`` stored under ``name``, or None when the MAC does not hold."""
    view = memoryview(stored)
    if len(view) < OVERHEAD or bytes(view[: len(SEAL)]) != SEAL:
        return None
    data = view[OVERHEAD:]
    if not hmac.compare_digest(bytes(view[len(SEAL) : OVERHEAD]), _mac(key, name, data)):
        return None
    return bytes(data)


def file_credentials() -> dict[str, str]:
    """Key, secret, token and region from the shared AWS files, when the variables hold none."""
    if os.environ.get("AWS_ACCESS_KEY_ID"):
        return {}
    profile = os.environ.get("AWS_PROFILE") or "default"
    home = Path.home() / ".aws"
    found: dict[str, str] = {}
    credentials = configparser.ConfigParser()
    credentials.read(os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or home / "credentials")
    if credentials.has_section(profile):
        section = credentials[profile]
        for option, key in (
            ("aws_access_key_id", "access_key_id"),
            ("aws_secret_access_key", "secret_access_key"),
            ("aws_session_token", "token"),
        ):
            if section.get(option):
                found[key] = section[option]
    config = configparser.ConfigParser()
    config.read(os.environ.get("AWS_CONFIG_FILE") or home / "config")
    named = profile if profile == "default" else f"profile {profile}"
    region_set = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region_set and config.has_section(named) and config[named].get("region"):
        found["region"] = config[named]["region"]
    return found


def s3_store(bucket: str, prefix: str, settings: Settings) -> S3Store:
    """A store for ``bucket``/``prefix``; ``endpoint`` None means ``AWS_ENDPOINT_URL`` or AWS.

    One retry (a dropped keep-alive connection), bounded by ``timeout_s``: a dead store must cost
    a request seconds, not object_store's default three minutes of backoff. The endpoint, the
    addressing style and the deadlines are the settings' (one place for sources, the result store
    and ``assetgate optimize s3://…``)."""
    endpoint = settings.s3_endpoint_url or os.environ.get("AWS_ENDPOINT_URL") or None
    path_style = settings.path_style(endpoint)
    connect_timeout_s = settings.source_connect_timeout_s
    timeout_s = settings.source_read_timeout_s
    options: dict[str, object] = dict(file_credentials())
    if endpoint is not None:
        options["endpoint"] = endpoint
    if not (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")):
        options.setdefault("region", "us-east-1")
    return S3Store(
        bucket,
        prefix=prefix or None,
        virtual_hosted_style_request=not path_style,
        client_options={
            "connect_timeout": timedelta(seconds=connect_timeout_s),
            "timeout": timedelta(seconds=timeout_s),
            "allow_http": bool(endpoint and endpoint.startswith("http://")),
        },
        retry_config={
            "max_retries": 1,
            "retry_timeout": timedelta(seconds=timeout_s),
            "backoff": {
                "init_backoff": timedelta(milliseconds=50),
                "max_backoff": timedelta(milliseconds=500),
                "base": 2,
            },
        },
        **options,  # type: ignore[arg-type]
    )


def _unsatisfiable(exc: Exception) -> bool:
    """The store's 416 to the ranged read of an empty object (object_store has no type for it)."""
    return isinstance(exc, GenericError) and "416 Range Not Satisfiable" in str(exc)


def _range_ignored(exc: Exception) -> bool:
    """The store answered the ranged read without a 206 for it (HTTP lets a server ignore a
    Range, and a proxy in front of a store may): object_store refuses the answer."""
    text = str(exc)
    return isinstance(exc, GenericError) and (
        "non-partial response" in text or "Content-Range" in text or "UnexpectedRange" in text
    )


class ObjectTier:
    """The shared result store (``ASSETGATE_RESULT_STORE``) as a cache tier."""

    def __init__(
        self,
        store: S3Store,
        *,
        key: bytes,
        max_entry_bytes: int,
        results: Counter | None = None,
        retry_after_s: float = RETRY_AFTER_S,
    ) -> None:
        self.store = store
        self._key = key  # mac_key(ASSETGATE_RESULT_STORE_KEY)
        self.max_entry_bytes = max_entry_bytes
        self._warned: LRUCache[str, bool] = LRUCache(maxsize=WARNED_NAMES)
        self._results = results  # assetgate_result_store_requests{result}
        self.breaker = Breaker(cooldown_s=retry_after_s, on_open=_went_down, on_close=_came_back)
        self._writes: set[asyncio.Task[None]] = set()
        self._ranged = True  # False once the store ignored a ranged read: plain GETs from then on

    @property
    def available(self) -> bool:
        """Not known to be down (a prefetch asks before it starts a read)."""
        return self.breaker.would_allow

    @property
    def state(self) -> str:
        return "down (rendering locally)" if self.breaker.is_open else OK

    async def get(self, key: str, *, counted: bool = True) -> bytes | None:
        """The object's bytes, or None; ``counted``: in ``assetgate_result_store_requests``
        (the results are; the mounts' fingerprint index is not)."""
        if not self.breaker.allows():
            if counted:
                self._count("skipped")
            return None
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                data = await self._read(key)
        except FileNotFoundError:
            self.breaker.succeeded()
            if counted:
                self._count("miss")
            return None
        except Exception as exc:  # any client, network or store error is a miss
            if _unsatisfiable(exc):  # an empty object: never an entry, the store is fine
                self.breaker.succeeded()
                if counted:
                    self._count("miss")
                return None
            self.breaker.failed(exc)
            if counted:
                self._count("error")
            return None
        self.breaker.succeeded()
        opened = None if data is None else await self._unseal(key, data)
        if opened is None:
            self._bad(key)
            if counted:
                self._count("invalid")
            return None
        if counted:
            self._count("hit")
        return opened

    async def _read(self, key: str) -> bytes | memoryview | None:
        """The stored object, or None when it is over the largest entry (not read whole)."""
        most = self.max_entry_bytes + OVERHEAD
        if self._ranged:
            try:
                found = await obstore.get_range_async(self.store, key, start=0, end=most + 1)
            except GenericError as exc:
                if not _range_ignored(exc):
                    raise
                self._ranged = False
                log.warning("result store ignores ranged reads; reading whole objects")
            else:
                view = memoryview(found)
                return None if len(view) > most else view
        whole = await obstore.get_async(self.store, key)
        if whole.meta["size"] > most:
            return None  # the body is never asked for
        return memoryview(await whole.bytes_async())

    async def _unseal(self, key: str, data: bytes | memoryview) -> bytes | None:
        if len(data) <= ON_LOOP_BYTES:
            return unseal(self._key, key, data)
        return await anyio.to_thread.run_sync(unseal, self._key, key, data)

    def _bad(self, key: str) -> None:
        """One warning per name: an object under a result key that is not our entry."""
        if key not in self._warned:
            self._warned[key] = True
            log.warning(
                "result store entry %s is over %d bytes or fails its MAC (forged, damaged, "
                "or written with another ASSETGATE_RESULT_STORE_KEY); treated as a miss",
                key[:120],
                self.max_entry_bytes,
            )

    async def delete(self, keys: list[str]) -> int:
        """Delete the objects ``keys`` (a purge): how many were there. Raises when the store
        cannot answer (a purge must say so, not claim it deleted nothing); absent ones are fine."""
        deleted = 0
        for key in keys:
            async with asyncio.timeout(WRITE_TIMEOUT_S):
                try:
                    await obstore.head_async(self.store, key)
                except FileNotFoundError:
                    continue
                await obstore.delete_async(self.store, key)
            deleted += 1
        return deleted

    def put_later(self, key: str, data: bytes) -> asyncio.Task[None] | None:
        """Write in the background; dropped when the store is down, too many writes wait, or
        the entry is over ``max_entry_bytes`` (no node would read it)."""
        if (
            len(self._writes) >= MAX_PENDING_WRITES
            or len(data) > self.max_entry_bytes
            or not self.breaker.allows()
        ):
            return None
        task = asyncio.get_running_loop().create_task(self._put(key, data))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return task

    async def _put(self, key: str, data: bytes) -> None:
        if len(data) <= ON_LOOP_BYTES:
            sealed = seal(self._key, key, data)
        else:
            sealed = await anyio.to_thread.run_sync(seal, self._key, key, data)
        try:
            async with asyncio.timeout(WRITE_TIMEOUT_S):
                await obstore.put_async(self.store, key, sealed)
        except Exception as exc:
            self.breaker.failed(exc)
            return
        self.breaker.succeeded()

    async def check(self) -> str:
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                await obstore.head_async(self.store, ".assetgate-readyz")
        except FileNotFoundError:
            return OK
        except Exception as exc:
            return f"unreachable ({type(exc).__name__})"
        return OK

    async def aclose(self) -> None:
        """Let the writes in flight finish (bounded): a node shutting down shares what it made."""
        if self._writes:
            await asyncio.wait(set(self._writes), timeout=5.0)
        for task in list(self._writes):
            task.cancel()

    def _count(self, result: str) -> None:
        if self._results is not None:
            self._results.labels(result=result).inc()


def _went_down(exc: BaseException | None) -> None:
    # The type only: obstore's messages hold the endpoint and the signed request.
    log.warning("result store unreachable (%s); rendering locally", type(exc).__name__)


def _came_back(_down_for_s: float) -> None:
    log.warning("result store reachable again; results shared")
