from __future__ import annotations

from assetgate.packages.merge import Hit, merge_hits, rank_hits


def pkg(name: str, version: str, rank: int = 0, description: str = "") -> Hit:
    return Hit(name, version, description, "package", f"/npm/{name}@{version}/", rank)


def lib(name: str, version: str, rank: int = 0, description: str = "") -> Hit:
    return Hit(name, version, description, "library", f"/npm/lib/{name}@{version}/a.js", rank)


def test_js_pair_of_the_same_version_merges_into_the_plain_name() -> None:
    merged = merge_hits([pkg("lodash", "4.17.21"), lib("lodash.js", "4.17.21", description="Lo")])
    assert merged == [Hit("lodash", "4.17.21", "Lo", "package", "/npm/lodash@4.17.21/", 0)]


def test_plain_library_absorbs_a_js_package_and_keeps_its_kind_and_url() -> None:
    merged = merge_hits([pkg("three.js", "1.0.0", rank=3), lib("three", "1.0.0", rank=1)])
    assert [(h.name, h.kind, h.url, h.rank) for h in merged] == [
        ("three", "library", "/npm/lib/three@1.0.0/a.js", 1)
    ]


def test_suffix_is_compared_case_insensitively_but_the_rest_exactly() -> None:
    assert [h.name for h in merge_hits([pkg("moment", "2.30.1"), lib("moment.JS", "2.30.1")])] == [
        "moment"
    ]
    kept = merge_hits([pkg("chart", "4.4.0"), lib("Chart.js", "4.4.0")])
    assert [h.name for h in kept] == ["chart", "Chart.js"]


def test_different_versions_are_not_merged() -> None:
    kept = merge_hits([pkg("three", "0.160.0"), lib("three.js", "r160")])
    assert [h.name for h in kept] == ["three", "three.js"]


def test_own_description_wins_and_an_empty_one_is_filled() -> None:
    merged = merge_hits(
        [pkg("a", "1.0.0", description="mine"), lib("a.js", "1.0.0", description="x")]
    )
    assert merged[0].description == "mine"


def test_same_name_up_to_case_across_catalogs_keeps_the_package() -> None:
    merged = merge_hits([lib("Chart.js", "4.4.0", rank=0), pkg("chart.js", "4.4.0", rank=2)])
    assert [(h.name, h.kind, h.rank) for h in merged] == [("chart.js", "package", 0)]


def test_name_is_never_invented() -> None:
    merged = merge_hits([pkg("vue", "3.4.0"), lib("vue.js.js", "3.4.0"), lib("vuejs", "3.4.0")])
    assert sorted(h.name for h in merged) == ["vue", "vue.js.js", "vuejs"]


def test_rank_exact_then_prefix_then_rest_interleaving_catalogs() -> None:
    hits = [
        pkg("react-dom", "18.0.0", rank=0),
        pkg("preact", "10.0.0", rank=1),
        pkg("react", "18.0.0", rank=2),
        pkg("react-router", "6.0.0", rank=3),
        lib("react-is", "18.0.0", rank=0),
        lib("reactstrap", "9.0.0", rank=1),
        lib("react.js", "0.14.0", rank=2),
        lib("zreact", "1.0.0", rank=3),
    ]
    ranked = [h.name for h in rank_hits(hits, "React")]
    assert ranked == [
        "react",  # tier 0
        "react.js",  # tier 0 (exact after stripping .js)
        "react-dom",  # tier 1, npm #0
        "react-is",  # tier 1, catalog #0
        "reactstrap",  # tier 1, catalog #1
        "react-router",  # tier 1, npm #3
        "preact",  # tier 2, npm #1
        "zreact",  # tier 2, catalog #3
    ]


def test_query_with_js_suffix_matches_the_plain_name_exactly() -> None:
    ranked = rank_hits(
        [pkg("lodash-es", "4.0.0", rank=0), pkg("lodash", "4.0.0", rank=5)], "lodash.js"
    )
    assert [h.name for h in ranked] == ["lodash", "lodash-es"]


def test_ties_put_the_package_first() -> None:
    ranked = rank_hits([lib("abc-x", "1", rank=0), pkg("abc-y", "1", rank=0)], "abc")
    assert [h.kind for h in ranked] == ["package", "library"]
