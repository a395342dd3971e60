from __future__ import annotations

import pytest

from assetgate.packages.versions import Dist, Packument, is_exact, resolve_version

VERSIONS = ["1.0.0", "1.2.3", "1.3.0", "2.0.0-beta.1", "2.0.0", "2.1.0", "3.0.0-rc.1"]
DIST = Dist("http://127.0.0.1/x.tgz", None, None)


def packument(latest: str = "2.0.0", deprecated: frozenset[str] = frozenset()) -> Packument:
    return Packument(
        name="demo",
        dist_tags={"latest": latest, "beta": "2.0.0-beta.1", "next": "3.0.0-rc.1"},
        dists=dict.fromkeys(VERSIONS, DIST),
        deprecated=deprecated,
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("1.2.3", "1.2.3"),
        ("", "2.0.0"),
        ("*", "2.0.0"),
        ("latest", "2.0.0"),
        ("beta", "2.0.0-beta.1"),
        ("next", "3.0.0-rc.1"),
        ("^1", "1.3.0"),
        ("~1.2", "1.2.3"),
        ("1.x", "1.3.0"),
        (">=1 <2", "1.3.0"),
        ("^2", "2.0.0"),  # latest satisfies the range: npm-pick-manifest prefers it
        ("^2.1", "2.1.0"),
        ("1 || 2.1", "2.1.0"),
        ("^3.0.0-rc.0", "3.0.0-rc.1"),
        ("^4", None),
        ("9.9.9", None),
        ("nosuchtag", None),
    ],
)
def test_resolve(spec: str, expected: str | None) -> None:
    assert resolve_version(packument(), spec) == expected


def test_deprecated_versions_lose_to_fresh_ones() -> None:
    doc = packument(latest="2.1.0", deprecated=frozenset({"1.3.0"}))
    assert resolve_version(doc, "^1") == "1.2.3"
    doc = packument(latest="2.1.0", deprecated=frozenset(VERSIONS))
    assert resolve_version(doc, "^1") == "1.3.0"  # all deprecated: still an answer


@pytest.mark.parametrize(
    ("spec", "exact"),
    [("1.2.3", True), ("1.0.0-beta.1", True), ("^1", False), ("1.2", False), ("latest", False)],
)
def test_is_exact(spec: str, exact: bool) -> None:
    assert is_exact(spec) is exact
