from __future__ import annotations

import httpx
import pytest

from assetgate import __version__

pytestmark = pytest.mark.anyio


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": __version__, "interface_version": "1.2.2"}


async def test_openapi_document_is_3_1_with_the_spec_version(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "1.2.2"
    assert document["components"]["schemas"]["Error"]["required"] == ["error", "code"]


async def test_openapi_covers_every_route_the_service_answers(client: httpx.AsyncClient) -> None:
    from starlette.routing import Route

    from assetgate.app import create_app
    from assetgate.settings import Settings
    from assetgate.web.routegroup import RouteGroup

    documented = set((await client.get("/openapi.json")).json()["paths"])
    app = create_app(Settings())
    catch_alls = {"/npm/{rest}", "/ui/{rest}"}  # documented by the sub-paths they serve
    flat = [r for g in app.routes for r in (g.routes if isinstance(g, RouteGroup) else [g])]
    for route in flat:
        assert isinstance(route, Route)
        template = route.path.replace(":path", "")
        if template in catch_alls:
            continue
        assert template in documented, template
    for path in (
        "/npm/{package}@{version}/",
        "/npm/{package}@{version}/{path}",
        "/npm/lib/{library}@{version}/{path}",
        "/ui/",
        "/ui/files",
        "/ui/static/{name}",
        "/{path}",
    ):
        assert path in documented, path
