"""The result store's reads against a real SeaweedFS: one ranged GET gives the whole object, and
an empty object (its 416) is a miss, not a store failure; a store that ignores ranges gets whole
reads. Issue 35, item 5: entries are sealed with a keyed MAC, so a forged, moved or foreign entry
is a miss with one warning, and an object over the largest entry is never read whole."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from obstore.store import S3Store

from assetgate.cache import ObjectTier
from assetgate.cache.objects import OK, OVERHEAD, mac_key, seal
from assetgate.operations.metrics import Metrics
from tests.serve_process import pick_port
from tests.sources.servers import Seaweed

pytestmark = pytest.mark.anyio

KEY = mac_key("the secret every node of this test shares, 32+")
MAX_ENTRY = 4 * 1024 * 1024


def tier_of(store: S3Store, metrics: Metrics, key: bytes = KEY) -> ObjectTier:
    return ObjectTier(store, key=key, max_entry_bytes=MAX_ENTRY, results=metrics.result_store)


async def test_a_read_gives_the_whole_object_and_an_empty_one_is_a_miss(
    weed: Seaweed, bucket: str
) -> None:
    metrics = Metrics.build()
    tier = tier_of(weed.store(bucket), metrics)
    whole = os.urandom(300_000)
    weed.put(bucket, "entry", seal(KEY, "entry", whole))
    weed.put(bucket, "empty", b"")
    assert await tier.get("entry") == whole
    assert await tier.get("empty") is None
    assert await tier.get("absent") is None
    assert tier.available
    assert tier.state == OK
    sample = metrics.registry.get_sample_value
    counts = {
        result: sample("assetgate_result_store_requests_total", {"result": result})
        for result in ("hit", "miss", "error")
    }
    assert counts == {"hit": 1, "miss": 2, "error": None}


class _RangeIgnoringStore(BaseHTTPRequestHandler):
    """An S3-like server that answers every GET with the whole object and a 200, whatever its
    Range (HTTP allows it; some stores and proxies do): the signature is not checked."""

    protocol_version = "HTTP/1.1"
    body = b""
    ranges: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        type(self).ranges.append(self.headers.get("Range"))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.send_header("ETag", '"e1"')
        self.send_header("Last-Modified", "Wed, 25 Nov 2026 12:00:00 GMT")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def range_ignoring_store() -> Iterator[str]:
    _RangeIgnoringStore.body = seal(KEY, "entry", os.urandom(70_000))
    _RangeIgnoringStore.ranges = []
    server = ThreadingHTTPServer(("127.0.0.1", pick_port()), _RangeIgnoringStore)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_store_that_ignores_ranges_gets_whole_reads_and_is_never_down(
    range_ignoring_store: str, caplog: pytest.LogCaptureFixture
) -> None:
    metrics = Metrics.build()
    store = S3Store(
        "results",
        endpoint=range_ignoring_store,
        access_key_id="k",
        secret_access_key="s",
        region="us-east-1",
        virtual_hosted_style_request=False,
        client_options={"allow_http": True},
        retry_config={"max_retries": 0},
    )
    tier = tier_of(store, metrics)
    for _ in range(2):
        assert await tier.get("entry") == _RangeIgnoringStore.body[OVERHEAD:]
    assert tier.available
    assert tier.state == OK
    assert _RangeIgnoringStore.ranges[0] is not None  # tried once with a range...
    assert _RangeIgnoringStore.ranges[1:] == [None, None]  # ...then whole reads only
    sample = metrics.registry.get_sample_value
    assert sample("assetgate_result_store_requests_total", {"result": "hit"}) == 2
    assert sample("assetgate_result_store_requests_total", {"result": "error"}) is None
    assert [r.getMessage() for r in caplog.records if r.name == "assetgate.cache"] == [
        "result store ignores ranged reads; reading whole objects"
    ]


def results_of(metrics: Metrics) -> dict[str, float | None]:
    sample = metrics.registry.get_sample_value
    return {
        result: sample("assetgate_result_store_requests_total", {"result": result})
        for result in ("hit", "invalid")
    }


async def test_only_entries_sealed_with_the_shared_key_under_their_name_are_hits(
    weed: Seaweed, bucket: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: an entry anyone with write access forged (the unkeyed packed form) was a hit."""
    metrics = Metrics.build()
    tier = tier_of(weed.store(bucket), metrics)
    real = os.urandom(10_000)
    writer = tier.put_later("images/real", real)
    assert writer is not None
    await writer
    forged = os.urandom(10_000)
    weed.put(bucket, "images/forged", forged)  # not sealed at all
    other = mac_key("another deployment's secret, also 32 chars+")
    weed.put(bucket, "images/foreign", seal(other, "images/foreign", forged))
    weed.put(bucket, "images/moved", seal(KEY, "images/real", real))  # a real entry, moved
    weed.put(bucket, "images/flipped", seal(KEY, "images/flipped", real)[:-1] + b"\0")
    assert await tier.get("images/real") == real
    for name in ("images/forged", "images/foreign", "images/moved", "images/flipped"):
        assert await tier.get(name) is None
        assert await tier.get(name) is None  # asked twice: warned once
    assert tier.available  # a bad entry is not a store failure
    assert results_of(metrics) == {"hit": 1, "invalid": 8}
    warnings = [r.getMessage() for r in caplog.records if r.name == "assetgate.cache"]
    assert len(warnings) == 4
    assert all("fails its MAC" in text for text in warnings)


