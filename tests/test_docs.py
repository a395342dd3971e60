"""The README must document every setting and start with the two commands."""

from __future__ import annotations

import re
from pathlib import Path

from assetgate.settings import Settings

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_setting_is_in_the_configuration_table() -> None:
    text = README.read_text()
    documented = set(re.findall(r"^\|\s*`(ASSETGATE_[A-Z0-9_]+)`", text, flags=re.MULTILINE))
    expected = {f"ASSETGATE_{name.upper()}" for name in Settings.model_fields}
    assert expected - documented == set(), "undocumented settings"
    assert documented - expected == set(), "documented settings that do not exist"


def test_readme_opens_with_the_two_commands() -> None:
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert "pip install . && assetgate serve" in blocks[0]
    assert "./scripts/test" in blocks[1]
