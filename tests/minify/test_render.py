from __future__ import annotations

import gzip
from pathlib import Path

from assetgate.minify.render import render_asset, render_file
from assetgate.minify.spec import AssetPlan

CSS = b"a  {  color : red ;  }\n" * 50


def test_minify_then_gzip() -> None:
    out = render_asset(CSS, AssetPlan("css", "minify", "gzip", vary=True), max_bytes=10_000)
    assert out.encoding == "gzip"
    assert not out.unchanged
    assert out.note is None
    assert gzip.decompress(out.body) == b"a{color:red}" * 50
    assert out.original_size == len(CSS)


def test_gzip_that_would_not_shrink_is_not_used() -> None:
    out = render_asset(b"a{}", AssetPlan("css", "none", "gzip", vary=True), max_bytes=100)
    assert (out.body, out.encoding, out.unchanged) == (b"a{}", "identity", True)


def test_safe_mode_failure_serves_the_original_with_a_note() -> None:
    source = b"x = `never closed  \n\n"
    out = render_asset(source, AssetPlan("js", "safe", "identity", vary=False), max_bytes=100)
    assert out.body == source
    assert out.unchanged
    assert out.note is not None
    assert "safe" in out.note


def test_minifier_refusal_serves_the_original() -> None:
    source = "x = `${ `a` }` + `\ufdd0`;".encode()  # holds the placeholder: the minifier refuses
    out = render_asset(source, AssetPlan("js", "minify", "identity", vary=False), max_bytes=99)
    assert out.body == source
    assert out.unchanged
    assert out.note is not None
    assert out.note.startswith("minify failed: MinifyError")


def test_over_the_cap_is_served_unchanged() -> None:
    out = render_asset(CSS, AssetPlan("css", "minify", "gzip", vary=True), max_bytes=10)
    assert (out.body, out.unchanged, out.note) == (CSS, True, "over the asset size cap")


def test_render_file_reads_the_file(tmp_path: Path) -> None:
    path = tmp_path / "a.js"
    path.write_bytes(b"var  a = 1 ;  \n\n\nvar b;\n")
    out = render_file(path, AssetPlan("js", "safe", "identity", vary=False), 1000)
    assert out.body == b"var  a = 1 ;\nvar b;\n"
