from __future__ import annotations

import pytest

from assetgate.errors import AppError
from assetgate.minify.spec import AssetPlan, AssetSpec, kind_of, make_asset_plan, parse_asset_spec


@pytest.mark.parametrize(
    ("query", "spec"),
    [
        ({}, AssetSpec()),
        ({"min": "1"}, AssetSpec(minify=True)),
        ({"min": "0", "compress": "1", "safe": "1"}, AssetSpec(compress=True, safe=True)),
        ({"width": "abc", "format": "nope", "file": "x.js"}, AssetSpec()),  # image params ignored
    ],
)
def test_parse(query: dict[str, str], spec: AssetSpec) -> None:
    assert parse_asset_spec(query) == spec


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"min": "true"}, "min"),
        ({"min": "2"}, "min"),
        ({"min": ""}, "min"),
        ({"compress": "yes"}, "compress"),
        ({"safe": " 1"}, "safe"),
        ({"min": "1", "safe": "-1"}, "safe"),
    ],
)
def test_only_0_or_1_is_accepted(query: dict[str, str], param: str) -> None:
    with pytest.raises(AppError) as caught:
        parse_asset_spec(query)
    assert (caught.value.status, caught.value.param) == (400, param)
    assert caught.value.message.startswith(f"{param}: expected 0 or 1")


@pytest.mark.parametrize(
    ("path", "kind"),
    [("a.css", "css"), ("a/b.JS", "js"), ("m.mjs", "js"), ("x.cjs", None), ("css", None)],
)
def test_kind_of(path: str, kind: str | None) -> None:
    assert kind_of(path) == kind


def plan(
    spec: AssetSpec, kind: str = "js", accept: str | None = "gzip", size: int = 10
) -> AssetPlan:
    return make_asset_plan(spec, kind, accept_encoding=accept, size=size, max_bytes=100)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "kind", "accept", "expected"),
    [
        (AssetSpec(), "js", "gzip", ("none", "identity", False)),
        (AssetSpec(minify=True), "css", None, ("minify", "identity", False)),
        (AssetSpec(safe=True), "js", None, ("safe", "identity", False)),
        (AssetSpec(minify=True, safe=True), "js", None, ("safe", "identity", False)),
        (AssetSpec(minify=True, safe=True), "css", None, ("minify", "identity", False)),
        (AssetSpec(safe=True), "css", None, ("none", "identity", False)),
        (AssetSpec(compress=True), "js", "gzip, br", ("none", "gzip", True)),
        (AssetSpec(compress=True), "js", "br;q=1, gzip;q=0", ("none", "identity", True)),
        (AssetSpec(compress=True), "js", "*;q=0.5", ("none", "gzip", True)),
        (AssetSpec(compress=True), "js", "identity", ("none", "identity", True)),
        (AssetSpec(compress=True), "js", None, ("none", "identity", True)),
        (AssetSpec(minify=True, compress=True), "css", "GZIP;q=0.3", ("minify", "gzip", True)),
    ],
)
def test_make_plan(
    spec: AssetSpec, kind: str, accept: str | None, expected: tuple[str, str, bool]
) -> None:
    made = plan(spec, kind, accept)
    assert (made.transform, made.encoding, made.vary) == expected
    assert made.is_passthrough is (expected[:2] == ("none", "identity"))


def test_over_the_size_cap_nothing_is_done() -> None:
    made = plan(AssetSpec(minify=True, compress=True), size=101)
    assert made.is_passthrough
    assert made.oversize
    assert made.vary
    assert not plan(AssetSpec(), size=101).oversize  # nothing asked: nothing skipped
