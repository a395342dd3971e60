"""The CDN purgers (admin/cdn.py) against a loopback server that checks each documented request."""

from __future__ import annotations

import gzip
import json
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from assetgate.admin import cdn
from assetgate.admin.sigv4 import sign
from assetgate.settings import Settings
from tests.admin.cdnserver import cdn_api
from tests.conftest import app_client
from tests.imaging.factory import jpeg
from tests.sources.servers import metric

pytestmark = pytest.mark.anyio

OK_CLOUDFLARE = (200, {"Content-Type": "application/json"}, b'{"success": true, "result": {}}')
CF_TOKEN = "cloudflare-api-token-secret"
ADMIN = "admin-token-for-the-cdn-tests-0123"
TAGS = [f"path:/img/{index}.jpg" for index in range(150)]
WHEN = datetime(2026, 5, 1, 8, 30, tzinfo=UTC)
XMLNS = "{http://cloudfront.amazonaws.com/doc/2020-05-31/}"


async def test_cloudflare_gets_its_documented_request_in_batches_of_100(
    make_settings: Callable[..., Settings],
) -> None:
    with cdn_api(OK_CLOUDFLARE) as api:
        settings = make_settings(
            cdn_purge_url=f"{api.base}/client/v4", cdn_purge_zone="zone1", cdn_purge_token=CF_TOKEN
        )
        async with httpx.AsyncClient() as http:
            (outcome,) = await cdn.purge(http, cdn.configured(settings), TAGS)
    assert outcome.cdn == "cloudflare"
    assert outcome.acknowledged == TAGS
    assert outcome.calls == 2
    assert [len(json.loads(seen.body)["tags"]) for seen in api.seen] == [100, 50]
    for seen in api.seen:
        assert seen.method == "POST"
        assert seen.path == "/client/v4/zones/zone1/purge_cache"
        assert seen.headers["authorization"] == f"Bearer {CF_TOKEN}"
        assert seen.headers["content-type"] == "application/json"
        assert set(json.loads(seen.body)) == {"tags"}
    assert [tag for seen in api.seen for tag in json.loads(seen.body)["tags"]] == TAGS


async def test_a_busy_cdn_is_asked_again_and_a_refusal_is_reported(
    make_settings: Callable[..., Settings], caplog: pytest.LogCaptureFixture
) -> None:
    busy = (503, {"Retry-After": "0"}, b"busy")
    with cdn_api(busy, OK_CLOUDFLARE) as api:
        settings = make_settings(
            cdn_purge_url=api.base, cdn_purge_zone="z", cdn_purge_token=CF_TOKEN
        )
        async with httpx.AsyncClient() as http:
            (outcome,) = await cdn.purge(http, cdn.configured(settings), ["path:/a.jpg"])
    assert outcome.acknowledged == ["path:/a.jpg"]
    assert (outcome.calls, outcome.failures) == (2, 1)
    refused = (403, {"Content-Type": "application/json"}, b'{"success": false}')
    with cdn_api(refused) as api, caplog.at_level(logging.DEBUG):
        settings = make_settings(
            cdn_purge_url=api.base, cdn_purge_zone="z", cdn_purge_token=CF_TOKEN
        )
        async with httpx.AsyncClient() as http:
            (outcome,) = await cdn.purge(http, cdn.configured(settings), ["path:/a.jpg"])
    assert len(api.seen) == 1  # a refusal is not retried
    assert outcome.failed == ["path:/a.jpg"]
    assert outcome.errors == ["HTTP 403"]
    assert "cloudflare purge failed" in caplog.text
    assert CF_TOKEN not in caplog.text


async def test_fastly_gets_surrogate_keys_in_batches_of_256(
    make_settings: Callable[..., Settings],
) -> None:
    keys = [f"path:/k{index}.jpg" for index in range(300)]
    ok = (200, {"Content-Type": "application/json"}, b"{}")
    with cdn_api(ok) as api:
        settings = make_settings(
            fastly_purge_url=api.base, fastly_service="SU1Z0isxPaozGVKXdv0eY", fastly_token="fk"
        )
        async with httpx.AsyncClient() as http:
            (outcome,) = await cdn.purge(http, cdn.configured(settings), keys)
    assert outcome.cdn == "fastly"
    assert outcome.acknowledged == keys
    assert [len(json.loads(seen.body)["surrogate_keys"]) for seen in api.seen] == [256, 44]
    for seen in api.seen:
        assert seen.method == "POST"
        assert seen.path == "/service/SU1Z0isxPaozGVKXdv0eY/purge"
        assert seen.headers["fastly-key"] == "fk"
        assert seen.headers["content-type"] == "application/json"
        assert "authorization" not in seen.headers


