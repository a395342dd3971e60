from __future__ import annotations

import shutil

import pytest

from assetgate.packages.registry import normalize_base, npm_config_registry, pick_registry
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
    assert pick_registry(None, {}, lambda: None) is None


@pytest.mark.parametrize("bad", ["", "ftp://127.0.0.1/", "file:///etc", "http://", "undefined"])
def test_unusable_urls_are_refused(bad: str) -> None:
    assert normalize_base(bad) is None


def test_the_real_npm_client_answers_with_a_url() -> None:
    require(shutil.which("npm") is not None, "npm is not installed")
    url = npm_config_registry()
    assert url is not None
    assert normalize_base(url) is not None
