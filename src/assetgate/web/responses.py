"""The only place an error becomes bytes: AppError -> JSON Error object (spec §2.2).

Unexpected exceptions become a 500 with an ``error_id`` that is logged beside the traceback, so a
support request can be matched to the log without leaking anything to the client.
"""

from __future__ import annotations

import logging
from typing import Final

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from assetgate.errors import AppError

log = logging.getLogger("assetgate")


def error_body(exc: AppError) -> dict[str, object]:
    body: dict[str, object] = {"error": exc.message, "code": exc.status}
    if exc.error_id is not None:
        body["error_id"] = exc.error_id
    return body


def error_response(exc: AppError, *, head: bool = False) -> Response:
    # An error names what it was given (a parameter, a file name): never let it be sniffed as HTML.
    headers = {**exc.headers, "X-Content-Type-Options": "nosniff"}
    if head:
        response = JSONResponse(error_body(exc), status_code=exc.status, headers=headers)
        return Response(
            b"", status_code=exc.status, headers=dict(response.headers)
        )  # same headers, incl. Content-Length of the body a GET would get
    return JSONResponse(error_body(exc), status_code=exc.status, headers=headers)


def internal_error(exc: BaseException, *, context: str = "") -> AppError:
    """Log ``exc`` with a fresh id and return the public 500 that names only the id."""
    return AppError.logged(500, "internal server error", log=log, context=context, exc_info=exc)


async def on_app_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AppError)
    return error_response(exc, head=request.method == "HEAD")


_METHOD_ORDER: Final = (
    "GET",
    "HEAD",
    "POST",
    "PUT",
    "PATCH",
    "DELETE",
    "OPTIONS",
    "CONNECT",
    "TRACE",
)


def _method_rank(method: str) -> tuple[int, str]:
    return (_METHOD_ORDER.index(method) if method in _METHOD_ORDER else len(_METHOD_ORDER), method)


async def on_http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 (no route, wrong method) get the same JSON shape."""
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if "Allow" in headers:  # Starlette joins a set: the order changed with the hash seed
        allowed = {method.strip() for method in headers["Allow"].split(",")}
        headers["Allow"] = ", ".join(sorted(allowed, key=_method_rank))
    app_error = AppError(exc.status_code, str(exc.detail).lower(), headers=headers or None)
    return error_response(app_error, head=request.method == "HEAD")


async def on_unexpected(request: Request, exc: Exception) -> Response:
    return error_response(internal_error(exc, context=f"{request.method} {request.url.path}"))
