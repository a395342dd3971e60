"""The lock files pin what pyproject.toml asks for, and the tests run on exactly those pins.

``requirements.lock`` (the service) and ``requirements-test.lock`` (the service and its tests) are
made by ``uv pip compile`` (the command is in each file's head); pyproject.toml keeps the ranges.
A dependency added to pyproject.toml without compiling the locks again fails here.
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^ \\;]+)", re.MULTILINE)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: str) -> dict[str, str]:
    return {canonical(n): v for n, v in PIN.findall((REPO / lock).read_text())}


def requirement_names(requirements: list[str]) -> set[str]:
    return {canonical(re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0]) for r in requirements}


PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


@pytest.mark.parametrize(
    ("lock", "requirements"),
    [
        ("requirements.lock", PROJECT["dependencies"]),
        (
            "requirements-test.lock",
            PROJECT["dependencies"] + PROJECT["optional-dependencies"]["test"],
        ),
    ],
)
def test_each_lock_pins_every_dependency_with_hashes(lock: str, requirements: list[str]) -> None:
    pinned = pins(lock)
    assert requirement_names(requirements) - set(pinned) == set()
    text = (REPO / lock).read_text()
    assert text.count("--hash=sha256:") >= len(pinned)  # pip installs it with --require-hashes


def test_the_service_lock_agrees_with_the_test_lock() -> None:
    service, tested = pins("requirements.lock"), pins("requirements-test.lock")
    assert {name: tested.get(name) for name in service} == service


def test_the_tests_run_on_the_pinned_versions() -> None:
    mismatched = {}
    for name, pinned in pins("requirements-test.lock").items():
        try:
            found = version(name)
        except PackageNotFoundError:
            continue  # a dependency of another platform or Python (a marker left it out)
        if found != pinned:
            mismatched[name] = (found, pinned)
    assert mismatched == {}
