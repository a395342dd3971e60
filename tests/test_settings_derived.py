"""Budgets derived from the machine's cores (issue 37 step 4): the cgroup's CPU quota and the
affinity lower what ``os.cpu_count`` says; explicit settings win; ``0`` means derive."""

from __future__ import annotations

from pathlib import Path

import pytest

from assetgate import machine
from assetgate.machine import cgroup_cpus, helper_workers, render_workers, usable_cores
from assetgate.settings import Settings


def _own_v2_dir(root: Path) -> Path:
    own = [line.split(":", 2) for line in Path("/proc/self/cgroup").read_text().splitlines()]
    v2 = next((path for number, _, path in own if number == "0"), "/")
    folder = root / v2.lstrip("/")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_cpu_quota_is_read_and_no_quota_is_none(tmp_path: Path) -> None:
    folder = _own_v2_dir(tmp_path)
    (folder / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpus(tmp_path) is None
    (folder / "cpu.max").write_text("150000 100000\n")
    assert cgroup_cpus(tmp_path) == 1.5


def test_the_quota_lowers_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine.os, "sched_getaffinity", lambda pid: set(range(16)))
    monkeypatch.setattr(machine, "cgroup_cpus", lambda: 1.5)
    assert usable_cores() == 2  # rounded up
    monkeypatch.setattr(machine, "cgroup_cpus", lambda: None)
    assert usable_cores() == 16


def test_the_formulas() -> None:
    assert [render_workers(cores) for cores in (1, 2, 16)] == [2, 3, 17]
    assert render_workers(16, workers=4) == 5
    assert render_workers(2, workers=4) == 2  # never fewer than one thread per core share + 1
    assert [helper_workers(cores) for cores in (1, 2, 3, 16)] == [1, 1, 1, 8]


def test_unset_pools_follow_the_cores_and_explicit_ones_win(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("RENDER_WORKERS", "MINIFY_WORKERS", "ESM_BUILD_WORKERS", "WORKERS"):
        monkeypatch.delenv(f"ASSETGATE_{name}", raising=False)
    monkeypatch.setattr("assetgate.settings.derived.usable_cores", lambda: 8)
    settings = Settings()
    assert (settings.render_workers, settings.minify_workers, settings.esm_build_workers) == (
        9,
        4,
        4,
    )
    assert Settings(workers=2).render_workers == 5
    monkeypatch.setenv("ASSETGATE_MINIFY_WORKERS", "0")  # the documented "derive"
    monkeypatch.setenv("ASSETGATE_RENDER_WORKERS", "2")
    monkeypatch.setenv("ASSETGATE_ESM_BUILD_WORKERS", "3")
    settings = Settings()
    assert (settings.render_workers, settings.minify_workers, settings.esm_build_workers) == (
        2,
        4,
        3,
    )
