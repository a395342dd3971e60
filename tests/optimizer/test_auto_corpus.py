"""``quality=auto`` on real images (tests/data/corpus: photos, scans of text, alpha): every
answer scores at least the target - 1 with the project's metric against the variant's own
lossless rendering, and says its score and quality truthfully."""

from __future__ import annotations

from pathlib import Path

import pytest
import pyvips

from assetgate.imaging.ssimulacra2 import Reference
from assetgate.optimizer.autoquality import MAX_ENCODES
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.render import Job, Outcome, process
from assetgate.optimizer.spec import parse_spec
from assetgate.settings import Settings

CORPUS = Path(__file__).parent.parent / "data" / "corpus"
IMAGES = sorted(path.name for path in CORPUS.iterdir())
SETTINGS = Settings()
LIMITS = Limits.from_settings(SETTINGS)


def run(name: str, query: dict[str, str]) -> Outcome:
    path = CORPUS / name
    job = Job.from_settings(
        SETTINGS, path=path, size=path.stat().st_size, spec=parse_spec(query),
        negotiation=Negotiation(webp=False), limits=LIMITS,
    )  # fmt: skip
    return process(job, reencode=True)


def lossless(name: str, fmt: str) -> pyvips.Image:
    """The variant's own lossless rendering: the same request as PNG (flattened for JPEG)."""
    outcome = run(name, {"format": "png", "width": "9999"})
    # None: the PNG source itself was smaller than its re-encode (same pixels).
    data = outcome.body if outcome.body is not None else (CORPUS / name).read_bytes()
    image = pyvips.Image.new_from_buffer(data, "")
    if fmt == "jpeg" and image.hasalpha():
        image = image.flatten(background=[255] * (image.bands - 1))
    return image.copy_memory()


def test_the_corpus_has_every_kind() -> None:
    kinds = {name.split("-")[0] for name in IMAGES}
    assert kinds == {"photo", "graphic", "alpha"}
    assert sum(path.stat().st_size for path in CORPUS.iterdir()) < 600_000


@pytest.mark.parametrize("fmt", ["jpeg", "webp"])
@pytest.mark.parametrize("name", IMAGES)
def test_auto_reaches_the_target(name: str, fmt: str) -> None:
    target = 75
    outcome = run(name, {"quality": "auto", "format": fmt})
    assert outcome.body is not None
    assert outcome.output == fmt
    score = Reference(lossless(name, fmt)).score(pyvips.Image.new_from_buffer(outcome.body, ""))
    assert score >= target - 1, (name, fmt, outcome.quality_label or outcome.quality, score)
    assert outcome.score == pytest.approx(score, abs=0.01)  # X-Output-Score tells the truth
    assert outcome.quality >= 1


@pytest.mark.parametrize("name", ["photo-chelsea.jpg", "graphic-text.png", "alpha-horse.png"])
def test_auto_reaches_the_target_in_avif(name: str) -> None:
    outcome = run(name, {"quality": "auto", "format": "avif"})
    assert outcome.body is not None
    score = Reference(lossless(name, "avif")).score(pyvips.Image.new_from_buffer(outcome.body, ""))
    assert score >= 74, (name, outcome.quality, score)


@pytest.mark.parametrize("target", [50, 90])
def test_other_targets(target: int) -> None:
    outcome = run("photo-coffee.jpg", {"quality": f"auto:{target}", "format": "jpeg"})
    assert outcome.score >= target - 1
    fixed = run("photo-coffee.jpg", {"quality": str(outcome.quality), "format": "jpeg"})
    assert fixed.body == outcome.body  # the answer is the encode of the chosen quality


def test_a_higher_target_spends_more_bytes() -> None:
    sizes = [
        len(run("photo-astronaut.jpg", {"quality": f"auto:{t}", "format": "webp"}).body or b"")
        for t in (50, 75, 90)
    ]
    assert sizes == sorted(sizes)
    assert sizes[0] < sizes[-1]


def test_encodes_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """At most MAX_ENCODES encodes per search, counted at the encoder."""
    from assetgate.optimizer import autoencode

    calls: list[int] = []
    real = autoencode.encode

    def counting(*args: object, **kwargs: object) -> bytes:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(autoencode, "encode", counting)
    for name in IMAGES[:4]:
        calls.clear()
        run(name, {"quality": "auto", "format": "jpeg"})
        assert 1 <= len(calls) <= MAX_ENCODES
