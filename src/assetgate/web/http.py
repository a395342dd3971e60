"""Methods, HEAD and the CORS preflight, answered the same way by every part (RFC 9110 §9).

Every route of a part takes every method (``any_method``, which ``part.Part.route`` applies to
each endpoint), so a wrong method is the part's own JSON 405 carrying ``Allow`` (never a
fall-through to the optimizer's catch-all as a file lookup). An ``OPTIONS`` request on a read-only
interface is a CORS preflight (``preflight``). A ``HEAD`` answer is the GET's with its body
dropped on the way out (RFC 9110 §9.3.2), so its headers, Content-Length included, are the GET's
whatever the endpoint built.
Conditional requests live in ``web.caching``, media types in ``web.mediatypes``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from assetgate.errors import AppError

Endpoint = Callable[[Request], Awaitable[Response]]

READ_METHODS: Final = ("GET", "HEAD", "OPTIONS")
#: Request headers a cross-origin reader of our files may send, when a preflight names none.
DEFAULT_ALLOW_HEADERS: Final = "Accept, If-None-Match, If-Modified-Since, Accept-Encoding"
PREFLIGHT_MAX_AGE_S: Final = 86400


def check_method(request: Request, allowed: Sequence[str]) -> None:
    if request.method not in allowed:
        raise AppError.method_not_allowed(request.method, ", ".join(allowed))


def preflight(request: Request, allowed: Sequence[str], *, headers: Mapping[str, str]) -> Response:
    """204 for ``OPTIONS``: ``headers`` (the part's CORS fields) plus the methods and headers."""
    requested = request.headers.get("access-control-request-headers")
    methods = ", ".join(allowed)
    return Response(
        status_code=204,
        headers={
            **headers,
            "Allow": methods,
            "Access-Control-Allow-Methods": methods,
            "Access-Control-Allow-Headers": requested[:512] if requested else DEFAULT_ALLOW_HEADERS,
            "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE_S),
        },
    )


#: Messages that carry a body: dropped for HEAD, the last one sent empty.
_BODY_MESSAGES: Final = frozenset(
    {"http.response.body", "http.response.pathsend", "http.response.zerocopysend"}
)


def headers_only(send: Send) -> Send:
    """``send`` for a HEAD answer: the start message as it is, every body empty."""

    async def sending(message: Message) -> None:
        if message["type"] not in _BODY_MESSAGES:
            await send(message)
        elif not message.get("more_body", False):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    return sending


class _AnyMethod:
    """An ASGI endpoint: Starlette routes every method to it (a plain function gets GET only)."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.endpoint(Request(scope, receive))
        await response(scope, receive, headers_only(send) if scope["method"] == "HEAD" else send)


def any_method(
    path: str,
    endpoint: Endpoint,
    *,
    methods: Sequence[str],
    cors: Callable[[Request], Mapping[str, str]] | None = None,
) -> Route:
    """A route that takes every method: 405 for one not in ``methods``, the preflight for
    ``OPTIONS`` when ``cors`` gives the part's CORS fields, else ``endpoint``.

    Both answers come before ``endpoint`` runs, so a wrong method or a preflight spends no
    rate-limit budget and does no work.
    """

    async def checked(request: Request) -> Response:
        check_method(request, methods)
        if request.method == "OPTIONS" and cors is not None:
            return preflight(request, methods, headers=cors(request))
        return await endpoint(request)

    return Route(path, _AnyMethod(checked))
