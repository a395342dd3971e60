"""HTTP edge of the WebP conversion interface (spec §4.3, §7.2, §8): ``POST /api/convert``.

The request, in order: charge the shared rate limit; stream the multipart body to a private
temporary directory under the upload caps (413), handing each file to the conversion scheduler as
soon as it has arrived; read the options (400 naming the field); every file is gated on its
extension and on the imaging floor's format allow-list (500 naming the file, with an
``error_id``, as §7.2 files an unsupported image) and converted to WebP through the one CPU door,
as many at a time as it has workers, each WebP and their sum under the output caps (413 naming
the file); answer one WebP, or a ZIP of them in upload order, streamed from disk. The uploads go
as soon as the answer is built, the rest as soon as it is sent or the client is gone
(``convert.sending``).

Every answer after the budget was charged carries the RateLimit fields, errors included.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from assetgate.convert.archive import write_zip
from assetgate.convert.names import make_content_disposition, make_entry_names
from assetgate.convert.options import parse_options
from assetgate.convert.scheduler import Conversion, Scheduler
from assetgate.convert.sending import WorkdirFileResponse, remove_workdir
from assetgate.convert.uploads import (
    UPLOAD_FIELD,
    Upload,
    UploadLimits,
    no_images,
    receive_uploads,
)
from assetgate.cpu.workgate import unless_disconnected
from assetgate.errors import AppError
from assetgate.part import Part
from assetgate.resources import Resources, resources
from assetgate.web.openapi import error_response as _error

PART_NAME: Final = "convert"
ARCHIVE_NAME: Final = "images.zip"
_STATIC_HEADERS: Final = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def remove_except(workdir: Path, keep: Path) -> None:
    """Free the disk the answer no longer needs (uploads; WebPs copied into the ZIP)."""
    for path in workdir.iterdir():
        if path != keep:
            path.unlink(missing_ok=True)


async def _respond_or_400(request: Request) -> Response:
    try:
        return await respond(request)
    except ClientDisconnect:
        raise AppError(400, "request body: client disconnected") from None


async def respond(request: Request) -> Response:
    res = resources(request)
    settings = res.settings
    limits = UploadLimits(
        max_file_bytes=settings.upload_max_bytes,
        max_files=settings.upload_max_files,
        max_body_bytes=settings.upload_max_total_bytes,
    )
    workdir = Path(
        await anyio.to_thread.run_sync(
            partial(tempfile.mkdtemp, prefix="assetgate-convert-", dir=settings.work_dir)
        )
    )
    try:
        uploads, conversions = await convert_body(request, res, limits, workdir)
        names = make_entry_names([upload.filename for upload in uploads])
        if len(uploads) == 1:
            body, media_type, filename = conversions[0].output, "image/webp", names[0]
        else:
            body, media_type, filename = workdir / "archive.zip", "application/zip", ARCHIVE_NAME
            entries = [
                (name, conversion.output)
                for name, conversion in zip(names, conversions, strict=True)
            ]
            await anyio.to_thread.run_sync(write_zip, entries, body)
        await anyio.to_thread.run_sync(remove_except, workdir, body)
        size = (await anyio.Path(body).stat()).st_size
    except BaseException:
        remove_workdir(workdir)
        raise
    headers = {
        **_STATIC_HEADERS,
        "Content-Length": str(size),
        "Content-Disposition": make_content_disposition(filename),
    }
    return WorkdirFileResponse(body, workdir, media_type=media_type, headers=headers)


async def convert_body(
    request: Request,
    res: Resources,
    limits: UploadLimits,
    workdir: Path,
) -> tuple[list[Upload], list[Conversion]]:
    """Receive the body and convert its images, each starting as soon as it has arrived."""
    effort = res.settings.webp_effort
    scheduler = Scheduler(
        res.gate,
        res.decode_limits,
        workdir,
        max_output_bytes=res.settings.convert_output_max_bytes,
        max_total_bytes=res.settings.convert_output_max_total_bytes,
        max_growth=res.settings.convert_max_growth,
    )

    def on_upload(upload: Upload, fields: Mapping[str, str]) -> None:
        try:
            options = parse_options(fields, effort=effort)
        except AppError:
            return  # a bad option so far: the final parse answers 400, nothing to start
        scheduler.submit(upload, options)

    failure: Exception | None = None
    uploads: list[Upload] = []
    done = anyio.Event()

    async def work() -> None:
        await scheduler.run(res.gate.workers)
        done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(work)
        try:
            received = await receive_uploads(
                request.stream(),
                content_type=request.headers.get("content-type"),
                content_length=request.headers.get("content-length"),
                limits=limits,
                directory=workdir,
                on_upload=on_upload,
            )
            options = parse_options(received.fields, effort=effort)
            # A part with no file name and no bytes is what a browser sends for a file input left
            # empty; a named empty file is an upload (and fails as no image, docs/convert.md).
            uploads = [u for u in received.uploads if u.size > 0 or u.filename]
            if not uploads:
                raise no_images(received.names)
            scheduler.finish(uploads, options)
            # The body is in: a client that hangs up now stops its running conversions.
            await unless_disconnected(request.receive, done.wait)
        except Exception as exc:
            # Raised out of the task group it would arrive wrapped in an ExceptionGroup; the
            # jobs already running finish their thread (their files are in ``workdir``).
            failure = exc
            group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return uploads, scheduler.results(uploads)


OPENAPI: Final[dict[str, Any]] = {
    "/api/convert": {
        "post": {
            "operationId": "convertToWebp",
            "summary": "Convert uploaded images to WebP (one image, or a ZIP of several).",
            "requestBody": {
                "required": True,
                "content": {
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "required": [UPLOAD_FIELD],
                            "properties": {
                                UPLOAD_FIELD: {
                                    "type": "array",
                                    "items": {"type": "string", "format": "binary"},
                                    "minItems": 1,
                                    "description": "Image files. A file of 0 bytes is no image:"
                                    " the 500 naming it (a part with neither file name nor bytes,"
                                    " a browser's empty file input, is left out).",
                                },
                                "quality": {"type": "integer", "minimum": 0, "maximum": 100},
                                "lossless": {"type": "integer", "enum": [0, 1]},
                            },
                        },
                        "encoding": {UPLOAD_FIELD: {"contentType": "image/*"}},
                    }
                },
            },
            "responses": {
                "200": {
                    "description": "One WebP image, or a ZIP archive of `<stem>.webp` entries.",
                    "content": {
                        "image/webp": {"schema": {"type": "string", "format": "binary"}},
                        "application/zip": {"schema": {"type": "string", "format": "binary"}},
                    },
                },
                "400": _error("No images uploaded, a bad option, or a malformed body."),
                "405": _error("Method other than POST."),
                "413": _error("Upload caps or the image pixel limit exceeded."),
                "429": _error("Rate limit exceeded (shared budget, spec §8)."),
                "500": _error("Internal error, or an unsupported image (names the file)."),
                "503": _error("Server busy; retry after `Retry-After`."),
            },
        }
    }
}

PART = Part(
    name=PART_NAME,
    prefixes=("/api/convert",),
    # Every method reaches the route, so GET or HEAD on this path is this interface's 405 and never
    # falls through to the optimizer's catch-all as a file lookup.
    endpoints={"/api/convert": _respond_or_400},
    methods=("POST",),
    # Spends the shared budget: every answer, errors and 500s included, has the RateLimit fields.
    budget=True,
    openapi=OPENAPI,
)
