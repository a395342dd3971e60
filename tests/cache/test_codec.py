"""The disk and Redis codec (pydantic ``TypeAdapter``) reads what the hand-written codec before it
wrote: a rolling upgrade or a warm disk keeps its entries instead of recomputing them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from assetgate.cache import CodecError, dataclass_codec
from assetgate.packages.catalogs import LibraryVersion
from assetgate.packages.versions import Dist, Packument

# Written by the previous codec (cache/codec.py before the TypeAdapter): byte for byte.
OLD_PACKUMENT = (
    b'{"name":"left-pad","dist_tags":{"latest":"1.3.0"},"dists":{"1.3.0":{"tarball":'
    b'"http://r/left-pad-1.3.0.tgz","integrity":"sha512-abc","shasum":null},"1.2.0":{"tarball":'
    b'"http://r/x.tgz","integrity":null,"shasum":"deadbeef"}},"deprecated":["1.1.0","1.2.0"],'
    b'"description":"pad"}'
)
PACKUMENT = Packument(
    "left-pad",
    {"latest": "1.3.0"},
    {
        "1.3.0": Dist("http://r/left-pad-1.3.0.tgz", "sha512-abc", None),
        "1.2.0": Dist("http://r/x.tgz", None, "deadbeef"),
    },
    frozenset({"1.2.0", "1.1.0"}),
    "pad",
)


@dataclass(frozen=True, slots=True)
class Stamped:
    at: datetime
    names: tuple[str, ...] = ()


def test_an_entry_the_previous_codec_wrote_still_reads() -> None:
    codec = dataclass_codec(Packument)
    back = codec.decode(OLD_PACKUMENT)
    assert back == PACKUMENT
    assert isinstance(back.deprecated, frozenset)
    written = json.loads(codec.encode(PACKUMENT))  # and the format is the same one
    expected = json.loads(OLD_PACKUMENT)
    assert sorted(written.pop("deprecated")) == expected.pop("deprecated")  # a set: any order
    assert written == expected


def test_a_previous_datetime_with_an_offset_reads_as_the_same_instant() -> None:
    codec = dataclass_codec(Stamped)
    when = datetime(2024, 5, 1, 12, 30, tzinfo=UTC)
    assert codec.decode(b'{"at":"2024-05-01T12:30:00+00:00","names":["a"]}') == Stamped(
        when, ("a",)
    )
    assert codec.decode(codec.encode(Stamped(when))) == Stamped(when)


def test_a_library_version_round_trips_with_its_frozenset() -> None:
    codec = dataclass_codec(LibraryVersion)
    value = LibraryVersion(frozenset({"a.js", "b/c.css"}), {"a.js": "sha384-x"})
    assert codec.decode(codec.encode(value)) == value


@pytest.mark.parametrize(
    "stored",
    [
        b"",
        b"[]",
        b'{"name":"x"}',  # fields missing
        b'{"name":1,"dist_tags":{},"dists":{}}',  # a number where a name is declared
        b'{"name":"x","dist_tags":{},"dists":{"1.0.0":{"tarball":null}}}',
    ],
)
def test_what_is_not_a_stored_value_is_a_codec_error_naming_the_type(stored: bytes) -> None:
    with pytest.raises(CodecError, match="not a stored Packument"):
        dataclass_codec(Packument).decode(stored)