async def test_an_object_over_the_largest_entry_is_a_miss_and_none_is_written(
    weed: Seaweed, bucket: str
) -> None:
    """Before: a 600 MiB object under a result key was read whole (RSS 2.5 GiB). The read asks
    for at most the largest entry, plus one byte."""
    metrics = Metrics.build()
    tier = tier_of(weed.store(bucket), metrics)
    huge = os.urandom(MAX_ENTRY + 1)
    weed.put(bucket, "images/huge", seal(KEY, "images/huge", huge))
    assert await tier.get("images/huge") is None
    assert results_of(metrics)["invalid"] == 1
    assert tier.put_later("images/huge2", huge) is None  # no node would read it
    largest = os.urandom(MAX_ENTRY)
    writer = tier.put_later("images/largest", largest)
    assert writer is not None
    await writer
    assert await tier.get("images/largest") == largest


class _SwitchableStore(BaseHTTPRequestHandler):
    """An S3-like server that is down (503 to everything) or answers every GET with ``body``
    (a ranged read's answer); it counts the requests it saw."""

    protocol_version = "HTTP/1.1"
    body = b""
    down = False
    seen = 0

    def do_GET(self) -> None:
        type(self).seen += 1
        if type(self).down:
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(206)  # the whole object, as the ranged read asked (it asks more)
        self.send_header("Content-Length", str(len(self.body)))
        self.send_header("Content-Range", f"bytes 0-{len(self.body) - 1}/{len(self.body)}")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def switchable_store() -> Iterator[S3Store]:
    _SwitchableStore.body = seal(KEY, "entry", os.urandom(1000))
    _SwitchableStore.down, _SwitchableStore.seen = True, 0
    server = ThreadingHTTPServer(("127.0.0.1", pick_port()), _SwitchableStore)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield S3Store(
            "results",
            endpoint=f"http://127.0.0.1:{server.server_address[1]}",
            access_key_id="k",
            secret_access_key="s",
            region="us-east-1",
            virtual_hosted_style_request=False,
            client_options={"allow_http": True},
            retry_config={"max_retries": 0},
        )
    finally:
        server.shutdown()
        server.server_close()


def counts_of(metrics: Metrics) -> dict[str, float | None]:
    sample = metrics.registry.get_sample_value
    return {
        result: sample("assetgate_result_store_requests_total", {"result": result})
        for result in ("hit", "error", "skipped")
    }


async def test_a_failing_store_is_not_asked_again_during_its_cool_down(
    switchable_store: S3Store, caplog: pytest.LogCaptureFixture
) -> None:
    """Its breaker: one failure opens it, then reads are skipped (counted) without a request,
    ``/readyz`` says it is down, and the warning is logged once."""
    metrics = Metrics.build()
    tier = ObjectTier(
        switchable_store, key=KEY, max_entry_bytes=MAX_ENTRY, results=metrics.result_store,
        retry_after_s=3600.0,
    )  # fmt: skip
    assert await tier.get("entry") is None
    assert _SwitchableStore.seen == 1
    _SwitchableStore.down = False
    assert await tier.get("entry") is None
    assert await tier.get("entry") is None
    assert _SwitchableStore.seen == 1  # not asked while open
    assert not tier.available
    assert tier.state == "down (rendering locally)"
    assert tier.put_later("entry", b"x") is None  # nor written to
    assert counts_of(metrics) == {"hit": None, "error": 1, "skipped": 2}
    warnings = [r.getMessage() for r in caplog.records if r.name == "assetgate.cache"]
    assert warnings == ["result store unreachable (GenericError); rendering locally"]


async def test_after_the_cool_down_one_read_probes_and_its_answer_closes_it(
    switchable_store: S3Store, caplog: pytest.LogCaptureFixture
) -> None:
    metrics = Metrics.build()
    tier = ObjectTier(
        switchable_store, key=KEY, max_entry_bytes=MAX_ENTRY, results=metrics.result_store,
        retry_after_s=0.0,
    )  # fmt: skip
    assert await tier.get("entry") is None
    assert tier.state == "down (rendering locally)"
    _SwitchableStore.down = False
    assert await tier.get("entry") == _SwitchableStore.body[OVERHEAD:]  # the probe
    assert tier.state == OK
    assert counts_of(metrics) == {"hit": 1, "error": 1, "skipped": None}
    warnings = [r.getMessage() for r in caplog.records if r.name == "assetgate.cache"]
    assert warnings == [
        "result store unreachable (GenericError); rendering locally",
        "result store reachable again; results shared",
    ]
