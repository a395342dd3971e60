"""The shipped nginx front, for real: shared cache per format bucket, 304s, per-client budgets
through the proxy, slow clients cut off while others are served, the body cap."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.deploy.conftest import FRESH_S, RATE_LIMIT, SITE_CSS, Edge, run_edge
from tests.imaging.factory import jpeg

pytestmark = pytest.mark.slow  # nginx in front of two servers and Redis

WEBP = "image/avif,image/webp,*/*;q=0.8"
JPEG_ONLY = "image/png,image/*;q=0.8,*/*;q=0.5"


def get(edge: Edge, target: str, accept: str | None = None, **headers: str) -> httpx.Response:
    sent = {"Accept": accept} if accept else {}
    return httpx.get(f"{edge.url}{target}", headers={**sent, **headers}, timeout=30)


def test_the_rendered_config_has_no_placeholder_left(edge: Edge) -> None:
    text = edge.config.read_text()
    assert "${" not in text
    assert "server 127.0.0.1:" in text


def test_a_repeated_image_request_is_a_proxy_cache_hit(edge: Edge) -> None:
    first = get(edge, "/photo.jpg?width=200", WEBP)
    assert first.status_code == 200
    assert first.headers["x-cache-status"] == "MISS"
    again = get(edge, "/photo.jpg?width=200", WEBP)
    assert again.headers["x-cache-status"] == "HIT"
    assert again.content == first.content
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["vary"] == "Accept"


def test_webp_and_jpeg_clients_alternating_each_hit_their_own_format(edge: Edge) -> None:
    seen: dict[str, list[str]] = {"image/webp": [], "image/jpeg": []}
    for _ in range(3):
        for accept in (WEBP, JPEG_ONLY, "image/webp;q=0, */*"):
            response = get(edge, "/photo.jpg?width=160", accept)
            assert response.status_code == 200
            seen[response.headers["content-type"]].append(response.headers["x-cache-status"])
    assert seen["image/webp"] == ["MISS", "HIT", "HIT"]
    # Both non-WebP spellings fall in the same bucket: one miss, then hits.
    assert seen["image/jpeg"] == ["MISS", "HIT", "HIT", "HIT", "HIT", "HIT"]


def test_if_none_match_gets_a_304(edge: Edge) -> None:
    first = get(edge, "/photo.jpg?width=120", JPEG_ONLY)
    etag = first.headers["etag"]
    for _ in range(2):  # from assetgate (the cache is filling) and from the cache
        response = get(edge, "/photo.jpg?width=120", JPEG_ONLY, **{"If-None-Match": etag})
        assert response.status_code == 304
        assert response.headers["etag"] == etag
        assert response.content == b""


def client_from(address: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=30)


def spend(client: httpx.Client, edge: Edge, **headers: str) -> int:
    return client.get(f"{edge.url}/api/whois?domain=-", headers=headers).status_code


def test_each_client_address_has_its_own_budget_and_forging_buys_nothing(edge: Edge) -> None:
    with client_from("127.0.0.2") as first, client_from("127.0.0.3") as second:
        # Spread over both processes by nginx, counted in one Redis budget per client.
        assert [spend(first, edge) for _ in range(RATE_LIMIT)] == [400] * RATE_LIMIT
        assert spend(first, edge) == 429
        assert spend(first, edge, **{"X-Forwarded-For": "127.0.0.99"}) == 429
        assert spend(first, edge, **{"X-Forwarded-For": "127.0.0.3, 127.0.0.98"}) == 429
        response = second.get(f"{edge.url}/api/whois?domain=-")
        assert response.status_code == 400
        assert f";r={RATE_LIMIT - 1};" in response.headers["ratelimit"]


def test_a_slow_header_client_is_cut_off_while_others_are_served(edge: Edge) -> None:
    closed_after: list[float] = []

    def trickle() -> None:
        with socket.create_connection(("127.0.0.1", edge.port), timeout=30) as conn:
            started = time.monotonic()
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            try:
                while time.monotonic() - started < 25:
                    conn.sendall(b"X")
                    conn.settimeout(0.5)
                    try:
                        if conn.recv(1024) == b"":
                            break
                    except TimeoutError:
                        continue
            except OSError:
                pass
            closed_after.append(time.monotonic() - started)

    slow = threading.Thread(target=trickle)
    slow.start()
    answered = 0
    while slow.is_alive():
        assert get(edge, "/healthz").status_code == 200
        answered += 1
        time.sleep(0.2)
    slow.join()
    # client_header_timeout is 10 s: cut off after it, well before the trickle gives up.
    assert 9 <= closed_after[0] < 20
    assert answered >= 10


def test_a_body_over_the_cap_is_refused_by_nginx(edge: Edge) -> None:
    response = httpx.post(
        f"{edge.url}/api/convert",
        files={"file": ("big.png", b"\0" * (2 * 1024 * 1024), "image/png")},
        timeout=30,
    )
    assert response.status_code == 413
    assert response.headers["server"].startswith("nginx")


@pytest.mark.parametrize("target", ["/api/whois?domain=example.com", "/api/convert"])
def test_who_asks_answers_are_never_cached(edge: Edge, target: str) -> None:
    response = get(edge, target)
    assert response.headers.get("x-cache-status") is None


def test_a_stale_answer_is_served_while_one_request_refreshes_it(short_lived_edge: Edge) -> None:
    edge = short_lived_edge
    first = get(edge, "/photo.jpg?width=90", JPEG_ONLY)
    assert first.headers["x-cache-status"] == "MISS"
    time.sleep(FRESH_S + 1)
    stale = get(edge, "/photo.jpg?width=90", JPEG_ONLY)
    assert stale.headers["x-cache-status"] in ("STALE", "UPDATING")
    assert stale.content == first.content
    # The background refresh stores a fresh copy: hits again, without waiting for a client.
    deadline = time.monotonic() + FRESH_S
    statuses = []
    while time.monotonic() < deadline and "HIT" not in statuses:
        statuses.append(get(edge, "/photo.jpg?width=90", JPEG_ONLY).headers["x-cache-status"])
        time.sleep(0.1)
    assert "HIT" in statuses, statuses


def test_nginx_sets_the_request_id_and_a_client_cannot(edge: Edge) -> None:
    first = get(edge, "/healthz", **{"X-Request-Id": "forged-by-the-client"})
    second = get(edge, "/healthz")
    ids = [first.headers["x-request-id"], second.headers["x-request-id"]]
    # nginx's $request_id (32 hex digits), believed because nginx is a trusted proxy.
    assert all(len(rid) == 32 and int(rid, 16) >= 0 for rid in ids)
    assert "forged-by-the-client" not in ids
    assert ids[0] != ids[1]


def test_metrics_are_not_public_through_the_edge(edge: Edge) -> None:
    outside = get(edge, "/metrics")
    inside = httpx.get(f"{edge.backends[0]}/metrics", timeout=30)
    assert outside.status_code == 404
    assert outside.json() == {"error": "not found", "code": 404}
    assert "assetgate_" not in outside.text
    assert inside.status_code == 200
    assert "assetgate_requests_total" in inside.text


def raw_get(port: int, target: bytes) -> tuple[int, bytes]:
    """One request with ``target`` sent byte for byte (httpx would normalise it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


METRICS_SPELLINGS = [
    b"/metrics%0A", b"/metrics%0D", b"/metrics%09", b"/metrics%0D%0A", b"/metrics%7F",
    b"/metrics%20", b"/metrics/", b"/%6Detrics", b"//metrics", b"/./metrics", b"/x/../metrics%0A",
]  # fmt: skip


@pytest.mark.parametrize("target", METRICS_SPELLINGS)
def test_no_spelling_of_metrics_passes_the_edge(edge: Edge, target: bytes) -> None:
    status, body = raw_get(edge.port, target)
    # nginx's own answer (spaced JSON), not assetgate's: the edge blocks it without help.
    assert (status, body) == (404, b'{"error": "not found", "code": 404}')


@pytest.mark.parametrize(
    "target", [b"/metrics%0A", b"/metrics%0D", b"/metrics%09", b"/healthz%0A", b"/readyz%0A"]
)
def test_assetgate_itself_refuses_control_characters(edge: Edge, target: bytes) -> None:
    port = int(edge.backends[0].rsplit(":", 1)[1])
    status, body = raw_get(port, target)
    assert status == 404
    assert body == b'{"error":"not found","code":404}'


def test_a_file_named_like_metrics_is_still_served(edge: Edge) -> None:
    """The edge's block is no wider than the operator's endpoint: /metrics.jpg is a file."""
    response = get(edge, "/metrics.jpg?width=50", JPEG_ONLY)
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/jpeg"


def test_a_long_url_reaches_assetgate_and_an_overlong_one_gets_its_json_414(edge: Edge) -> None:
    """nginx's 8 KiB default line buffer would answer its own HTML 414 to a 12 KiB URL that
    assetgate serves; past ASSETGATE_MAX_URL_BYTES (16 KiB) the 414 is assetgate's JSON."""
    served = get(edge, "/photo.jpg?width=40&x=" + "a" * 12_000)
    assert served.status_code == 200, served.text[:200]
    assert served.headers["content-type"].startswith("image/")
    refused = get(edge, "/photo.jpg?width=40&x=" + "a" * 20_000)
    assert refused.status_code == 414
    assert refused.json()["code"] == 414


def test_a_long_url_is_cached_like_any_other(edge: Edge) -> None:
    """Issue 35, item 13: a cache key over ~4 KiB did not fit nginx's default proxy_buffer_size
    ("cache key too large" in the log) and such URLs were never cached."""
    target = "/photo.jpg?width=41&x=" + "b" * 15_000  # under ASSETGATE_MAX_URL_BYTES (16 KiB)
    first = get(edge, target, JPEG_ONLY)
    again = get(edge, target, JPEG_ONLY)
    assert first.status_code == again.status_code == 200
    assert [first.headers["x-cache-status"], again.headers["x-cache-status"]] == ["MISS", "HIT"]
    log = (edge.config.parent / "error.log").read_text(errors="replace")
    assert "cache key" not in log


def test_a_repeated_media_range_cannot_poison_the_cache(edge: Edge) -> None:
    """Issue 35, item 3: ``image/webp;q=0,image/webp`` got WebP from assetgate (the last range
    won) while nginx put it in the ``auto`` bucket: browsers without WebP then got WebP. Now a
    repeated range keeps its lowest weight, as the edge reads it."""
    target = "/photo.jpg?width=42"
    poison = get(edge, target, "image/webp;q=0,image/webp")
    assert poison.headers["content-type"] == "image/jpeg"
    victim = get(edge, target, JPEG_ONLY)
    assert victim.headers["content-type"] == "image/jpeg"


def test_a_spelling_the_edge_reads_otherwise_is_never_kept(edge: Edge) -> None:
    """A quoted parameter hides ``;q=0`` from nginx's pattern: nginx files it under ``auto``,
    assetgate reads WebP with q=1. The answer is WebP for this client only, marked
    ``X-Accel-Expires: 0`` (not passed on), and the next client of ``auto`` gets its JPEG."""
    target = "/photo.jpg?width=43"
    odd = get(edge, target, 'image/webp;x=";q=0;", image/webp')
    assert odd.headers["content-type"] == "image/webp"
    assert "x-accel-expires" not in odd.headers
    victim = get(edge, target, JPEG_ONLY)
    assert victim.headers["content-type"] == "image/jpeg"
    assert victim.headers["x-cache-status"] == "MISS"
    assert get(edge, target, JPEG_ONLY).headers["x-cache-status"] == "HIT"


def test_a_gzipped_answer_reaches_only_clients_that_accept_gzip(edge: Edge) -> None:
    """The cache key once ignored Accept-Encoding (and nginx ignores Vary), so the first client's
    ``compress=1`` answer, gzipped, was kept and replayed to a client that cannot decode it. The
    edge now hands assetgate a normalised Accept-Encoding and keys on the same value."""
    target = "/site.css?compress=1"
    for _ in range(2):  # a miss, then the kept copy
        zipped = httpx.get(f"{edge.url}{target}", headers={"Accept-Encoding": "gzip"}, timeout=30)
        assert zipped.headers["content-encoding"] == "gzip"
        assert zipped.text == SITE_CSS  # httpx decoded it
    for spelling in ("identity", "br", "gzip;q=0, br", "*;q=0.5"):
        plain = httpx.get(f"{edge.url}{target}", headers={"Accept-Encoding": spelling}, timeout=30)
        assert "content-encoding" not in plain.headers, spelling
        assert plain.content == SITE_CSS.encode()
    odd = httpx.get(f"{edge.url}{target}", headers={"Accept-Encoding": "GZip ; q=0.5"}, timeout=30)
    assert odd.headers["content-encoding"] == "gzip"
    assert odd.headers["x-cache-status"] == "HIT"  # the same bucket as plain "gzip"


UPLOAD_HEAD = (
    b"POST /api/convert HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; "
    b"boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\n"
)


@pytest.fixture(scope="module")
def busy_edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    """Behind nginx, processes with a work budget of 4 running requests each."""
    with run_edge(tmp_path_factory.mktemp("busy"), limit_concurrency="4") as running:
        yield running


def open_uploads(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(UPLOAD_HEAD)
        sockets.append(sock)
    return sockets


def test_trickling_uploads_are_held_by_nginx_not_by_assetgate(busy_edge: Edge) -> None:
    """Issue 35, item 1: with request buffering off, 12 trickling uploads streamed through took
    12 places of the processes' budget of 4 + 4 and every request was a 503. nginx now spools
    the body and holds the trickle itself."""
    uploads = open_uploads(busy_edge.port, 12)
    try:
        time.sleep(0.5)
        for _ in range(5):
            for sock in uploads:
                sock.sendall(b"x")
            for _ in range(4):  # nginx takes turns: both processes are asked
                started = time.monotonic()
                assert get(busy_edge, "/healthz").status_code == 200
                assert time.monotonic() - started < 2.0
    finally:
        for sock in uploads:
            sock.close()


def test_past_16_uploads_under_way_from_one_address_nginx_answers_429(busy_edge: Edge) -> None:
    uploads = open_uploads(busy_edge.port, 16)
    try:
        time.sleep(0.3)
        response = httpx.post(
            f"{busy_edge.url}/api/convert",
            files={"images": ("a.png", b"\x89PNG", "image/png")},
            timeout=10,
        )
        assert response.status_code == 429
        assert response.json()["code"] == 429
        assert response.headers["retry-after"] == "10"
    finally:
        for sock in uploads:
            sock.close()
    # Once they are gone, an upload passes the edge, whole, and is converted.
    deadline = time.monotonic() + 10
    while True:
        converted = httpx.post(
            f"{busy_edge.url}/api/convert",
            files={"images": ("a.jpg", jpeg(64, 48), "image/jpeg")},
            timeout=30,
        )
        if converted.status_code != 429 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert converted.status_code == 200
    assert converted.headers["content-type"] == "image/webp"
