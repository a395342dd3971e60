"""The result store's reads against a real SeaweedFS: one ranged GET gives the whole object, and
an empty object (its 416) is a miss, not a store failure; a store that ignores ranges gets whole
reads."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from obstore.store import S3Store

from assetgate.cache import ObjectTier
from assetgate.cache.objects import OK
from assetgate.operations.metrics import Metrics
from tests.serve_process import pick_port
from tests.sources.servers import Seaweed

pytestmark = pytest.mark.anyio


async def test_a_read_gives_the_whole_object_and_an_empty_one_is_a_miss(
    weed: Seaweed, bucket: str
) -> None:
    metrics = Metrics.build()
    tier = ObjectTier(weed.store(bucket), results=metrics.result_store)
    whole = os.urandom(300_000)
    weed.put(bucket, "entry", whole)
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
    _RangeIgnoringStore.body = os.urandom(70_000)
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
    tier = ObjectTier(store, results=metrics.result_store)
    for _ in range(2):
        assert await tier.get("entry") == _RangeIgnoringStore.body
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