async def test_cloudfront_gets_a_signed_create_invalidation_of_tags(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "cloudfront-secret")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    created = (201, {"Location": "/x"}, b"<Invalidation/>")
    with cdn_api(created) as api:
        settings = make_settings(cloudfront_purge_url=api.base, cloudfront_distribution="EDFDVBD6")
        cdns = cdn.configured(settings, now=lambda: WHEN)
        async with httpx.AsyncClient() as http:
            (outcome,) = await cdn.purge(http, cdns, TAGS)
    assert outcome.cdn == "cloudfront"
    assert outcome.acknowledged == TAGS
    assert len(api.seen) == 2
    paths: list[str] = []
    for seen in api.seen:
        assert seen.method == "POST"
        assert seen.path == "/2020-05-31/distribution/EDFDVBD6/invalidation"
        assert seen.headers["content-type"] == "application/xml"
        assert seen.headers["x-amz-date"] == "20260501T083000Z"
        batch = ET.fromstring(seen.body)
        assert batch.tag == f"{XMLNS}InvalidationBatch"
        items = [item.text or "" for item in batch.iter(f"{XMLNS}Path")]
        assert batch.findtext(f"{XMLNS}Paths/{XMLNS}Quantity") == str(len(items))
        assert (batch.findtext(f"{XMLNS}CallerReference") or "").startswith("assetgate-")
        paths += items
        authorization = seen.headers["authorization"]
        assert re.fullmatch(
            r"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260501/us-east-1/cloudfront/aws4_request, "
            r"SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}",
            authorization,
        )
        # the signature of exactly these bytes, this host and this date
        url = f"{api.base}{seen.path}"
        again = sign("POST", url, {"Content-Type": "application/xml"}, seen.body,
                     access_key="AKIDEXAMPLE", secret_key="cloudfront-secret",
                     region="us-east-1", service="cloudfront", now=WHEN)  # fmt: skip
        assert again["Authorization"] == authorization
    assert paths == [f"#{tag}" for tag in TAGS]


async def test_a_purge_answer_says_what_the_cdn_acknowledged(
    make_settings: Callable[..., Settings], docroot: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (docroot / "img").mkdir()
    (docroot / "img" / "a.jpg").write_bytes(jpeg(64, 48))
    with cdn_api(OK_CLOUDFLARE) as api, caplog.at_level(logging.DEBUG):
        settings = make_settings(
            admin_token=ADMIN,
            cdn_purge_url=api.base,
            cdn_purge_zone="zone1",
            cdn_purge_token=CF_TOKEN,
        )
        async with app_client(settings) as client:
            made = await client.get("/img/a.jpg?width=32")
            assert made.headers["x-optimizer-cache"] == "MISS"
            body = {"paths": ["img/a.jpg"], "prefixes": ["/docs/"], "tags": ["preset:thumb"]}
            answer = await client.post(
                "/admin/purge", json=body, headers={"Authorization": f"Bearer {ADMIN}"}
            )
            assert answer.status_code == 200, answer.text
            report = answer.json()
            again = await client.get("/img/a.jpg?width=32")
            assert again.headers["x-optimizer-cache"] == "MISS"  # rendered again
            metrics = (await client.get("/metrics")).text
    assert report["cdn"] == [
        {"cdn": "cloudflare", "acknowledged": 3, "failed": [], "calls": 1, "errors": []}
    ]
    sent = json.loads(api.seen[0].body)["tags"]
    assert sent == ["path:/img/a.jpg", "dir:/docs/", "preset:thumb"]
    (counts,) = report["nodes"].values()
    assert counts == {"memory": 1, "disk": 1, "copies": 0}
    assert metric(metrics, "assetgate_cdn_purge_calls_total", cdn="cloudflare") == 1
    assert metric(metrics, "assetgate_cdn_purge_failures_total", cdn="cloudflare") == 0
    assert metric(metrics, "assetgate_purged_objects_total", tier="memory") == 1
    assert CF_TOKEN not in caplog.text
    assert ADMIN not in caplog.text


async def test_cloudfront_without_credentials_sends_nothing_and_says_why(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no shared credentials file either
    with cdn_api((201, {}, b"")) as api:
        settings = make_settings(cloudfront_purge_url=api.base, cloudfront_distribution="D")
        async with httpx.AsyncClient() as http:
            (outcome,) = await cdn.purge(http, cdn.configured(settings), ["path:/a.jpg"])
    assert api.seen == []
    assert outcome.failed == ["path:/a.jpg"]
    assert outcome.errors == ["no AWS credentials"]


@pytest.mark.parametrize(
    ("headers", "body", "error"),
    [
        # A stack of two gzips (a few KB that would make 16 MiB): refused before any decoding.
        (
            {"Content-Encoding": "gzip, gzip"},
            gzip.compress(gzip.compress(b"\0" * (16 << 20), 1), 1),
            "sent more than one content coding",
        ),
        # One honest coding, but far over what an acknowledgement needs: stopped at the cap.
        (
            {"Content-Encoding": "gzip"},
            gzip.compress(b" " * (8 << 20), 1),
            "an answer over 65536 bytes",
        ),
        ({}, b"{" + b" " * (1 << 20) + b'"success": true}', "an answer over 65536 bytes"),
    ],
)
async def test_a_cdn_answer_is_read_through_the_capped_reader(
    make_settings: Callable[..., Settings], headers: dict[str, str], body: bytes, error: str
) -> None:
    reply = (200, {"Content-Type": "application/json", **headers}, body)
    with cdn_api(reply) as api:
        settings = make_settings(
            cdn_purge_url=f"{api.base}/client/v4", cdn_purge_zone="zone1", cdn_purge_token=CF_TOKEN
        )
        async with httpx.AsyncClient() as http:
            (outcome,) = await cdn.purge(http, cdn.configured(settings), TAGS[:3])
    assert outcome.acknowledged == []
    assert outcome.failed == TAGS[:3]
    assert outcome.errors == [error]
    assert outcome.calls == 1  # the same answer again would not help
    assert api.seen[0].headers["accept-encoding"] == "gzip, deflate"
