"""Conversion jobs of one request, started while the body is still arriving.

A file is queued for conversion the moment its multipart part is complete, with the options
received so far; ``finish`` then names the final uploads and options. A job that ran with options
that turned out different (the ``quality`` field came after the file) is run again; in the usual
order (fields first, or no fields) nothing runs twice. So on a slow uplink the first images are
done by the time the last one has arrived, and on loopback the upload's parse overlaps the work.

Jobs start in upload order on at most ``workers`` tasks, each through the shared WorkGate, so one
request never queues more work at the gate than there are CPU workers. After a failure, jobs of
later files are skipped; jobs of earlier files always finish, so the error the route reports is
the first failing file in upload order.

The answer's size is bounded too: each WebP by ``max_output_bytes`` (checked before it is
written), their sum by ``max_total_bytes``. Once the finished WebPs are over the sum, no later
file is started (earlier ones finish), and the 413 names the file at which the sum, in upload
order, goes over: the same file whatever order the jobs finished in.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from assetgate.convert.convert import Converted, inspect, to_webp
from assetgate.convert.names import extension, has_image_extension, shown_name
from assetgate.convert.options import ConvertOptions
from assetgate.convert.uploads import UPLOAD_FIELD, Upload
from assetgate.cpu.workgate import WorkGate
from assetgate.errors import AppError, TooLarge, Unavailable
from assetgate.imaging.cost import mib, peak_bytes
from assetgate.imaging.formats import SourceInfo
from assetgate.imaging.limits import DecodeLimits

log = logging.getLogger("assetgate.convert")


@dataclass(slots=True)
class Conversion:
    """One upload's job: the options it ran with, where its WebP goes, and how it ended."""

    options: ConvertOptions
    output: Path
    converted: Converted | None = None
    error: AppError | None = None


def file_error(
    upload: Upload, why: str, *, status: int = 500, exc_info: BaseException | None = None
) -> AppError:
    """An error about one upload: names the file and says why; a 500 carries an ``error_id``."""
    message = f"{UPLOAD_FIELD}: {shown_name(upload.filename)!r} {why}"
    if status < 500:
        return AppError(status, message, param=UPLOAD_FIELD)
    return AppError.logged(
        status,
        message,
        log=log,
        context=f"convert rejected an upload: {message}",
        level=logging.INFO if exc_info is None else logging.ERROR,
        exc_info=exc_info,
        param=UPLOAD_FIELD,
    )


def as_file_error(upload: Upload, exc: AppError) -> AppError:
    """An imaging-floor error about ``upload`` as §7.2 files it.

    Limits keep their 413 and an overloaded gate its 503; anything that means "cannot read this
    as an image we support" (415 unidentified, 501 codec missing, a decoder failure) is the
    table's 500 for an unsupported image.
    """
    if isinstance(exc, TooLarge):
        return file_error(upload, exc.message, status=413)
    if isinstance(exc, Unavailable):
        return exc
    return file_error(upload, f"is not a supported image ({exc.message})")


def empty_error(upload: Upload) -> AppError:
    """docs/convert.md: a named file of 0 bytes is a file that is no image (§7.2's 500)."""
    return file_error(upload, "is empty (0 bytes), not an image")


def extension_error(upload: Upload) -> AppError | None:
    """Spec §4.3: "File extensions must correspond to an image format"."""
    if has_image_extension(upload.filename):
        return None
    ext = extension(upload.filename)
    why = f"has the extension .{ext}" if ext else "has no file extension"
    return file_error(upload, f"{why}, which is not an image format's")


def within_ceiling(info: SourceInfo, cost: int, ceiling: int) -> None:
    """413 (named by ``as_file_error``) when converting counts more than ``ceiling``, with the
    largest image of this kind that would fit (docs/convert.md "Memory limit")."""
    if ceiling <= 0 or cost <= ceiling:
        return
    fits = info.pixels * ceiling / cost / 1e6
    raise AppError.too_large(
        f"needs about {mib(cost)} of memory to convert ({info.width}x{info.height} px"
        f"{' with alpha' if info.has_alpha else ''}), over the memory safety limit of "
        f"{mib(ceiling)} for one image job (ASSETGATE_RENDER_JOB_MEMORY_BYTES); an image like it "
        f"of at most {fits:.1f} MP fits, or the operator can raise the limit"
    )


