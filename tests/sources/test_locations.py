"""Mount parsing and the address guard: pure functions, no servers."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from pydantic import ValidationError

from assetgate.settings import Settings
from assetgate.sources.guard import public
from assetgate.sources.locations import Bucket, Directory, Origin, parse_mounts, split


def test_mounts_longest_prefix_first_and_root_last() -> None:
    mounts = parse_mounts(
        Path("/srv/img"),
        {"/products/": "s3://shop/images", "products/thumbs": "https://cdn.example:8443/t/"},
    )
    assert [m.prefix for m in mounts] == ["products/thumbs/", "products/", ""]
    assert mounts[0].location == Origin("https", "cdn.example", 8443, "/t")
    assert mounts[1].location == Bucket("shop", "images")
    assert mounts[2].location == Directory(Path("/srv/img"))
    found = split(mounts, "products/thumbs/a.jpg")
    assert found is not None
    assert found[0] is mounts[0]
    assert found[1] == "a.jpg"
    found = split(mounts, "products/a.jpg")
    assert found is not None
    assert found[0].name == "/products/"
    assert found[1] == "a.jpg"
    assert split(mounts, "products/") is None


def test_root_url_is_kept_as_text() -> None:
    settings = Settings(root="s3://bucket/a/b")
    assert settings.root == "s3://bucket/a/b"
    assert Settings(root="/tmp").root == Path("/tmp")


@pytest.mark.parametrize(
    "value",
    ["ftp://host/x", "s3://", "http://user:secret@host/", "http://host/?a=1", "http://h:99999/"],
)
def test_bad_source_urls_stop_the_start(value: str) -> None:
    with pytest.raises(ValidationError) as info:
        Settings(root=value)
    assert "secret" not in str(info.value).replace("http://user:secret@host/", "")


def test_sources_must_be_a_json_object() -> None:
    with pytest.raises(ValidationError, match="prefix -> source"):
        Settings(sources="[1, 2]")
    assert Settings(sources='{"a/": "http://h/x"}').sources == {"a/": "http://h/x"}


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "fe80::1", "fc00::1", "ff02::1",
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "64:ff9b::7f00:1",
        "64:ff9b:1::a00:1", "2002:7f00:1::", "2002:a00:1::", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "192.0.2.1", "2001:db8::1",
        # Issue 35, item 12: IPv4-compatible and SIIT forms of loopback and private addresses.
        "::127.0.0.1", "::10.0.0.1", "::ffff:0:7f00:1", "::ffff:0:a00:1", "::ffff:0:c0a8:101",
        "::", "::0.0.0.1", "64:ff9b::c0a8:101", "2002:c0a8:101::1", "2002:6440:1::",
        "100::1", "3fff::1", "4000::1",
    ],
)  # fmt: skip
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not public(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    [
        "93.184.215.14", "2606:4700::1111", "::ffff:93.184.215.14", "64:ff9b::5db8:d70e",
        "::ffff:0:5db8:d70e", "2002:5db8:d70e::1",
    ],
)  # fmt: skip
def test_public_addresses_pass(address: str) -> None:
    assert public(ipaddress.ip_address(address))
