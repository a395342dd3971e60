"""How a rendered CSS/JS answer is kept by the cache layer: its bytes on disk, keyed by its ETag.

The ETag already names everything that decides the bytes (the file's content fingerprint, the
transformation, the encoding, the engine versions), so it is the key: a changed file gets a new
key and its old entries age out of the result cache's disk budget.
"""

from __future__ import annotations

from typing import Final

from assetgate.cache import FOREVER, Codec, CodecError
from assetgate.cache.codec import join_head, split_head
from assetgate.minify.render import Rendered

NAME: Final = "assets"
# A file served without its transformation (past the deadline, refused, or the minifier process
# died) is kept for this long, then tried again: a hostile file costs one deadline per interval,
# a file that was only unlucky (a loaded machine, a process killed by the OS) is minified later.
SKIPPED_TTL_S: Final = 600.0


def ttl(value: Rendered) -> float:
    return SKIPPED_TTL_S if value.skipped is not None else FOREVER


def _encode(value: Rendered) -> bytes:
    head = {
        "encoding": value.encoding,
        "original": value.original_size,
        "same": value.unchanged,
        "skipped": value.skipped,
    }
    return join_head(head, value.body)


def _decode(data: bytes) -> Rendered:
    meta, body = split_head(data)
    encoding = meta.get("encoding")
    if encoding not in ("identity", "gzip"):
        raise CodecError(f"not a stored asset: encoding {encoding!r}")
    skipped = meta.get("skipped")
    if skipped not in (None, "timeout", "refused", "size"):
        raise CodecError(f"not a stored asset: skipped {skipped!r}")
    try:
        return Rendered(body, encoding, int(meta["original"]), bool(meta["same"]), skipped=skipped)
    except (ValueError, KeyError, TypeError) as exc:
        raise CodecError(f"not a stored asset: {exc}") from exc


RENDERED: Final[Codec[Rendered]] = Codec(_encode, _decode, lambda value: value.weight)
