"""The docs must document every setting; the README opens with the two commands and stays short."""

from __future__ import annotations

import re
from pathlib import Path

from assetgate.settings import Settings

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"


def test_every_setting_is_in_the_configuration_page() -> None:
    text = (DOCS / "configuration.md").read_text()
    documented = set(re.findall(r"^\|\s*`(ASSETGATE_[A-Z0-9_]+)`", text, flags=re.MULTILINE))
    expected = {f"ASSETGATE_{name.upper()}" for name in Settings.model_fields}
    assert expected - documented == set(), "undocumented settings"
    assert documented - expected == set(), "documented settings that do not exist"


def test_readme_opens_with_the_two_commands() -> None:
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert blocks[0].strip() == "./scripts/serve"
    assert blocks[1].strip() == "./scripts/test"


def test_readme_fits_on_a_screen_and_links_into_docs() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 60
    links = re.findall(r"\]\(([^)]+)\)", text)
    assert {"docs/optimizer.md", "docs/configuration.md", "docs/deploying.md"} <= set(links)


def test_no_link_points_outside_the_repository() -> None:
    for page in [README, *DOCS.glob("*.md")]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            assert "://" not in target, f"{page.name} links outside: {target}"
            resolved = (page.parent / target).resolve()
            assert resolved.is_relative_to(REPO), f"{page.name} links outside: {target}"
            assert resolved.exists(), f"{page.name} links to a missing file: {target}"
