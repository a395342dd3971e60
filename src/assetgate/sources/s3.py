"""An S3-compatible bucket as a source: ``/<path>`` is the object ``<prefix>/<path>``.

The store client is ``cache.objects.s3_store`` (obstore; why: docs/sources.md). Its errors carry
the endpoint and the signed request in their text, so none of it reaches a client or a log line:
an error is mapped by its type to the JSON error that names the source by its mount.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Final

import anyio
import obstore
from obstore.exceptions import NotModifiedError, PermissionDeniedError, UnauthenticatedError
from obstore.store import S3Store

from assetgate.errors import AppError
from assetgate.sources.buckets import listing_check
from assetgate.sources.remote import (
    Sink,
    Validators,
    WriteFailed,
    copy_capped,
    failed,
    timed_out,
    too_large,
)

log = logging.getLogger("assetgate.sources")

# Small enough that hashing and writing a chunk overlaps the next one's arrival (obstore keeps
# reading in Rust meanwhile): a 3.8 MB photo cold from SeaweedFS 0.79x -> 0.86x of a local file
# with 4 MB chunks -> 512 KB (docs/benchmarks.md).
CHUNK_BYTES: Final = 512 * 1024


class BucketSource:
    kind = "s3"

    def __init__(self, name: str, store: S3Store, ident: str, *, read_timeout_s: float) -> None:
        self.name = name
        self.store = store
        self.ident = ident
        self.read_timeout_s = read_timeout_s

    async def aclose(self) -> None:
        return None

    async def fetch(
        self, key: str, known: Validators | None, sink: Sink, max_bytes: int
    ) -> Validators | None:
        options: dict[str, object] = {}
        if known is not None and known.etag:
            options["if_none_match"] = known.etag
        elif known is not None and known.last_modified:
            options["if_modified_since"] = parsedate_to_datetime(known.last_modified)
        try:
            with anyio.fail_after(self.read_timeout_s):
                found = await obstore.get_async(self.store, key, options=options)  # type: ignore[arg-type]
                meta = found.meta
                if meta["size"] > max_bytes:
                    raise too_large(max_bytes)
                await copy_capped(found.stream(CHUNK_BYTES), sink, max_bytes)
        except (AppError, WriteFailed):
            raise
        except NotModifiedError:
            return None
        except FileNotFoundError:
            raise AppError.not_found() from None
        except TimeoutError:
            raise timed_out(self.name, self.read_timeout_s) from None
        except (PermissionDeniedError, UnauthenticatedError):
            raise failed(self.name, "the store refused the credentials") from None
        except Exception as exc:
            raise _unavailable(self.name, exc, self.read_timeout_s) from None
        modified: datetime = meta["last_modified"]
        return Validators(meta.get("e_tag"), format_datetime(modified, usegmt=True))

    async def check(self) -> str:
        """One key listed under the prefix (``buckets.listing_check``: a HEAD proved nothing)."""
        return await listing_check(self.store)


def _unavailable(name: str, exc: Exception, seconds: float) -> AppError:
    """502 or 504 by what obstore says; its text (endpoint, signature) stays out of the log.

    504 only for a deadline that passed: the store client's own timeout (an HTTP error of kind
    ``Timeout``, or "timed out"). Every error names its ``retry_timeout`` setting, so "timeout"
    in the text says nothing (issue 35: a refused connection read as "no answer within 20 s" in
    0.08 s); a connection refused or reset is the 502 "unreachable"."""
    text = str(exc)
    log.warning("source %s: %s", name, type(exc).__name__)
    if _TIMED_OUT.search(text):
        return timed_out(name, seconds)
    if _CONNECT.search(text):
        return failed(name, "unreachable")
    return failed(name, "unavailable")


#: object_store's (reqwest's, hyper's) wording for a deadline that passed, and for no connection.
_TIMED_OUT: Final = re.compile(r"kind: Timeout|operation timed out|deadline has elapsed", re.I)
_CONNECT: Final = re.compile(r"kind: Connect|Connection refused|ConnectionReset|tcp connect", re.I)
