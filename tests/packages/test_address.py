from __future__ import annotations

import pytest

from assetgate.packages.address import LibraryAddress, PackageAddress, parse_address


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("jquery@3.7.1/", PackageAddress("jquery", "3.7.1", None)),
        ("jquery@3.7.1", PackageAddress("jquery", "3.7.1", None)),
        ("jquery", PackageAddress("jquery", "", None)),
        (
            "jquery@3.7.1/dist/jquery.min.js",
            PackageAddress("jquery", "3.7.1", "dist/jquery.min.js"),
        ),
        ("jquery@%5E3/dist/", PackageAddress("jquery", "^3", "dist", directory=True)),
        ("@popperjs/core@2.11.8/", PackageAddress("@popperjs/core", "2.11.8", None)),
        ("%40popperjs/core@2/dist/a.js", PackageAddress("@popperjs/core", "2", "dist/a.js")),
        ("htmx.org@1.9.12/dist/htmx.js", PackageAddress("htmx.org", "1.9.12", "dist/htmx.js")),
        ("a@%3E%3D1%20%3C2/", PackageAddress("a", ">=1 <2", None)),
        # The library route: lib/<name>@<version>/<file>.
        ("lib/jquery@3.7.1/jquery.min.js", LibraryAddress("jquery", "3.7.1", "jquery.min.js")),
        ("lib/Chart.js@4.4.0/chart.umd.js", LibraryAddress("Chart.js", "4.4.0", "chart.umd.js")),
        ("lib/three.js@r160/three.min.js", LibraryAddress("three.js", "r160", "three.min.js")),
        # ...and the npm package literally named "lib".
        ("lib@1.0.0/index.js", PackageAddress("lib", "1.0.0", "index.js")),
        ("lib/index.js", PackageAddress("lib", "", "index.js")),
        ("lib", PackageAddress("lib", "", None)),
        ("lib/", PackageAddress("lib", "", None)),
        ("lib/dist/lib.js", PackageAddress("lib", "", "dist/lib.js")),
    ],
)
def test_addresses(raw: str, expected: object) -> None:
    assert parse_address(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "@scope",
        "@scope/",
        ".hidden@1.0.0/",
        "_private@1.0.0/",
        "node_modules@1.0.0/",
        "a b@1.0.0/",
        "pkg@1.0.0/../secret",
        "pkg@1.0.0/%2e%2e/secret",
        "pkg@1.0.0/a%2fb.js",
        "pkg@1.0.0/a%5cb.js",
        "pkg@1.0.0/a%00.js",
        "pkg@1.0.0/a//b.js",
        "pkg@1.0.0/./a.js",
        "pkg@1;rm/",
        "pkg@" + "1" * 300 + "/",
        "x" * 215 + "@1.0.0/",
        "lib/jquery@3.7.1/../x.js",
        "lib/jquery@3.7.1/dist/",
        "lib/jq uery@3.7.1/a.js",
        "lib/jquery@3.7.1;x/a.js",
        "pkg@1.0.0/%ff.js",
    ],
)
def test_unsafe_or_malformed_addresses_are_refused(raw: str) -> None:
    assert parse_address(raw) is None


def test_with_version_keeps_the_file_and_folder_form() -> None:
    assert PackageAddress("a", "^1", None).with_version("1.2.3") == "/npm/a@1.2.3/"
    assert PackageAddress("@s/a", "", "x/y.js").with_version("2.0.0") == "/npm/@s/a@2.0.0/x/y.js"
    assert PackageAddress("a", "^1", "d", directory=True).with_version("1.0.0") == "/npm/a@1.0.0/d/"
    assert PackageAddress("a", "", "x y?.js").with_version("1.0.0") == "/npm/a@1.0.0/x%20y%3F.js"
