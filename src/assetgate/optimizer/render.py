"""One image job, start to finish, on a worker thread: sniff -> probe -> plan -> decode -> encode.

This is the only CPU-bound entry of the optimizer. The route takes it through the WorkGate in
two trips: ``prepare`` (magic bytes, header probe, the plan and its limits: a 413/415/501 costs a
header read) and ``render``, admitted by what its decoded pixels will cost in memory. What
``prepare`` found is a fact about one version of the file, so the route remembers it with that
version: the next render of the variant is one trip. The plan decides everything; this module only
carries it out, in a straight line.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import pyvips

from assetgate.errors import AppError, TooLarge
from assetgate.imaging.cost import JobTerms, fitting_pixels, mib, peak_bytes
from assetgate.imaging.encode import encode
from assetgate.imaging.formats import (
    FORMATS,
    HEAD_BYTES,
    ImageInput,
    InputFormat,
    OutputFormat,
    sniff,
)
from assetgate.imaging.integrity import ends_with_eoi, tolerating_harmless
from assetgate.imaging.load import SourceInfo, decoding, open_image, probe
from assetgate.optimizer.autoencode import auto_quality
from assetgate.optimizer.bytebudget import fit_quality
from assetgate.optimizer.info import describe
from assetgate.optimizer.pipeline import run, trim
from assetgate.optimizer.plan import Limits, Negotiation, Plan, make_plan
from assetgate.optimizer.spec import ImageSpec
from assetgate.optimizer.watermarks import NO_WATERMARKS, Watermarks
from assetgate.settings import Settings


@dataclass(frozen=True, slots=True)
class Job:
    path: Path | str  # a str from the route (the path check's real path: no Path to build)
    size: int  # bytes of the source, from the route's stat
    spec: ImageSpec
    negotiation: Negotiation
    limits: Limits
    webp_effort: int = 4
    avif_effort: int = 0
    fast_shrink: bool = True
    watermarks: Watermarks = field(default_factory=lambda: NO_WATERMARKS)

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        path: Path | str,
        size: int,
        spec: ImageSpec,
        negotiation: Negotiation,
        limits: Limits,
        watermarks: Watermarks = NO_WATERMARKS,
    ) -> Job:
        """The job with the encoder knobs ``settings`` choose (the route, the command line and
        the benchmarks build it alike)."""
        return cls(
            path=path,
            size=size,
            spec=spec,
            negotiation=negotiation,
            limits=limits,
            webp_effort=settings.webp_effort,
            avif_effort=settings.avif_effort,
            fast_shrink=settings.fast_shrink,
            watermarks=watermarks,
        )


@dataclass(frozen=True, slots=True)
class Outcome:
    source: InputFormat
    output: OutputFormat
    body: bytes | None  # None: serve the source file unchanged
    width: int = 0
    height: int = 0
    info: bool = False  # body is the JSON of ``info=1``, not an image
    quality: int = 0  # the quality a ``max_bytes`` or ``auto`` search settled on (0: none)
    budget_met: bool = True  # False: even the lowest quality is over ``max_bytes``
    #: ``quality=auto``: the chosen encode's SSIMULACRA2 score (0.0: no ``auto`` search).
    score: float = 0.0
    #: What ``X-Output-Quality`` says when it is not the number: ``lossless``, ``near-lossless:60``.
    quality_label: str = ""
    budgeted: bool = False  # a ``max_bytes`` search ran (``X-Optimizer-Budget``)

    @property
    def passthrough(self) -> bool:
        return self.body is None


@dataclass(frozen=True, slots=True)
class Probed:
    """What the header said and what to do: enough to know the render's cost before it runs."""

    src: ImageInput
    fmt: InputFormat
    info: SourceInfo
    plan: Plan
    ended: bool = False  # a JPEG that ends with its EOI: the render reads no tail again
    #: The render's measured peak memory (``imaging.cost``), what the door admits it by: worked
    #: out once with the header, not at every render of the remembered version.
    cost: int = field(init=False)

    def __post_init__(self) -> None:
        plan = self.plan
        terms = _cost_terms(plan, self.info)
        cost = peak_bytes(self.info, out_pixels=plan.width * plan.height, **terms)
        object.__setattr__(self, "cost", cost)

    def fits(self, ceiling: int) -> bool:
        """The render counts at most ``ceiling`` (0: no ceiling)."""
        return ceiling <= 0 or self.cost <= ceiling

    def within(self, ceiling: int) -> None:
        """413 naming ``file`` when the render counts more than ``ceiling`` (0: no ceiling),
        with the largest ``width`` that would fit (docs/optimizer.md "Memory limit")."""
        if self.fits(ceiling):
            return
        cost, plan = self.cost, self.plan
        what = f"rendering it as {plan.width}x{plan.height} {plan.output}"
        # A smaller output is loaded reduced (shrink-on-load), at the same aspect ratio.
        reduced = replace(plan, load_size=(1, 1), trim=0)
        pixels = fitting_pixels(self.info, ceiling, **_cost_terms(reduced, self.info))
        width = min(plan.width - 1, math.isqrt(pixels * plan.width // max(1, plan.height)))
        hint = f"width={width} or less fits" if width >= 1 else "no smaller size fits either"
        raise TooLarge(
            f"file: {what} needs about {mib(cost)} of memory at its peak, over the memory safety "
            f"limit of {mib(ceiling)} for one image job (ASSETGATE_RENDER_JOB_MEMORY_BYTES); "
            f"{hint}, or the operator can raise the limit",
            param="file",
        )

    @property
    def by_name(self) -> bool:
        """Read from the file's name; a small file's ``src`` is its head, i.e. its bytes."""
        return isinstance(self.src, Path | str)

    def at(self, path: Path | str) -> Probed:
        """The same header read through another name of the version (the first may be gone)."""
        if not self.by_name or self.src == path:  # most often the very name it was read by
            return self
        return replace(self, src=path)


def process(job: Job, *, reencode: bool = False) -> Outcome:
    """Both halves on one thread (the command line and tests; the route runs them apart)."""
    ready = prepare(job, reencode=reencode)
    return ready if isinstance(ready, Outcome) else render(job, ready)


def prepare(job: Job, *, reencode: bool = False) -> Probed | Outcome:
    """Sniff (415), header probe (413/501) and plan: a pass-through needs no render at all.

    ``reencode`` (the command line) renders a pass-through too: every pixel is decoded, so a
    damaged file fails, and the re-encode is kept only when smaller (``render``'s fallback)."""
    decode = job.limits.decode
    src, fmt = _open_source(job.path, job.size)
    info = probe(src, fmt, decode)
    plan = make_plan(
        job.spec, info, negotiation=job.negotiation, limits=job.limits, watermarks=job.watermarks
    )
    if plan.passthrough and not job.spec.info:
        if not reencode:
            return Outcome(fmt, plan.output, None, info.width, info.height)
        plan = replace(plan, passthrough=False)
    ready = Probed(src, fmt, info, plan, FORMATS[fmt].warns_when_cut and ends_with_eoi(src))
    if job.spec.info:  # ``info=1`` only reads the header and the pixels' statistics
        return ready
    if plan.fallback is not None and not reencode and not ready.fits(decode.max_job_bytes):
        # A pure re-encode the original may stand in for (a format negotiated from Accept):
        # the original, as when the re-encode comes out bigger, rather than a 413.
        return Outcome(fmt, plan.fallback, None, info.width, info.height)
    ready.within(decode.max_job_bytes)
    return ready


def _cost_terms(plan: Plan, info: SourceInfo) -> JobTerms:
    """What ``imaging.cost`` needs of a plan besides its output size."""
    return {
        "output": plan.output,
        "reduced": plan.load_size is not None and not plan.trim,  # a trim decodes it all
        "all_frames": plan.animated,
        "one_pass": _one_pass(plan, info),
        "search": plan.max_bytes is not None,
        "auto": plan.auto is not None,
    }


def _one_pass(plan: Plan, info: SourceInfo) -> bool:
    """A pure re-encode of an upright still at full size: the saver reads the decoder top to
    bottom, straight through, and no whole decoded image is held (``imaging.cost``)."""
    return not plan.changes_pixels and not plan.animated and info.orientation <= 1


def render(job: Job, ready: Probed) -> Outcome:
    """Decode, run the pipeline, encode; the original instead when a pure re-encode grew."""
    decode = job.limits.decode
    src, fmt, info, plan = ready.src, ready.fmt, ready.info, ready.plan
    if job.spec.info:
        with decoding():
            facts = describe(src, fmt, info, decode, size=job.size)
        return Outcome(fmt, plan.output, facts, info.width, info.height, info=True)

    def decode_and_encode() -> Outcome:
        current = plan
        with decoding():
            image = open_image(
                src,
                fmt,
                decode,
                animated=plan.animated,
                size=None if plan.trim else plan.load_size,
                info=info,
                fast_shrink=job.fast_shrink,
                one_pass=_one_pass(plan, info),
                ended=ready.ended,
            )
            if plan.trim:
                image, current = _trimmed(job, image, plan, info)
            image = run(image, current)
            return _encoded(job, image, current, fmt)

    outcome = tolerating_harmless(decode_and_encode)
    assert outcome.body is not None
    if plan.fallback is not None and len(outcome.body) > job.size:
        # A pure re-encode that came out bigger: the original is the better answer.
        return Outcome(fmt, plan.fallback, None, info.width, info.height)
    return outcome


def _trimmed(
    job: Job, image: pyvips.Image, plan: Plan, info: SourceInfo
) -> tuple[pyvips.Image, Plan]:
    """``trim`` before everything else: the rest of the plan is made again for what is left
    (decoded already, so no shrink-on-load; never the original instead: pixels changed)."""
    image = trim(image, plan.trim)
    left = replace(info, width=image.width, height=image.height)
    again = make_plan(
        job.spec, left, negotiation=job.negotiation, limits=job.limits, decoded=True,
        watermarks=job.watermarks,
    )  # fmt: skip
    return image, replace(again, passthrough=False, fallback=None)


def _encoded(job: Job, image: pyvips.Image, plan: Plan, fmt: InputFormat) -> Outcome:
    effort = {"webp": job.webp_effort, "avif": job.avif_effort}.get(plan.output)
    if plan.auto is not None:
        found = auto_quality(image, plan.output, plan.auto, effort, plan.max_bytes)
        return Outcome(
            fmt, plan.output, found.body, plan.width, plan.height, quality=found.quality,
            budget_met=found.budget_met, score=found.score, quality_label=found.label,
            budgeted=plan.max_bytes is not None,
        )  # fmt: skip
    if plan.max_bytes is None:
        body = encode(image, plan.output, quality=plan.quality, effort=effort)
        return Outcome(fmt, plan.output, body, plan.width, plan.height)
    # The pipeline runs once; each try of the search only encodes.
    image = image.copy_memory()
    fitted = fit_quality(
        lambda quality: encode(image, plan.output, quality=quality, effort=effort),
        plan.quality,
        plan.max_bytes,
    )
    return Outcome(
        fmt, plan.output, fitted.body, plan.width, plan.height,
        quality=fitted.quality, budget_met=fitted.met, budgeted=True,
    )  # fmt: skip


def _open_source(path: Path | str, size: int) -> tuple[ImageInput, InputFormat]:
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