class Scheduler:
    """The conversion jobs of one request (see the module docstring for the order rules)."""

    def __init__(
        self,
        gate: WorkGate,
        limits: DecodeLimits,
        workdir: Path,
        *,
        max_output_bytes: int,
        max_total_bytes: int,
        max_growth: float = 0.0,
    ) -> None:
        self.gate = gate
        self.limits = limits
        self.workdir = workdir
        self.max_output_bytes = max_output_bytes
        self.max_total_bytes = max_total_bytes
        self.max_growth = max_growth
        self._sizes: dict[int, int] = {}  # upload index -> bytes of its current WebP
        self.conversions: dict[int, Conversion] = {}
        self.first_failure: int | None = None
        self.final: ConvertOptions | None = None
        self._attempt = itertools.count()
        self._send, self._receive = anyio.create_memory_object_stream[tuple[Upload, Conversion]](
            math.inf
        )

    async def run(self, workers: int) -> None:
        """The worker tasks; returns once ``finish`` was called and every job is done."""
        async with self._receive, anyio.create_task_group() as group:
            for _ in range(max(1, workers)):
                group.start_soon(self._worker, self._receive.clone())

    def submit(self, upload: Upload, options: ConvertOptions) -> None:
        """Queue ``upload``; a part with neither a file name nor bytes is left out (what a browser
        sends for a file input left empty), a named empty file is an unsupported image."""
        if upload.size == 0 and not upload.filename:
            return
        error = extension_error(upload) if upload.size else empty_error(upload)
        self._sizes.pop(upload.index, None)  # a job run again counts its new output only
        output = self.workdir / f"output-{next(self._attempt)}.webp"
        conversion = Conversion(options, output, error=error)
        self.conversions[upload.index] = conversion
        if error is not None:
            self._failed(upload.index)
            return
        self._send.send_nowait((upload, conversion))

    def finish(self, uploads: Sequence[Upload], options: ConvertOptions) -> None:
        """The body is complete: (re)queue what is missing or ran with other options, then close."""
        self.final = options
        for upload in uploads:
            conversion = self.conversions.get(upload.index)
            if conversion is None or (conversion.error is None and conversion.options != options):
                self.submit(upload, options)
        self._send.close()

    def results(self, uploads: Sequence[Upload]) -> list[Conversion]:
        """Outcomes in upload order; raises the first failure in that order."""
        conversions = [self.conversions[upload.index] for upload in uploads]
        total = 0
        for upload, conversion in zip(uploads, conversions, strict=True):
            if conversion.error is not None:
                raise conversion.error
            assert conversion.converted is not None
            total += conversion.converted.size
            if total > self.max_total_bytes:
                why = (
                    f"takes the converted images to {total} bytes, over the limit of "
                    f"{self.max_total_bytes} bytes per answer "
                    "(ASSETGATE_CONVERT_OUTPUT_MAX_TOTAL_BYTES)"
                )
                raise file_error(upload, why, status=413)
        return conversions

    def _failed(self, index: int) -> None:
        if self.first_failure is None or index < self.first_failure:
            self.first_failure = index

    def _current(self, upload: Upload, conversion: Conversion) -> bool:
        """False for a job superseded by a later submit, stale options, or after a failure."""
        if self.conversions.get(upload.index) is not conversion:
            return False
        if self.final is not None and conversion.options != self.final:
            return False
        return self.first_failure is None or upload.index < self.first_failure

    async def _convert(self, upload: Upload, conversion: Conversion) -> Converted:
        """Two trips through the door: the header probe tells what the decode will cost."""
        found = await self.gate.run(inspect, upload.path, upload.filename, self.limits)
        info, lossless = found.info, conversion.options.lossless
        cost = peak_bytes(
            info,
            output="webp",
            out_pixels=info.pixels,
            reduced=False,
            lossless=lossless,
            one_pass=True,  # ``to_webp`` reads a still once, top to bottom
        )
        within_ceiling(info, cost, self.limits.max_job_bytes)
        job = (upload.path, conversion.output, found, conversion.options, self.limits)
        return await self.gate.run(to_webp, *job, self.max_output_bytes, self.max_growth, cost=cost)

    def _count(self, upload: Upload, conversion: Conversion, converted: Converted) -> None:
        """Add a finished WebP to the answer's size; a 413 for the file that takes it over."""
        if self.conversions.get(upload.index) is not conversion:
            conversion.output.unlink(missing_ok=True)  # superseded: nobody will send it
            return
        conversion.converted = converted
        self._sizes[upload.index] = converted.size
        if sum(self._sizes.values()) > self.max_total_bytes:
            # Every file up to the last one finished is converted or failed by the end, so the
            # sum in upload order (``results``) goes over at one of them.
            self._failed(max(self._sizes))

    async def _worker(self, jobs: MemoryObjectReceiveStream[tuple[Upload, Conversion]]) -> None:
        async with jobs:
            async for upload, conversion in jobs:
                if not self._current(upload, conversion):
                    continue
                try:
                    self._count(upload, conversion, await self._convert(upload, conversion))
                except AppError as exc:
                    conversion.error = as_file_error(upload, exc)
                    self._failed(upload.index)
                except Exception as exc:
                    why = "could not be converted (internal error)"
                    conversion.error = file_error(upload, why, exc_info=exc)
                    self._failed(upload.index)
