"""The shape of a part: what each of optimizer, packages, convert and whois hands to the app.

Each part exposes one ``PART: Part``: its routes, its OpenAPI paths, and an optional lifespan that
builds the part's own state from the shared resources. ``app.create_app`` composes them, so the
parts never import each other and the app is the only module that knows all four.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.routing import BaseRoute

from assetgate.resources import Resources

S = TypeVar("S")

PartLifespan = Callable[[Resources], AbstractAsyncContextManager[object]]


@asynccontextmanager
async def no_state(res: Resources) -> AsyncIterator[object]:
    yield None


@dataclass(frozen=True, slots=True)
class Part:
    name: str
    routes: Sequence[BaseRoute]
    openapi: dict[str, Any] = field(default_factory=dict)
    lifespan: PartLifespan = no_state


def part_state(request: Request, name: str, kind: type[S]) -> S:
    """The object a part's lifespan yielded, under the part's name, typed as the part built it
    (a wrong type is a programming error, raised at the first request rather than typed ``Any``)."""
    state = getattr(request.state, name)
    if not isinstance(state, kind):
        raise TypeError(f"{name}: the lifespan yielded {type(state).__name__}, not {kind.__name__}")
    return state
