"""RouteGroup answers exactly what its routes would, behind one prefix test."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from assetgate.web.routegroup import RouteGroup, grouped, literal_prefix, route_path

pytestmark = pytest.mark.anyio


async def named(request: Request) -> Response:
    return PlainTextResponse(f"{request.scope['route'].path} {request.path_params}")


ROUTES = [
    Route("/npm", named, name="page"),
    Route("/npm/search", named, methods=["GET"]),
    Route("/npm/{rest:path}", named, name="files"),
]


def test_routes_sharing_a_prefix_are_grouped_and_the_catch_all_is_not() -> None:
    assert literal_prefix(ROUTES) == "/npm"
    assert [type(route) for route in grouped(ROUTES)] == [RouteGroup]
    everything = [Route("/", named), Route("/{path:path}", named)]
    assert grouped(everything) == everything


async def test_a_group_answers_as_its_routes_and_lets_other_paths_through() -> None:
    routes: list[BaseRoute] = [*grouped(ROUTES), Route("/{path:path}", named)]
    app = Starlette(routes=routes)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert (await client.get("/npm")).text == "/npm {}"
        assert (await client.get("/npm/search")).text == "/npm/search {}"
        assert (await client.get("/npm/a@1/x.js")).text == "/npm/{rest:path} {'rest': 'a@1/x.js'}"
        assert (await client.get("/npmish.jpg")).text == "/{path:path} {'path': 'npmish.jpg'}"
        wrong = await client.post("/npm/search")
        assert wrong.status_code == 405
        assert set(wrong.headers["allow"].split(", ")) == {"GET", "HEAD"}  # Starlette joins a set
    assert app.url_path_for("files", rest="b@2/y.css") == "/npm/b@2/y.css"


@pytest.mark.parametrize(
    ("path", "root_path", "expected"),
    [
        ("/npm/x", "", "/npm/x"),
        ("/sub/npm/x", "/sub", "/npm/x"),
        ("/sub", "/sub", ""),
        ("/subway/x", "/sub", "/subway/x"),  # a longer segment is not below the mount point
        ("/other", "/sub", "/other"),
    ],
)
def test_route_path_is_the_path_below_the_mount_point(
    path: str, root_path: str, expected: str
) -> None:
    assert route_path({"type": "http", "path": path, "root_path": root_path}) == expected
