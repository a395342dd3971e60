"""Telling the CDN in front: Cloudflare, Fastly and CloudFront purge by the tags the answers carry.

Each configured CDN gets the purge's tags (the ``path:`` tag of every path purged, the ``dir:``
tag of every folder prefix, every tag given) in the batches its API takes, each batch tried up to
``ATTEMPTS`` times (a 429, a 5xx or no answer; ``Retry-After`` honoured up to ``MAX_WAIT_S``):

- Cloudflare (``ASSETGATE_CDN_PURGE_URL`` + ``_ZONE`` + ``_TOKEN``): ``POST
  <URL>/zones/<ZONE>/purge_cache``, ``Authorization: Bearer``, ``{"tags": [...]}``, 100 tags a
  call; acknowledged when the answer says ``"success": true``.
- Fastly (``ASSETGATE_FASTLY_SERVICE`` + ``_TOKEN``): ``POST <URL>/service/<id>/purge``,
  ``Fastly-Key``, ``{"surrogate_keys": [...]}``, 256 keys a call; acknowledged with a 200.
- CloudFront (``ASSETGATE_CLOUDFRONT_DISTRIBUTION``, the AWS credentials of the environment or
  the shared files): ``CreateInvalidation`` (``POST <URL>/2020-05-31/distribution/<id>/
  invalidation``, SigV4 for ``cloudfront`` in us-east-1) with each tag as a ``#tag`` path, 100 a
  call; acknowledged with a 201. The distribution needs a ``CacheTagConfig`` naming ``Cache-Tag``.

A token is never logged nor answered: a failure names the CDN and the status only. An answer's
body is read through the one upstream reader (``web/upstream_body.py``: one coding at most,
decoded off the loop) and only up to ``ANSWER_MAX_BYTES``: a CDN API acknowledges in a few
hundred bytes, and a misbehaving or hostile endpoint must not make a purge hold a gigabyte.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final
from xml.sax.saxutils import escape

import httpx

from assetgate.admin.sigv4 import sign
from assetgate.cache.objects import file_credentials
from assetgate.settings import Settings
from assetgate.web.upstream_body import ACCEPT_ENCODING, BadBody, BodyOverCap, read_body

log = logging.getLogger("assetgate.purge")

ATTEMPTS: Final = 3
FIRST_WAIT_S: Final = 0.2
MAX_WAIT_S: Final = 2.0
CLOUDFRONT_API: Final = "2020-05-31"
ANSWER_MAX_BYTES: Final = 64 * 1024


class Unconfigured(Exception):
    """A CDN's request cannot be made (no credentials): reported, nothing sent."""


@dataclass(frozen=True, slots=True)
class Call:
    """One batch's request: what a CDN's API documents."""

    url: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class Cdn:
    name: str
    batch: int
    request: Callable[[list[str]], Call]
    acknowledged: Callable[[Answer], bool]


@dataclass(frozen=True, slots=True)
class Answer:
    """A CDN API's answer to one batch, its body read whole (at most ``ANSWER_MAX_BYTES``)."""

    status: int
    headers: httpx.Headers
    body: bytes


@dataclass(slots=True)
class CdnPurge:
    cdn: str
    acknowledged: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    calls: int = 0
    failures: int = 0
    errors: list[str] = field(default_factory=list)

    def report(self) -> dict[str, object]:
        return {
            "cdn": self.cdn,
            "acknowledged": len(self.acknowledged),
            "failed": self.failed,
            "calls": self.calls,
            "errors": self.errors,
        }


def _cloudflare(settings: Settings) -> Cdn | None:
    url, zone, token = settings.cdn_purge_url, settings.cdn_purge_zone, settings.cdn_purge_token
    if not (url and zone and token):
        return None
    endpoint = f"{url}/zones/{zone}/purge_cache"
    bearer = f"Bearer {token.get_secret_value()}"
    headers = {"Authorization": bearer, "Content-Type": "application/json"}

    def request(tags: list[str]) -> Call:
        return Call(endpoint, headers, json.dumps({"tags": tags}).encode())

    def acknowledged(answer: Answer) -> bool:
        if answer.status != 200:
            return False
        try:
            document = json.loads(answer.body)
        except ValueError:
            return False
        return isinstance(document, dict) and document.get("success") is True

    return Cdn("cloudflare", 100, request, acknowledged)


def _fastly(settings: Settings) -> Cdn | None:
    url, service, token = settings.fastly_purge_url, settings.fastly_service, settings.fastly_token
    if not (url and service and token):
        return None
    endpoint = f"{url}/service/{service}/purge"
    headers = {
        "Fastly-Key": token.get_secret_value(),
        "Content-Type": "application/json",
        "Accept": "application/json",
    }

    def request(keys: list[str]) -> Call:
        return Call(endpoint, headers, json.dumps({"surrogate_keys": keys}).encode())

    return Cdn("fastly", 256, request, lambda answer: answer.status == 200)


