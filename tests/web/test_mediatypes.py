from __future__ import annotations

import pytest

from assetgate.web.mediatypes import media_type


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("dist/app.js", "application/javascript; charset=utf-8"),
        ("app.MJS", "application/javascript; charset=utf-8"),
        ("a.cjs", "application/javascript; charset=utf-8"),
        ("site.css", "text/css; charset=utf-8"),
        ("a.map", "application/json; charset=utf-8"),
        ("photo.jpeg", "image/jpeg"),
        ("index.html", "text/html; charset=utf-8"),
        ("types.ts", "text/plain; charset=utf-8"),
        ("LICENSE", "text/plain; charset=utf-8"),
        (".npmignore", "text/plain; charset=utf-8"),
        ("archive.unknown", "application/octet-stream"),
        ("noext", "application/octet-stream"),
    ],
)
def test_one_type_per_name(name: str, expected: str) -> None:
    assert media_type(name) == expected


@pytest.mark.parametrize("name", ["a.html", "b.HTM", "c.xhtml", "d.xml"])
def test_documents_can_be_served_as_text(name: str) -> None:
    assert media_type(name, documents_as_text=True) == "text/plain; charset=utf-8"
    assert media_type(name) != "text/plain; charset=utf-8"
    assert media_type("a.js", documents_as_text=True) == "application/javascript; charset=utf-8"
