"""The shape of a part, and the conventions every part's routes follow, written once.

A part (optimizer, packages, convert, whois, ui) exposes one ``PART: Part`` that *declares* what
it is: its name, the URL prefixes it owns, its endpoints, the methods they take, whether they
spend the shared rate limit, the CORS fields of its preflight, its pages for people, the upstreams
it talks to, its OpenAPI paths and an optional lifespan that builds its state from the shared
resources. From the declaration it *gets* its routes (``Part.route``): 405 with ``Allow`` for
another method, the preflight for ``OPTIONS``, the budget, and HEAD as GET without the body.

``app.create_app`` composes the parts and hands their declarations down (the access log's
``interface`` label, the upstream-error labels, the CLI's list of pages), so the floors below know
no part by name and adding a part touches only ``app.py`` and the part's own folder
(docs/architecture.md, "Adding a part").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.routing import Route

from assetgate.budget import rate_limited
from assetgate.operations.observe import owns
from assetgate.operations.upstreams import Upstream
from assetgate.resources import Resources, resources
from assetgate.settings import Settings
from assetgate.web.http import READ_METHODS, Endpoint, any_method

S = TypeVar("S")

PartLifespan = Callable[[Resources], AbstractAsyncContextManager[object]]
#: The CORS fields a part's preflight answers with, from the settings (``ASSETGATE_CORS_ORIGIN``).
CorsFields = Callable[[Settings], Mapping[str, str]]


@asynccontextmanager
async def no_state(res: Resources) -> AsyncIterator[object]:
    yield None


def always(settings: Settings) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class PageLink:
    """A page for people, listed by ``assetgate serve`` when it starts (when ``shown``)."""

    path: str
    says: str
    shown: Callable[[Settings], bool] = always


@dataclass(frozen=True, slots=True)
class Part:
    name: str
    #: The URL prefixes the part owns (``/npm`` owns ``/npm/x``; ``/`` is the catch-all): the
    #: ``interface`` label of their requests in the access log and the metrics.
    prefixes: tuple[str, ...]
    #: Path template -> endpoint, tried in this order (a catch-all last).
    endpoints: Mapping[str, Endpoint]
    methods: tuple[str, ...] = READ_METHODS
    #: Spends the shared rate limit when the name is in ``ASSETGATE_RATE_LIMIT_PARTS``.
    budget: bool = False
    #: ``OPTIONS`` is a CORS preflight answered with these fields; None: no preflight.
    cors: CorsFields | None = None
    #: Its answers are offered to the hot lane (``serving.hotlane``), replayed before routing.
    replayed: bool = False
    pages: tuple[PageLink, ...] = ()
    upstreams: tuple[Upstream, ...] = ()
    openapi: dict[str, Any] = field(default_factory=dict)
    lifespan: PartLifespan = no_state
    routes: tuple[Route, ...] = field(init=False)

    def __post_init__(self) -> None:
        for path in self.endpoints:
            if not any(owns(prefix.rstrip("/"), path) for prefix in self.prefixes):
                raise ValueError(f"{self.name}: {path} is outside its prefixes {self.prefixes}")
        routes = tuple(self.route(path, endpoint) for path, endpoint in self.endpoints.items())
        object.__setattr__(self, "routes", routes)

    def spends_budget(self, settings: Settings) -> bool:
        return self.budget and self.name in settings.rate_limit_parts

    def route(self, path: str, endpoint: Endpoint) -> Route:
        """``endpoint`` under the part's conventions (``web.http.any_method``): a method not in
        ``methods`` is the JSON 405 with ``Allow`` and ``OPTIONS`` the preflight, both before any
        budget is spent or work done; HEAD is the GET's answer without its body; then the shared
        budget when the part has one, its RateLimit fields on every answer."""
        if self.budget:
            endpoint = rate_limited(self.name, endpoint)
        return any_method(path, endpoint, methods=self.methods, cors=self._preflight_fields())

    def _preflight_fields(self) -> Callable[[Request], Mapping[str, str]] | None:
        cors = self.cors
        if cors is None:
            return None
        return lambda request: cors(resources(request).settings)


def part_state(request: Request, name: str, kind: type[S]) -> S:
    """The object a part's lifespan yielded, under the part's name, typed as the part built it
    (a wrong type is a programming error, raised at the first request rather than typed ``Any``)."""
    state = getattr(request.state, name)
    if not isinstance(state, kind):
        raise TypeError(f"{name}: the lifespan yielded {type(state).__name__}, not {kind.__name__}")
    return state
