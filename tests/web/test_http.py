from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response

from assetgate.errors import AppError
from assetgate.web.http import READ_METHODS, any_method
from assetgate.web.responses import on_app_error

pytestmark = pytest.mark.anyio


def make_app() -> tuple[Starlette, list[str]]:
    seen: list[str] = []

    async def read(request: Request) -> Response:
        seen.append(request.method)
        return Response(b"hello")

    async def write(request: Request) -> Response:
        seen.append(request.method)
        return Response(status_code=201)

    app = Starlette(
        routes=[
            any_method("/read", read, methods=READ_METHODS, cors=lambda r: {"X-Cors": "yes"}),
            any_method("/write", write, methods=("POST",)),
        ],
        exception_handlers={AppError: on_app_error},
    )
    return app, seen


def client_and_seen() -> tuple[httpx.AsyncClient, list[str]]:
    app, seen = make_app()
    return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://t"), seen


async def test_wrong_method_is_405_with_allow_before_the_endpoint() -> None:
    client, seen = client_and_seen()
    async with client:
        read = await client.request("DELETE", "/read")
        write = await client.get("/write")
    assert (read.status_code, read.headers["allow"]) == (405, "GET, HEAD, OPTIONS")
    assert read.json()["code"] == 405
    assert (write.status_code, write.headers["allow"]) == (405, "POST")
    assert seen == []


async def test_preflight_and_head() -> None:
    client, seen = client_and_seen()
    async with client:
        options = await client.options("/read", headers={"access-control-request-headers": "X-A"})
        head = await client.head("/read")
        posted = await client.post("/write")
    assert options.status_code == 204
    assert options.headers["x-cors"] == "yes"
    assert options.headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS"
    assert options.headers["access-control-allow-headers"] == "X-A"
    assert (head.status_code, head.content, head.headers["content-length"]) == (200, b"", "5")
    assert posted.status_code == 201
    assert seen == ["HEAD", "POST"]  # the preflight never reached the endpoint
