"""A public URL with no optimizer parameter: the file as it is, with validators.

Its headers depend only on the file's version, so they are prepared once per version (and per
app: CORS and Cache-Control are settings) and every repeat is a header-block copy
(``serving.answer``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final, Never

from assetgate.serving.answer import Variant
from assetgate.serving.prepared import Prepared
from assetgate.serving.versions import FileVersion
from assetgate.web.caching import make_etag
from assetgate.web.mediatypes import media_type

VARIANT: Final = "static"


def static_variant(path: str, *, cache_control: str, cors: Mapping[str, str]) -> Variant[Never]:
    return Variant(VARIANT, functools.partial(_validators, path, cache_control, cors))


def _validators(
    path: str, cache_control: str, cors: Mapping[str, str], source: FileVersion
) -> Prepared:
    etag = make_etag("static", source.fingerprint)
    headers = {
        **cors,
        "ETag": etag,
        "Last-Modified": source.last_modified,
        "Cache-Control": cache_control,
        "X-Content-Type-Options": "nosniff",
        "X-Optimizer-Status": "passthrough",
        "X-Original-Size": str(source.size),
    }
    ok = {
        "Content-Type": media_type(path),
        "Accept-Ranges": "bytes",
        "Content-Length": str(source.size),
    }
    return Prepared.build(etag, source.mtime, headers, ok)
