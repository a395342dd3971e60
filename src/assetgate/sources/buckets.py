"""Does a bucket answer? The checks ``/readyz`` and the start of the service run on each bucket.

A HEAD of a key that does not exist proved nothing: against SeaweedFS with virtual-hosted
addressing the bucket fell out of the URL, every HEAD was a 404 and the check said "ok" while
every file was a 404 (issue 36). So a source bucket is listed (one key under its prefix: a
missing bucket is ``NoSuchBucket``, a misread one lists nothing), and the result store, which
must be written too, gets a write/read/delete round trip of one small object.

Failures are one line: the store's error code (``NoSuchBucket``, ``AccessDenied``,
``InvalidBucketName``…) with the hint that fixes the usual cause, never the store's own text,
which holds the endpoint and the signed request.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Sequence
from typing import Final

import obstore
from obstore.exceptions import PermissionDeniedError, UnauthenticatedError
from obstore.store import S3Store

OK: Final = "ok"
TIMEOUT_S: Final = 3.0
PROBE_PREFIX: Final = ".assetgate-readyz/"
ADDRESSING_HINT: Final = (
    "check the bucket name and ASSETGATE_S3_ENDPOINT_URL; a custom endpoint (SeaweedFS, MinIO) "
    "wants path-style addressing, the default unless ASSETGATE_S3_PATH_STYLE=false"
)
_CODE = re.compile(r"<Code>(\w{1,64})</Code>")
_ADDRESSING = frozenset({"NoSuchBucket", "InvalidBucketName", "AllAccessDisabled"})


def store_problem(exc: BaseException) -> str:
    """One line for a failed store call: the error code and a hint, no endpoint, no key."""
    if isinstance(exc, PermissionDeniedError | UnauthenticatedError):
        return "refused (credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)"
    if isinstance(exc, TimeoutError):
        return f"no answer within {TIMEOUT_S:g} s"
    found = _CODE.search(str(exc))
    code = found[1] if found else None
    if code in _ADDRESSING:
        return f"no such bucket ({code}): {ADDRESSING_HINT}"
    if code in ("AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId"):
        return "refused (credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)"
    return f"unreachable ({code or type(exc).__name__})"


async def listing_check(store: S3Store) -> str:
    """A source bucket: one key listed under its prefix. Nothing listed is reported too (a
    bucket read under the wrong name, or the wrong prefix), as a degraded source."""
    try:
        async with asyncio.timeout(TIMEOUT_S):
            first: Sequence[object] = []
            async for chunk in obstore.list(store, chunk_size=1):
                first = chunk
                break
    except Exception as exc:
        return store_problem(exc)
    if not first:
        return f"empty (no object under the prefix): {ADDRESSING_HINT}"
    return OK


async def round_trip_check(store: S3Store) -> str:
    """The result store: a small object written, read back byte for byte and deleted."""
    key = f"{PROBE_PREFIX}{secrets.token_hex(8)}"
    body = secrets.token_bytes(16)
    try:
        async with asyncio.timeout(TIMEOUT_S):
            await obstore.put_async(store, key, body)
            read = bytes(await (await obstore.get_async(store, key)).bytes_async())
            await obstore.delete_async(store, key)
    except Exception as exc:
        return store_problem(exc)
    return OK if read == body else "reads back other bytes than were written"
