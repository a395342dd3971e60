from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assetgate.packages.registry import (
    normalize_base,
    npm_config_registry,
    pick_registry,
    recorded_registry,
    registry_and_origin,
)
from tests.conftest import require


def never() -> str | None:
    raise AssertionError("npm must not be asked when a registry is configured")


def test_setting_wins() -> None:
    env = {"npm_config_registry": "http://127.0.0.2:1/"}
    assert pick_registry("http://127.0.0.1:4873", env, never) == "http://127.0.0.1:4873/"


@pytest.mark.parametrize("variable", ["npm_config_registry", "NPM_CONFIG_REGISTRY"])
def test_npm_environment_variable_is_next(variable: str) -> None:
    assert (
        pick_registry(None, {variable: "https://127.0.0.3/npm"}, never) == "https://127.0.0.3/npm/"
    )


def test_npm_client_is_last() -> None:
    assert pick_registry(None, {}, lambda: "http://127.0.0.4:8080/\n") == "http://127.0.0.4:8080/"
    assert pick_registry(None, {}, lambda: None, lambda: None) is None


@pytest.mark.parametrize("bad", ["", "ftp://127.0.0.1/", "file:///etc", "http://", "undefined"])
def test_unusable_urls_are_refused(bad: str) -> None:
    assert normalize_base(bad) is None


def test_the_real_npm_client_answers_with_a_url() -> None:
    require(shutil.which("npm") is not None, "npm is not installed")
    url = npm_config_registry()
    assert url is not None
    assert normalize_base(url) is not None


def test_the_registry_recorded_at_install_is_the_last_resort(tmp_path: Path) -> None:
    """Issue 36: in the image (no npm) every /npm/ file was 502 "no npm registry is configured".
    The bundler's install step records what npm said; the service reads it when nothing else
    names a registry."""
    recorded = tmp_path / "npm-registry"
    recorded.write_text("http://127.0.0.5:4873/\n")
    found = recorded_registry(recorded)
    assert found == "http://127.0.0.5:4873/"
    assert pick_registry(None, {}, lambda: None, lambda: found) == "http://127.0.0.5:4873/"
    assert pick_registry(None, {}, lambda: "http://127.0.0.6/", lambda: found) == (
        "http://127.0.0.6/"
    )
    assert recorded_registry(tmp_path / "none") is None
    _, origin = registry_and_origin(None, {}, lambda: None, lambda: found)
    assert origin.startswith("recorded at install in ")
