from __future__ import annotations

from pathlib import Path

import pytest

from assetgate.machine import usable_cores
from assetgate.settings import DEMO_ROOT, Settings, renamed_in_use


def test_defaults_serve_the_demo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSETGATE_ROOT", raising=False)
    assert Settings().root == DEMO_ROOT


def test_render_threads_default_to_one_more_than_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSETGATE_RENDER_WORKERS", raising=False)
    monkeypatch.delenv("ASSETGATE_WORKERS", raising=False)
    assert Settings().render_workers == usable_cores() + 1
    monkeypatch.setenv("ASSETGATE_RENDER_WORKERS", "2")
    assert Settings().render_workers == 2


def test_every_field_reads_its_environment_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ASSETGATE_ROOT", str(tmp_path))
    monkeypatch.setenv("ASSETGATE_PORT", "9123")
    monkeypatch.setenv("ASSETGATE_WHOIS_RESTRICTED_TLDS", "edu, mil,gov")
    monkeypatch.setenv("ASSETGATE_DISABLED_CODECS", "avif")
    settings = Settings()
    assert settings.root == tmp_path
    assert settings.port == 9123
    assert settings.whois_restricted_tlds == ["edu", "mil", "gov"]
    assert settings.disabled_codecs == ["avif"]


def test_invalid_values_are_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSETGATE_PORT", "70000")
    with pytest.raises(ValueError, match="port"):
        Settings()


def test_work_dir_must_be_an_existing_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ASSETGATE_WORK_DIR", str(tmp_path))
    assert Settings().work_dir == tmp_path
    monkeypatch.setenv("ASSETGATE_WORK_DIR", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="work_dir"):
        Settings()


def test_source_timeouts_read_their_old_names_for_one_release(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSETGATE_ORIGIN_READ_TIMEOUT_S", "7")
    monkeypatch.setenv("ASSETGATE_ORIGIN_CONNECT_TIMEOUT_S", "1.5")
    settings = Settings()
    assert (settings.source_read_timeout_s, settings.source_connect_timeout_s) == (7.0, 1.5)
    assert renamed_in_use() == [
        ("ASSETGATE_ORIGIN_CONNECT_TIMEOUT_S", "ASSETGATE_SOURCE_CONNECT_TIMEOUT_S"),
        ("ASSETGATE_ORIGIN_READ_TIMEOUT_S", "ASSETGATE_SOURCE_READ_TIMEOUT_S"),
    ]
    monkeypatch.setenv("ASSETGATE_SOURCE_READ_TIMEOUT_S", "9")  # the new name wins
    assert Settings().source_read_timeout_s == 9.0
    assert Settings(source_read_timeout_s=4).source_read_timeout_s == 4.0
