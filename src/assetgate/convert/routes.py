"""HTTP edge of the WebP conversion interface (spec §4.3, §7.2, §8): ``POST /api/convert``.

The request, in order: charge the shared rate limit; stream the multipart body to a private
temporary directory under the upload caps (413); read the options (400 naming the field); gate the
file names on their extensions and the contents on the imaging floor's format allow-list (500
naming the file, with an ``error_id``, as §7.2 files an unsupported image); convert every file to
WebP through the one CPU door, as many at a time as it has workers; answer one WebP, or a ZIP of
them in upload order, streamed from disk. The temporary directory goes away with the response.

Every answer after the budget was charged carries the RateLimit fields, errors included.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread
from starlette.background import BackgroundTask
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from assetgate.convert.archive import write_zip
from assetgate.convert.convert import Converted, DecodeLimits, Inspected, inspect, to_webp
from assetgate.convert.names import (
    extension,
    has_image_extension,
    make_content_disposition,
    make_entry_names,
    shown_name,
)
from assetgate.convert.options import ConvertOptions, parse_options
from assetgate.convert.uploads import UPLOAD_FIELD, Upload, UploadLimits, receive_uploads
from assetgate.errors import AppError
from assetgate.resources import Part, Resources, resources, spend_budget
from assetgate.web.responses import internal_error, new_error_id

log = logging.getLogger("assetgate.convert")

PART_NAME: Final = "convert"
ARCHIVE_NAME: Final = "images.zip"
# Every method reaches the endpoint, which answers 405 itself for all but POST (see ``convert``).
ROUTE_METHODS: Final = ["POST", "GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"]
STREAM_CHUNK_BYTES: Final = 256 * 1024
_STATIC_HEADERS: Final = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def file_error(upload: Upload, why: str, *, status: int = 500) -> AppError:
    """An error about one upload: names the file and says why; a 500 carries an ``error_id``."""
    message = f"{UPLOAD_FIELD}: {shown_name(upload.filename)!r} {why}"
    error_id = new_error_id() if status >= 500 else None
    if error_id is not None:
        log.info("error_id=%s convert rejected an upload: %s", error_id, message)
    return AppError(status, message, param=UPLOAD_FIELD, error_id=error_id)


def as_file_error(upload: Upload, exc: AppError) -> AppError:
    """An imaging-floor error about ``upload`` as §7.2 files it.

    Limits keep their 413; anything that means "cannot read this as an image we support" (415
    unidentified, 501 codec missing, a decoder failure) is the table's 500 for an unsupported image.
    """
    if exc.status == 413:
        return file_error(upload, exc.message, status=413)
    if exc.status == 503:
        return exc
    return file_error(upload, f"is not a supported image ({exc.message})")


def check_extensions(uploads: Sequence[Upload]) -> None:
    """Spec §4.3: "File extensions must correspond to an image format"."""
    for upload in uploads:
        if not has_image_extension(upload.filename):
            ext = extension(upload.filename)
            why = f"has the extension .{ext}" if ext else "has no file extension"
            raise file_error(upload, f"{why}, which is not an image format's")


def inspect_all(uploads: Sequence[Upload], limits: DecodeLimits) -> list[Inspected]:
    """The cheap header probe, file by file in upload order (sync, one thread hop for all)."""
    inspected: list[Inspected] = []
    for upload in uploads:
        try:
            inspected.append(inspect(upload.path, upload.filename, limits))
        except AppError as exc:
            raise as_file_error(upload, exc) from None
    return inspected


def unexpected_file_error(upload: Upload, exc: Exception) -> AppError:
    """A failure nobody anticipated while converting ``upload``: logged with its id, 500."""
    error = file_error(upload, "could not be converted (internal error)")
    log.error("error_id=%s converting an upload failed", error.error_id, exc_info=exc)
    return error


async def convert_all(
    res: Resources,
    uploads: Sequence[Upload],
    inspected: Sequence[Inspected],
    outputs: Sequence[Path],
    options: ConvertOptions,
    limits: DecodeLimits,
) -> list[Converted]:
    """Convert in parallel through the WorkGate, at most its worker count at a time.

    One request never queues more jobs at the gate than there are workers, so a 20-file upload
    cannot fill the shared queue on its own and push other requests into 503s. The first failure
    (in upload order among those that failed) cancels what has not started and is reported.
    """
    results: list[Converted | None] = [None] * len(uploads)
    failures: dict[int, AppError] = {}
    pending = iter(range(len(uploads)))

    async def worker(scope: anyio.CancelScope) -> None:
        for index in pending:
            job = (uploads[index].path, outputs[index], inspected[index], options, limits)
            try:
                results[index] = await res.gate.run(to_webp, *job)
            except AppError as exc:
                failures[index] = as_file_error(uploads[index], exc)
            except Exception as exc:
                failures[index] = unexpected_file_error(uploads[index], exc)
            if failures:
                scope.cancel()
                return

    async with anyio.create_task_group() as group:
        for _ in range(min(res.gate.workers, len(uploads))):
            group.start_soon(worker, group.cancel_scope)
    if failures:
        raise failures[min(failures)]
    return [result for result in results if result is not None]


async def stream_file(path: Path, workdir: Path) -> AsyncIterator[bytes]:
    try:
        async with await anyio.open_file(path, "rb") as source:
            while chunk := await source.read(STREAM_CHUNK_BYTES):
                yield chunk
    finally:
        remove_workdir(workdir)


def remove_workdir(workdir: Path) -> None:
    shutil.rmtree(workdir, ignore_errors=True)


async def convert(request: Request) -> Response:
    # The route takes every method so that GET or HEAD on this path is this interface's 405 and
    # never falls through to the optimizer's catch-all as a file lookup.
    if request.method != "POST":
        raise AppError.method_not_allowed(request.method, "POST")
    limit_headers = await spend_budget(request, PART_NAME)
    try:
        return await respond(request, limit_headers)
    except AppError as exc:
        exc.headers.update(limit_headers)
        raise
    except ClientDisconnect:
        raise AppError(400, "request body: client disconnected", headers=limit_headers) from None
    except Exception as exc:
        error = internal_error(exc, context=f"{request.method} {request.url.path}")
        error.headers.update(limit_headers)
        raise error from exc


async def respond(request: Request, limit_headers: dict[str, str]) -> Response:
    res = resources(request)
    settings = res.settings
    limits = UploadLimits(
        max_file_bytes=settings.upload_max_bytes,
        max_files=settings.upload_max_files,
        max_body_bytes=settings.upload_max_total_bytes,
    )
    workdir = Path(
        await anyio.to_thread.run_sync(partial(tempfile.mkdtemp, prefix="assetgate-convert-"))
    )
    try:
        received = await receive_uploads(
            request.stream(),
            content_type=request.headers.get("content-type"),
            content_length=request.headers.get("content-length"),
            limits=limits,
            directory=workdir,
        )
        options = parse_options(received.fields, effort=settings.webp_effort)
        # An empty part is what a browser sends for a file input left empty.
        uploads = [upload for upload in received.uploads if upload.size > 0]
        if not uploads:
            raise AppError(400, "no images uploaded", param=UPLOAD_FIELD)
        check_extensions(uploads)
        decode_limits = DecodeLimits(
            max_pixels=settings.max_input_pixels,
            max_frames=settings.max_animation_frames,
            disabled=tuple(settings.disabled_codecs),
        )
        inspected = await anyio.to_thread.run_sync(inspect_all, uploads, decode_limits)
        names = make_entry_names([upload.filename for upload in uploads])
        outputs = [workdir / f"output-{index}.webp" for index in range(len(uploads))]
        await convert_all(res, uploads, inspected, outputs, options, decode_limits)
        if len(uploads) == 1:
            body, media_type, filename = outputs[0], "image/webp", names[0]
        else:
            body, media_type, filename = workdir / "archive.zip", "application/zip", ARCHIVE_NAME
            await anyio.to_thread.run_sync(write_zip, list(zip(names, outputs, strict=True)), body)
        size = (await anyio.Path(body).stat()).st_size
    except BaseException:
        remove_workdir(workdir)
        raise
    headers = {
        **_STATIC_HEADERS,
        **limit_headers,
        "Content-Length": str(size),
        "Content-Disposition": make_content_disposition(filename),
    }
    return StreamingResponse(
        stream_file(body, workdir),
        media_type=media_type,
        headers=headers,
        background=BackgroundTask(remove_workdir, workdir),
    )


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


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
    routes=[Route("/api/convert", convert, methods=ROUTE_METHODS)],
    openapi=OPENAPI,
)
