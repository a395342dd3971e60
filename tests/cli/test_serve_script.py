"""``./scripts/serve`` reinstalls only when pyproject.toml or the lock changed: a restart starts at
once.

Run for real on a tiny project with the same layout (its own venv, pip, setuptools), so the test
does not reinstall assetgate itself."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # scripts/serve builds a venv

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = """[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"
[project]
name = "tinyag"
version = "0.0.1"
description = "{description}"
[project.scripts]
assetgate = "tinyag:main"
"""


def run_serve(project: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    result = subprocess.run(
        [str(project / "scripts" / "serve"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def installed(project: Path) -> tuple[str, tuple[int, int]]:
    """The installed distribution's summary and its METADATA file's identity (new on reinstall):
    inode and modification time, since a file system may give a new file the inode just freed."""
    found = list((project / ".venv" / "lib").glob("python3*/site-packages/tinyag-*.dist-info"))
    assert len(found) == 1, found
    metadata = found[0] / "METADATA"
    summary = next(line for line in metadata.read_text().splitlines() if line.startswith("Summary"))
    info = metadata.stat()
    return summary, (info.st_ino, info.st_mtime_ns)


def test_restart_skips_pip_until_pyproject_or_the_lock_changes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy2(REPO / "scripts" / "serve", project / "scripts" / "serve")
    package = project / "src" / "tinyag"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import sys\n\ndef main() -> int:\n    print('served', *sys.argv[1:])\n    return 0\n"
    )
    (project / "pyproject.toml").write_text(PYPROJECT.format(description="first"))
    (project / "requirements.lock").write_text("")  # the tiny project depends on nothing

    assert run_serve(project, "--port", "1") == "served serve --port 1\n"
    first = installed(project)
    assert first[0] == "Summary: first"

    assert run_serve(project, "--port", "2") == "served serve --port 2\n"
    assert installed(project) == first  # not reinstalled

    (project / "pyproject.toml").write_text(PYPROJECT.format(description="second"))
    assert run_serve(project, "--port", "3") == "served serve --port 3\n"
    summary, inode = installed(project)
    assert summary == "Summary: second"
    assert inode != first[1]

    (project / "requirements.lock").write_text("# pins changed\n")
    assert run_serve(project, "--port", "4") == "served serve --port 4\n"
    assert installed(project)[1] != inode  # a new lock is installed too
