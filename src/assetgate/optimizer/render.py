"""One image job, start to finish, on a worker thread: sniff -> probe -> plan -> render -> encode.

This is the only CPU-bound entry of the optimizer; the route calls ``process`` through the
WorkGate. Everything before the first decoded pixel (magic bytes, header probe, plan and its
limits) happens here too, so one thread hop serves the whole request and a 413/415/501 costs a
header read. The result says either "serve the original file" (pass-through, including the
"never bigger" rule) or carries the encoded bytes.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from assetgate.errors import AppError
from assetgate.imaging.encode import encode
from assetgate.imaging.formats import HEAD_BYTES, InputFormat, OutputFormat, as_output, sniff
from assetgate.imaging.load import ImageInput, decoding, open_image, probe
from assetgate.optimizer.pipeline import run
from assetgate.optimizer.plan import (
    Limits,
    Plan,
    choose_format,
    fits_webp,
    is_passthrough,
    make_plan,
    may_serve_source,
    wants_webp,
)
from assetgate.optimizer.spec import ImageSpec


@dataclass(frozen=True, slots=True)
class Job:
    path: Path
    size: int  # bytes of the source, from the route's stat
    spec: ImageSpec
    accept: str | None
    limits: Limits
    disabled: Collection[str] = ()
    webp_effort: int = 2
    avif_effort: int = 2
    fast_shrink: bool = True


@dataclass(frozen=True, slots=True)
class Outcome:
    source: InputFormat
    output: OutputFormat
    body: bytes | None  # None: serve the source file unchanged
    width: int = 0
    height: int = 0

    @property
    def passthrough(self) -> bool:
        return self.body is None


def process(job: Job) -> Outcome:
    src, fmt = _open_source(job.path, job.size)
    info = probe(src, fmt, max_pixels=job.limits.max_input_pixels, disabled=job.disabled)
    output = choose_format(
        job.spec.format,
        accepts_webp=wants_webp(job.accept, job.disabled),
        webp_fits=fits_webp(job.spec, info),
        source=fmt,
        has_alpha=info.has_alpha,
    )
    plan = make_plan(job.spec, info, output=output, limits=job.limits, disabled=job.disabled)
    if is_passthrough(job.spec, plan, fmt):
        return Outcome(fmt, output, None, info.width, info.height)
    with decoding():
        image = open_image(
            src,
            fmt,
            max_pixels=job.limits.max_input_pixels,
            animated=plan.animated,
            disabled=job.disabled,
            max_frames=job.limits.max_frames,
            size=plan.load_size,
            info=info,
            fast_shrink=job.fast_shrink,
        )
        body = encode(run(image, plan), output, quality=plan.quality, effort=_effort(job, plan))
    if (
        not plan.changes_pixels
        and len(body) > job.size
        and may_serve_source(job.spec.format, fmt, job.accept, output)
    ):
        # A pure re-encode that came out bigger: the original is the better answer.
        same = as_output(fmt)
        assert same is not None
        return Outcome(fmt, same, None, info.width, info.height)
    return Outcome(fmt, output, body, plan.width, plan.height)


def _open_source(path: Path, size: int) -> tuple[ImageInput, InputFormat]:
    """Read the head once; a small file is read whole and decoded from memory."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES + 1)
    except OSError:
        raise AppError.not_found() from None
    fmt = sniff(head, os.path.basename(path))
    if fmt is None:
        raise AppError.unsupported_media("the file is not an image in a supported format")
    return (head if len(head) <= HEAD_BYTES else path), fmt


def _effort(job: Job, plan: Plan) -> int | None:
    if plan.output == "webp":
        return job.webp_effort
    if plan.output == "avif":
        return job.avif_effort
    return None
