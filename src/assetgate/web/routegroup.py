"""A part's routes behind one prefix test: the optimizer's catch-all is not found by regex search.

Starlette's router tries its routes in order, one regex each. The optimizer's ``/{path}`` must come
last, so every file request used to pay a regex per route of every other part (about a tenth of a
warm file answer). ``RouteGroup`` puts a part's routes behind the literal prefix they share
(``/npm``, ``/api/whois``): one ``str.startswith`` for a path that is not theirs, the same routes
and the same answers for one that is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from starlette.routing import BaseRoute, Match, NoMatchFound, Route
from starlette.types import Receive, Scope, Send

_MATCHED: Final = "assetgate.route"


def route_path(scope: Scope) -> str:
    """The path below the app's mount point (``root_path``), as Starlette's router matches it.

    Starlette's own helper for this is private (``starlette._utils``), so its rule is kept here.
    """
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if not root or not path.startswith(root):
        return path
    if path == root:
        return ""
    return path[len(root) :] if path[len(root)] == "/" else path


def literal_prefix(routes: Sequence[Route]) -> str:
    """The longest prefix that every route's path has before any ``{parameter}``."""
    literals = [route.path.split("{", 1)[0] for route in routes]
    prefix = min(literals, default="")
    while not all(literal.startswith(prefix) for literal in literals):
        prefix = prefix[:-1]
    return prefix


class RouteGroup(BaseRoute):
    def __init__(self, routes: Sequence[Route]) -> None:
        self.routes = list(routes)
        self.prefix = literal_prefix(self.routes)

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] != "http" or not route_path(scope).startswith(self.prefix):
            return Match.NONE, {}
        partial: tuple[Match, Scope] | None = None
        for route in self.routes:
            match, child = route.matches(scope)
            if match is Match.FULL:
                return match, {**child, _MATCHED: route}
            if match is Match.PARTIAL and partial is None:
                partial = (match, {**child, _MATCHED: route})
        return partial or (Match.NONE, {})

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        route: BaseRoute = scope.pop(_MATCHED)
        scope["route"] = route  # as if the router had matched it directly
        await route.handle(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        for route in self.routes:
            try:
                return route.url_path_for(name, **path_params)
            except NoMatchFound:
                pass
        raise NoMatchFound(name, path_params)


def grouped(routes: Sequence[BaseRoute]) -> list[BaseRoute]:
    """``routes`` behind one ``RouteGroup`` when they are plain routes sharing a prefix longer
    than ``/``; otherwise unchanged (the optimizer's own ``/`` and ``/{path}``)."""
    plain = [route for route in routes if isinstance(route, Route)]
    if len(plain) != len(routes) or len(literal_prefix(plain)) <= 1:
        return list(routes)
    return [RouteGroup(plain)]
