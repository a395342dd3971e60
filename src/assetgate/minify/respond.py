"""The HTTP answer for a CSS or JavaScript file: ``?min=1&compress=1&safe=1``.

Shared by the optimizer (document-root files) and the package library (pinned package files), so
both behave the same. Callers have already checked the method and the path's safety; this module
owns everything after that, in the order of a cheap request first:

1. flags (400 naming a bad ``min``/``compress``/``safe``), one ``stat``, a sniff of the first bytes
   (binary → 415);
2. the plan (transformation and encoding, from the flags and ``Accept-Encoding``), the ETag over
   the file's content fingerprint and the plan → 304 before any work;
3. nothing asked → the file itself (``X-Optimizer-Status: passthrough``);
4. otherwise the cached rendering, or one render through the CPU gate, then the headers.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import rcssmin
import rjsmin
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from assetgate.cache import Cache
from assetgate.errors import AppError
from assetgate.minify.render import Rendered, render_file
from assetgate.minify.sniff import SNIFF_BYTES, looks_binary
from assetgate.minify.spec import MEDIA_TYPES, kind_of, make_plan, parse_asset_spec
from assetgate.web.caching import make_etag, request_is_not_modified, validator_headers
from assetgate.web.fingerprint import Fingerprints
from assetgate.web.savings import savings_headers
from assetgate.web.workgate import WorkGate

log = logging.getLogger("assetgate.minify")

# Part of every ETag: a new minifier or scanner may produce other bytes for the same file.
ENGINE_VERSION: Final = f"assets-1/rjsmin-{rjsmin.__version__}/rcssmin-{rcssmin.__version__}"


def is_asset(path: Path | str) -> bool:
    return kind_of(path) is not None


def _read_head(source: Path) -> bytes:
    try:
        with source.open("rb") as handle:
            return handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise AppError.not_found() from exc


def _stat_regular(source: Path) -> os.stat_result:
    try:
        info = source.stat()
    except OSError as exc:
        raise AppError.not_found() from exc
    if not stat.S_ISREG(info.st_mode):
        raise AppError.not_found()
    return info


async def asset_response(
    request: Request,
    source: Path,
    *,
    source_stat: os.stat_result | None = None,
    gate: WorkGate,
    cache: Cache[Rendered],
    fingerprints: Fingerprints,
    cache_control: str,
    max_bytes: int,
    extra_headers: Mapping[str, str] | None = None,
) -> Response:
    """Answer GET or HEAD for the CSS/JS file ``source`` (already resolved and safe).

    ``source_stat``: the path gate's stat of ``source`` when the caller has it (else one is taken).
    """
    kind = kind_of(source)
    if kind is None:
        raise AppError.unsupported_media("not a CSS or JavaScript file")
    spec = parse_asset_spec(request.query_params)
    info = source_stat if source_stat is not None else _stat_regular(source)
    if looks_binary(_read_head(source)):
        raise AppError.unsupported_media("the file is not CSS or JavaScript text")
    plan = make_plan(
        spec,
        kind,
        accept_encoding=request.headers.get("accept-encoding"),
        size=info.st_size,
        max_bytes=max_bytes,
    )
    if plan.oversize:
        log.info(
            "asset served unminified: %s bytes is over the %s byte cap", info.st_size, max_bytes
        )
    try:
        content = await fingerprints.of(source, info)
    except OSError as exc:
        raise AppError.not_found() from exc
    etag = make_etag(ENGINE_VERSION, content or str(info), plan.transform, plan.encoding)
    headers = {
        **(extra_headers or {}),
        **validator_headers(etag, info.st_mtime, cache_control),
        "X-Content-Type-Options": "nosniff",  # a script is only ever run as what we say it is
    }
    if plan.vary:
        headers["Vary"] = "Accept-Encoding"
    if request_is_not_modified(request, etag, info.st_mtime):
        return Response(status_code=304, headers=headers)
    media_type = MEDIA_TYPES[kind]
    if plan.is_passthrough:
        headers["X-Optimizer-Status"] = "passthrough"
        headers["X-Original-Size"] = str(info.st_size)
        return FileResponse(source, headers=headers, media_type=media_type, stat_result=info)

    async def render() -> Rendered:
        rendered = await gate.run(render_file, source, plan, max_bytes)
        if rendered.note is not None:
            log.warning(
                "asset %s served without %s: %s", source.name, plan.transform, rendered.note
            )
        return rendered

    if content is None:  # the file is being rewritten: answer, but keep nothing
        rendered, hit = await render(), False
    else:
        rendered, hit = await cache.get_or_compute(etag, render)
    headers.update(_result_headers(rendered))
    headers["X-Asset-Cache"] = "hit" if hit else "miss"
    body = b"" if request.method == "HEAD" else rendered.body
    headers["Content-Length"] = str(len(rendered.body))
    return Response(body, headers=headers, media_type=media_type)


def _result_headers(rendered: Rendered) -> dict[str, str]:
    if rendered.unchanged:
        return {
            "X-Optimizer-Status": "passthrough",
            "X-Original-Size": str(rendered.original_size),
        }
    headers = savings_headers(rendered.original_size, len(rendered.body))
    if rendered.encoding == "gzip":
        headers["Content-Encoding"] = "gzip"
    return headers
