"""The part of uvicorn's private HTTP protocol that ``cli/connections.py`` builds on.

uvicorn has no public hook for per-connection deadlines or a connection budget: its ``http``
setting takes a protocol class, and ``GuardedHttpToolsProtocol`` subclasses the httptools one
(``uvicorn.protocols.http.httptools_impl``, not part of uvicorn's documented API). pyproject.toml
pins uvicorn to the minor release this was checked against; before moving the pin, this test
says in one line what changed, before the behaviour tests in ``test_connections.py`` fail in
ways that are harder to read.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable

from uvicorn.config import Config
from uvicorn.protocols.http import httptools_impl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from assetgate.cli.connections import GuardedHttpToolsProtocol

#: The base class's attributes the guard reads or writes, and what they must be.
ATTRIBUTES = {
    "connections": set,  # every open connection of the server: the connection budget
    "tasks": set,  # the requests running: the work budget
    "pipeline": object,  # requests waiting behind the running one (truthy when any)
    "limit_concurrency": object,  # read in on_headers_complete: 0 there makes this one a 503
    "cycle": object,  # the running request/answer, None between requests
    "loop": asyncio.AbstractEventLoop,
}
#: What the guard reads of a running request's cycle, and what ``cli/head_with_body.py`` swaps
#: (the transport it writes to, the callback at its answer's end) or reads (``response_started``).
CYCLE = ("more_body", "response_complete", "transport", "on_response", "response_started")
#: The base's own methods the protocol overrides although their names are private.
PRIVATE_OVERRIDES = ("_start_asgi_task",)


def overridden() -> list[str]:
    """The methods the guard overrides: every one it defines that is not its own helper."""
    return [
        name
        for name, value in vars(GuardedHttpToolsProtocol).items()
        if callable(value)
        and (not name.startswith("_") or name == "__init__" or name in PRIVATE_OVERRIDES)
    ]


def params(function: Callable[..., object]) -> list[tuple[str, object]]:
    return [(p.name, p.default) for p in inspect.signature(function).parameters.values()]


def test_every_overridden_method_exists_with_the_same_parameters() -> None:
    assert overridden(), "the guard overrides nothing: this test lost its subject"
    for name in overridden():
        base = getattr(HttpToolsProtocol, name, None)
        assert base is not None, f"uvicorn's HttpToolsProtocol has no {name} any more"
        ours = getattr(GuardedHttpToolsProtocol, name)
        assert params(ours) == params(base), f"HttpToolsProtocol.{name} changed its parameters"


def test_the_base_keeps_the_attributes_the_guard_uses() -> None:
    async def app(scope: object, receive: object, send: object) -> None:  # never called
        raise AssertionError

    config = Config(app=app, http="httptools")
    config.load()
    loop = asyncio.new_event_loop()
    try:
        protocol = HttpToolsProtocol(config, ServerState(), {}, _loop=loop)
        for name, kind in ATTRIBUTES.items():
            assert hasattr(protocol, name), f"HttpToolsProtocol instances have no {name} any more"
            assert isinstance(getattr(protocol, name), kind) or getattr(protocol, name) is None
    finally:
        loop.close()
    cycle_init = inspect.getsource(RequestResponseCycle.__init__)
    for name in CYCLE:
        assert f"self.{name} =" in cycle_init, f"RequestResponseCycle has no {name} any more"


def test_the_503_still_comes_from_limit_concurrency_in_on_headers_complete() -> None:
    """The work budget sets ``limit_concurrency = 0`` around the base's on_headers_complete to
    make uvicorn answer this one request with its 503."""
    source = inspect.getsource(HttpToolsProtocol.on_headers_complete)
    assert "self.limit_concurrency" in source
    assert "service_unavailable" in inspect.getsource(httptools_impl)


def test_every_cycle_starts_through_start_asgi_task_and_writes_its_head_first() -> None:
    """``_start_asgi_task`` is where the head holder is installed: both the first request and a
    pipelined one start there; the cycle writes its head in one ``write`` once
    ``response_started`` is set, then the body, then calls ``on_response``."""
    assert "self._start_asgi_task(self.cycle, app)" in inspect.getsource(
        HttpToolsProtocol.on_headers_complete
    )
    assert "self._start_asgi_task(cycle, app)" in inspect.getsource(
        HttpToolsProtocol.on_response_complete
    )
    send = inspect.getsource(RequestResponseCycle.send)
    started = send.index("self.response_started = True")
    head = send.index('self.transport.write(b"".join(content))')
    ended = send.index("self.on_response()")
    assert started < head < ended
