"""The shared head: each page gets its own title and script, and only its own link is current."""

from __future__ import annotations

from importlib import resources

import pytest

from assetgate.ui.pages import PAGES, TEMPLATE, assemble

STATIC = resources.files("assetgate.ui") / "static"


@pytest.mark.parametrize("path", list(PAGES))
def test_page_is_template_around_its_body(path: str) -> None:
    page = PAGES[path]
    body = (STATIC / page.body).read_text()
    html = assemble((STATIC / TEMPLATE).read_text(), path, page, body).decode()
    assert html.startswith("<!doctype html>")
    assert f"<title>{page.title} · assetgate</title>" in html
    assert f'<script src="/ui/static/{page.script}" defer></script>' in html
    assert html.count('aria-current="page"') == 1
    assert f'<a href="/ui/{path}" aria-current="page">' in html
    assert html.endswith(f"{body}</body>\n</html>\n")
    assert "{" not in html.split("<main>")[0]
