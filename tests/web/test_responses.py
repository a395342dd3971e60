"""The JSON Error object (spec §2.2) is produced in one place, for every kind of failure."""

from __future__ import annotations

import logging

import httpx
import pytest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from assetgate.errors import AppError
from assetgate.web.responses import on_app_error, on_http_exception, on_unexpected

pytestmark = pytest.mark.anyio


async def bad(request: Request) -> Response:
    raise AppError.bad_param("width", "an integer 1..50000", "0")


async def boom(request: Request) -> Response:
    raise RuntimeError("/secret/path/in/message")


def make_app() -> Starlette:
    return Starlette(
        routes=[Route("/bad", bad, methods=["GET", "HEAD"]), Route("/boom", boom)],
        exception_handlers={
            AppError: on_app_error,
            HTTPException: on_http_exception,
            Exception: on_unexpected,
        },
    )


@pytest.fixture
async def web() -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=make_app(), raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://t")


async def test_app_error_becomes_the_error_object(web: httpx.AsyncClient) -> None:
    response = await web.get("/bad")
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-content-type-options"] == "nosniff"  # it echoes the input
    assert response.json() == {"error": "width: expected an integer 1..50000, got '0'", "code": 400}


async def test_head_error_has_headers_but_no_body(web: httpx.AsyncClient) -> None:
    response = await web.head("/bad")
    assert response.status_code == 400
    assert response.content == b""
    assert int(response.headers["content-length"]) > 0
    assert response.headers["x-content-type-options"] == "nosniff"


async def test_unexpected_error_is_500_with_logged_error_id_and_no_leak(
    web: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="assetgate"):
        response = await web.get("/boom")
    body = response.json()
    assert response.status_code == 500
    assert set(body) == {"error", "code", "error_id"}
    assert body["code"] == 500
    assert "secret" not in response.text
    assert "Traceback" not in response.text
    assert any(body["error_id"] in record.getMessage() for record in caplog.records)
    assert any(record.exc_info for record in caplog.records)


async def test_router_404_and_405_use_the_same_shape(web: httpx.AsyncClient) -> None:
    missing = await web.get("/nope")
    assert missing.status_code == 404
    assert missing.json() == {"error": "not found", "code": 404}
    wrong = await web.post("/bad")
    assert wrong.status_code == 405
    assert wrong.json()["code"] == 405
    assert wrong.headers["allow"] == "GET, HEAD"
