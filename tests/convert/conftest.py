from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def private_tmp(tmp_path: Path) -> Path:
    """ASSETGATE_WORK_DIR of every app ``make_settings`` builds: a test sees what is left there."""
    directory = tmp_path / "work"
    directory.mkdir(exist_ok=True)
    return directory
