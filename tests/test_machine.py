"""Render budgets from the memory the process may use (issue 36 item 6).

A fixed 512 MiB job limit made a full-size WebP of every RGBA image above ~13 MP a 413 on any
machine; the defaults now come from the cgroup limit or the machine's memory
(``assetgate.machine``), explicit settings win, and docs/configuration.md shows the figures."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import pyvips

from assetgate.machine import MIB, cgroup_limit, render_budget, usable_memory
from assetgate.settings import Settings
from tests.conftest import app_client

GIB = 1024 * MIB
REPO = Path(__file__).resolve().parents[1]


def test_the_formula_at_1_4_and_16_gb_is_the_documented_one() -> None:
    figures = {1: render_budget(1 * GIB), 4: render_budget(4 * GIB), 16: render_budget(16 * GIB)}
    assert figures == {1: 307 * MIB + 209715, 4: 2150 * MIB + 419430, 16: 9523 * MIB + 209715}
    docs = (REPO / "docs" / "configuration.md").read_text()
    for gigabytes, budget in figures.items():
        row = rf"\|\s*{gigabytes} GB\s*\|\s*{budget // MIB} MiB\s*\|\s*{budget // MIB} MiB\s*\|"
        assert re.search(row, docs), f"the {gigabytes} GB row of the budget table"
    assert render_budget(256 * MIB) == 256 * MIB  # never below the floor
    assert render_budget(4 * GIB, workers=2) == render_budget(4 * GIB) // 2


def test_a_cgroup_limit_is_read_and_no_limit_is_none(tmp_path: Path) -> None:
    own = [line.split(":", 2) for line in Path("/proc/self/cgroup").read_text().splitlines()]
    v2 = next((path for number, _, path in own if number == "0"), "/")
    folder = tmp_path / v2.lstrip("/")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "memory.max").write_text("max\n")
    assert cgroup_limit(tmp_path) is None
    (folder / "memory.max").write_text(f"{3 * GIB}\n")
    assert cgroup_limit(tmp_path) == 3 * GIB


def test_unset_budgets_are_derived_and_explicit_ones_win() -> None:
    derived = render_budget(usable_memory())
    settings = Settings()
    assert settings.render_memory_bytes == settings.render_job_memory_bytes == derived
    assert Settings(workers=2).render_memory_bytes == render_budget(usable_memory(), 2)
    explicit = Settings(render_job_memory_bytes=123 * MIB)
    assert explicit.render_job_memory_bytes == 123 * MIB
    assert explicit.render_memory_bytes == derived


@pytest.mark.anyio
async def test_a_49_mp_rgba_conversion_is_served_not_refused(
    make_settings: Callable[..., Settings], docroot: Path
) -> None:
    """Needs the budget of a 4 GB machine (the job counts ~1.9 GiB); skipped below that."""
    if render_budget(usable_memory()) < render_budget(4 * GIB):
        pytest.skip("this machine has less memory than the 4 GB the figure is stated for")
    side = 7000  # 49 MP
    alpha = (pyvips.Image.xyz(side, side)[0] % 256).cast("uchar")
    image = pyvips.Image.black(side, side, bands=3).bandjoin(alpha).copy(interpretation="srgb")
    image.pngsave(str(docroot / "poster.png"), compression=1)
    patient = make_settings(render_timeout_s=600, render_queue_wait_s=600)  # a loaded machine
    async with app_client(patient) as client:
        answer = await client.get("/poster.png?format=webp&quality=50", timeout=600)
    assert answer.status_code in (200, 503), answer.text  # shed under load, never a 413
    if answer.status_code == 200:
        webp = pyvips.Image.new_from_buffer(answer.content, "")
        assert (webp.width, webp.height, webp.bands) == (side, side, 4)
