"""A version's image header is read once: a later render of it goes through the door once.

The first render of a variant sniffs and probes the file (one WorkGate trip) and renders it (a
second); what the probe found is remembered with the file's version, so the next render of that
version skips the probe. A rewritten file is a new version and is read anew. Files are aged past
``FileVersions``' settle time: a version younger than that is never remembered.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
import pyvips

from assetgate.imaging.formats import HEAD_BYTES
from assetgate.optimizer import render, variants
from assetgate.optimizer.plan import Limits, Negotiation
from assetgate.optimizer.spec import parse_spec
from assetgate.settings import Settings
from tests.conftest import app_client
from tests.imaging import factory as make

SETTLE_S = 2.1  # serving.files.Sources' default settle time, and a little
NO_CACHE = {"accept": "image/png", "cache-control": "no-cache"}


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the route sends to the header probe, in order."""
    seen: list[Path] = []

    def counting(job: render.Job) -> render.Probed | render.Outcome:
        seen.append(Path(job.path))
        return render.prepare(job)

    monkeypatch.setattr(variants, "prepare", counting)  # the image variant's work
    return seen


def aged_root(tmp_path: Path, files: dict[str, bytes]) -> Path:
    """A document root whose files are old enough for ``FileVersions`` to remember them."""
    root = tmp_path / "aged"
    root.mkdir()
    for name, data in files.items():
        (root / name).write_bytes(data)
    time.sleep(SETTLE_S)
    return root


def dimensions(body: bytes) -> tuple[int, int]:
    image = pyvips.Image.new_from_buffer(body, "")
    return image.width, image.height


@pytest.mark.anyio
async def test_the_second_render_of_a_version_skips_the_header_probe(
    tmp_path: Path, make_settings: Callable[..., Settings], probes: list[Path]
) -> None:
    # photo.jpg is over HEAD_BYTES; small.jpg is read whole by the probe.
    files = {"photo.jpg": make.noise_jpeg(400, 300), "small.jpg": make.jpeg(400, 300)}
    root = aged_root(tmp_path, files)
    # Result cache off: every request renders.
    async with app_client(make_settings(root=root, result_cache_bytes=0)) as client:
        first = await client.get("/photo.jpg?w=100&format=png", headers=NO_CACHE)
        again = await client.get("/photo.jpg?w=100&format=png", headers=NO_CACHE)
        other = await client.get("/photo.jpg?w=40&format=png", headers=NO_CACHE)
        small = [await client.get("/small.jpg?w=100", headers=NO_CACHE) for _ in range(2)]
    assert [r.status_code for r in (first, again, other, *small)] == [200] * 5
    assert first.content == again.content
    assert dimensions(first.content) == (100, 75)
    assert dimensions(other.content) == (40, 30)
    assert dimensions(small[1].content) == (100, 75)
    # One probe per variant of the version: the repeat went straight to the render. A small
    # file's header is its bytes, which are not kept twice: it is probed every time (cheaply).
    photo, little = root / "photo.jpg", root / "small.jpg"
    assert probes == [photo, photo, little, little]


@pytest.mark.anyio
async def test_a_rewritten_file_is_planned_from_its_new_header(
    tmp_path: Path, make_settings: Callable[..., Settings], probes: list[Path]
) -> None:
    root = aged_root(tmp_path, {"photo.jpg": make.noise_jpeg(400, 300)})
    photo = root / "photo.jpg"
    async with app_client(make_settings(root=root, result_cache_bytes=0)) as client:
        landscape = await client.get("/photo.jpg?w=100&format=png", headers=NO_CACHE)
        photo.write_bytes(make.noise_jpeg(300, 400))  # the same name, another header
        portrait = await client.get("/photo.jpg?w=100&format=png", headers=NO_CACHE)
    assert dimensions(landscape.content) == (100, 75)
    assert dimensions(portrait.content) == (100, 133)
    assert len(probes) == 2


def test_a_remembered_header_opens_the_name_the_request_used(tmp_path: Path) -> None:
    """The name that first read a version may be gone (renamed) when another renders it."""
    settings = Settings()
    data = make.noise_jpeg(400, 300)  # over HEAD_BYTES: read from its name, not held
    assert len(data) > HEAD_BYTES
    (tmp_path / "a.jpg").write_bytes(data)
    job = render.Job(
        path=tmp_path / "a.jpg",
        size=len(data),
        spec=parse_spec({"w": "20", "format": "png"}),
        negotiation=Negotiation(webp=False),
        limits=Limits.from_settings(settings),
    )
    ready = render.prepare(job)
    assert isinstance(ready, render.Probed)
    (tmp_path / "a.jpg").rename(tmp_path / "b.jpg")
    moved = ready.at(tmp_path / "b.jpg")
    assert moved.src == tmp_path / "b.jpg"
    outcome = render.render(job, moved)
    assert outcome.body is not None
    assert dimensions(outcome.body) == (20, 15)
    small = render.Probed(b"\xff\xd8", ready.fmt, ready.info, ready.plan)
    assert small.at(tmp_path / "b.jpg") is small  # a small file's bytes are the version itself


def test_the_eoi_is_checked_with_the_header_not_at_every_render(tmp_path: Path) -> None:
    """A JPEG that ends with its EOI is marked so when its header is read (the render then reads
    no tail again); one that lacks it is not, and still renders (the EOI put back)."""
    whole = make.jpeg(96, 64)
    assert whole.endswith(b"\xff\xd9")
    padded = _padded_to_eoi(whole)
    files = {"whole.jpg": padded, "cut.jpg": padded[:-2]}
    settings = Settings(root=tmp_path)
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    limits = Limits.from_settings(settings)
    spec = parse_spec({"width": "48", "format": "png"})
    for name, ended in (("whole.jpg", True), ("cut.jpg", False)):
        path = tmp_path / name
        job = render.Job.from_settings(
            settings, path=path, size=path.stat().st_size, spec=spec,
            negotiation=Negotiation(webp=False), limits=limits,
        )  # fmt: skip
        ready = render.prepare(job)
        assert isinstance(ready, render.Probed)
        assert ready.by_name  # over the head's size: read by name at render time
        assert ready.ended is ended
        outcome = render.render(job, ready)
        assert outcome.body is not None
        assert dimensions(outcome.body) == (48, 32)


def _padded_to_eoi(jpeg: bytes) -> bytes:
    """``jpeg`` made longer than a head (a COM segment of filler after SOI), EOI still last."""
    filler = b"x" * (HEAD_BYTES + 16)
    segments = b""
    while filler:
        piece, filler = filler[:65000], filler[65000:]
        segments += b"\xff\xfe" + (len(piece) + 2).to_bytes(2, "big") + piece
    return jpeg[:2] + segments + jpeg[2:]