def _aws_credentials() -> tuple[str, str, str | None] | None:
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    token = os.environ.get("AWS_SESSION_TOKEN")
    if not (key and secret):
        found = file_credentials()
        key, secret = found.get("access_key_id"), found.get("secret_access_key")
        token = found.get("token")
    return (key, secret, token) if key and secret else None


def invalidation_batch(paths: Sequence[str], reference: str) -> bytes:
    """CloudFront's ``InvalidationBatch`` document."""
    items = "".join(f"<Path>{escape(path)}</Path>" for path in paths)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<InvalidationBatch xmlns="http://cloudfront.amazonaws.com/doc/{CLOUDFRONT_API}/">'
        f"<Paths><Quantity>{len(paths)}</Quantity><Items>{items}</Items></Paths>"
        f"<CallerReference>{escape(reference)}</CallerReference>"
        "</InvalidationBatch>"
    ).encode()


def _cloudfront(settings: Settings, now: Callable[[], datetime]) -> Cdn | None:
    url, distribution = settings.cloudfront_purge_url, settings.cloudfront_distribution
    if not (url and distribution):
        return None
    endpoint = f"{url}/{CLOUDFRONT_API}/distribution/{distribution}/invalidation"

    def request(tags: list[str]) -> Call:
        credentials = _aws_credentials()
        if credentials is None:
            raise Unconfigured("no AWS credentials")
        key, secret, token = credentials
        body = invalidation_batch([f"#{tag}" for tag in tags], f"assetgate-{uuid.uuid4().hex}")
        headers = sign(
            "POST",
            endpoint,
            {"Content-Type": "application/xml"},
            body,
            access_key=key,
            secret_key=secret,
            session_token=token,
            region="us-east-1",  # CloudFront's API is global, signed for us-east-1
            service="cloudfront",
            now=now(),
        )
        return Call(endpoint, headers, body)

    return Cdn("cloudfront", 100, request, lambda answer: answer.status == 201)


def configured(settings: Settings, now: Callable[[], datetime] | None = None) -> list[Cdn]:
    clock = now or (lambda: datetime.now(UTC))
    found = (_cloudflare(settings), _fastly(settings), _cloudfront(settings, clock))
    return [cdn for cdn in found if cdn is not None]


def _wait(answer: Answer | None, attempt: int) -> float:
    wait: float = FIRST_WAIT_S * 2**attempt
    asked = None if answer is None else answer.headers.get("retry-after")
    if asked is not None and asked.strip().isdigit():
        wait = float(asked)
    return min(max(wait, 0.0), MAX_WAIT_S)


async def _send(http: httpx.AsyncClient, cdn: Cdn, batch: list[str], outcome: CdnPurge) -> None:
    for attempt in range(ATTEMPTS):
        try:
            call = cdn.request(batch)
        except Unconfigured as exc:
            error = str(exc)
            break
        answer: Answer | None = None
        outcome.calls += 1
        try:
            answer = await _post(http, call)
        except httpx.HTTPError as exc:
            error = type(exc).__name__
        except (BodyOverCap, BadBody) as exc:  # asking again would get the same answer
            error = (
                exc.reason
                if isinstance(exc, BadBody)
                else f"an answer over {ANSWER_MAX_BYTES} bytes"
            )
            outcome.failures += 1
            break
        else:
            if cdn.acknowledged(answer):
                outcome.acknowledged += batch
                return
            error = f"HTTP {answer.status}"
        outcome.failures += 1
        retry = answer is None or answer.status == 429 or answer.status >= 500
        if not retry or attempt == ATTEMPTS - 1:
            break
        await asyncio.sleep(_wait(answer, attempt))
    log.warning("%s purge failed (%s) for %d tags", cdn.name, error, len(batch))
    outcome.errors.append(error)
    outcome.failed += batch


async def _post(http: httpx.AsyncClient, call: Call) -> Answer:
    headers = {"Accept-Encoding": ACCEPT_ENCODING, **call.headers}
    async with http.stream("POST", call.url, headers=headers, content=call.body) as response:
        body = await read_body(response, ANSWER_MAX_BYTES)
        return Answer(response.status_code, response.headers, body)


async def purge(
    http: httpx.AsyncClient, cdns: Sequence[Cdn], tags: Sequence[str]
) -> list[CdnPurge]:
    """Every CDN, every batch; what each acknowledged."""
    unique = list(dict.fromkeys(tags))
    outcomes = []
    for cdn in cdns:
        outcome = CdnPurge(cdn.name)
        for start in range(0, len(unique), cdn.batch):
            await _send(http, cdn, unique[start : start + cdn.batch], outcome)
        outcomes.append(outcome)
    return outcomes
