"""S3-compatible object storage through obstore, and the result store: a tier every node shares.

Why obstore (docs/sources.md has the comparison): it is async-native (no thread per request, as
``boto3`` would need), streams without copying through Python (Rust ``object_store``, the crate
behind DataFusion and Arrow), supports conditional GETs, and is a single wheel without the
botocore version pins ``aiobotocore`` carries. The credentials come from the standard AWS
variables (obstore reads them) and, when those are absent, from the shared credentials and config
files (``AWS_PROFILE``, read here: object_store does not read them).

``ObjectTier`` is the lowest tier of ``Cache``: an entry is the same packed form as on disk (magic,
length, BLAKE2b), so a short or damaged object is a miss. A read waits at most ``READ_TIMEOUT_S``;
a write is a background task that never delays an answer. Any failure marks the store down for
``RETRY_AFTER_S`` (nobody waits for it meanwhile), logged once when it goes and once when it is
back: the store down means "render here", never an error.
"""

from __future__ import annotations

import asyncio
import configparser
import logging
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Final

import obstore
from obstore.exceptions import GenericError
from obstore.store import S3Store
from prometheus_client import Counter

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
        results: Counter | None = None,
        retry_after_s: float = RETRY_AFTER_S,
    ) -> None:
        self.store = store
        self.retry_after_s = retry_after_s
        self._results = results  # assetgate_result_store_requests{result}
        self._down_until = 0.0
        self._down = False
        self._writes: set[asyncio.Task[None]] = set()
        self._ranged = True  # False once the store ignored a ranged read: plain GETs from then on

    @property
    def available(self) -> bool:
        return time.monotonic() >= self._down_until

    @property
    def state(self) -> str:
        return "down (rendering locally)" if self._down else OK

    async def get(self, key: str, *, counted: bool = True) -> bytes | None:
        """The object's bytes, or None; ``counted``: in ``assetgate_result_store_requests``
        (the results are; the mounts' fingerprint index is not)."""
        if not self.available:
            if counted:
                self._count("skipped")
            return None
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                data = await self._read(key)
        except FileNotFoundError:
            self._up()
            if counted:
                self._count("miss")
            return None
        except Exception as exc:  # any client, network or store error is a miss
            if _unsatisfiable(exc):  # an empty object: never an entry, the store is fine
                self._up()
                if counted:
                    self._count("miss")
                return None
            self._failed(exc)
            if counted:
                self._count("error")
            return None
        self._up()
        if counted:
            self._count("hit")
        return data

    async def _read(self, key: str) -> bytes:
        if self._ranged:
            try:
                return bytes(await obstore.get_range_async(self.store, key, start=0, end=WHOLE))
            except GenericError as exc:
                if not _range_ignored(exc):
                    raise
                self._ranged = False
                log.warning("result store ignores ranged reads; reading whole objects")
        found = await obstore.get_async(self.store, key)
        return bytes(await found.bytes_async())

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
        """Write in the background; dropped when the store is down or too many writes wait."""
        if not self.available or len(self._writes) >= MAX_PENDING_WRITES:
            return None
        task = asyncio.get_running_loop().create_task(self._put(key, data))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return task

    async def _put(self, key: str, data: bytes) -> None:
        try:
            async with asyncio.timeout(WRITE_TIMEOUT_S):
                await obstore.put_async(self.store, key, data)
        except Exception as exc:
            self._failed(exc)
            return
        self._up()

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

    def _failed(self, exc: BaseException) -> None:
        self._down_until = time.monotonic() + self.retry_after_s
        if not self._down:
            self._down = True
            # The type only: obstore's messages hold the endpoint and the signed request.
            log.warning("result store unreachable (%s); rendering locally", type(exc).__name__)

    def _up(self) -> None:
        if self._down:
            self._down = False
            log.warning("result store reachable again; results shared")
