"""``assetgate serve``: validate the settings, say where to look, then run uvicorn."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import uvicorn
from starlette.applications import Starlette

from assetgate.cli.connections import Guard, GuardedHttpToolsProtocol
from assetgate.cli.listen import ListenError, bind
from assetgate.cli.preflight import (
    SettingsRefused,
    checked_settings,
    name_warnings,
    origin_warnings,
)
from assetgate.cli.supervisor import run_server
from assetgate.operations.logs import configure_logging
from assetgate.settings import Settings
from assetgate.web.urllimit import h11_head_limit

if TYPE_CHECKING:
    from assetgate.part import Part

FLAGS = {"root": "--root", "host": "--host", "port": "--port", "workers": "--workers"}


def app_factory() -> Starlette:
    """Used by uvicorn's worker processes: each builds its app from the environment."""
    from assetgate.app import create_app

    try:
        settings = checked_settings()
    except SettingsRefused as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(2) from None
    configure_logging(settings.log_level, settings.log_format)
    Guard.configure(settings)  # this process's connection deadlines and budgets
    return create_app(settings)


def add_parser(sub: Any) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the HTTP service",
        description="Run the HTTP service. Every option is also an ASSETGATE_* environment "
        "variable (docs/configuration.md); a bad value stops it with a line naming it.",
    )
    serve.add_argument(
        "--root", help="document root: a directory, s3://bucket[/prefix] or http(s)://host[/prefix]"
    )
    serve.add_argument("--host", help="bind address (ASSETGATE_HOST)")
    serve.add_argument("--port", type=int, help="TCP port (ASSETGATE_PORT)")
    serve.add_argument("--workers", type=int, help="worker processes (ASSETGATE_WORKERS)")
    serve.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    overrides = {key: getattr(args, key) for key in FLAGS if getattr(args, key) is not None}
    try:
        settings = checked_settings(overrides, FLAGS)
    except SettingsRefused as exc:
        print(exc, file=sys.stderr)
        return 2
    given = {key: FLAGS[key] if key in overrides else f"ASSETGATE_{key.upper()}" for key in FLAGS}
    try:
        sock = bind(settings.host, settings.port, given)
    except ListenError as exc:
        print(f"assetgate: {exc}", file=sys.stderr)
        return 2
    # Worker processes rebuild Settings from the environment: hand the overrides down that way.
    for key, value in overrides.items():
        os.environ[f"ASSETGATE_{key.upper()}"] = str(value)
    configure_logging(settings.log_level, settings.log_format)
    for line in [*name_warnings(), *origin_warnings(settings)]:
        print(line, file=sys.stderr)
    # --port 0 asks the OS for a free port: the banner names the one it gave.
    bound = settings.model_copy(update={"port": sock.getsockname()[1]})
    print(welcome(bound), file=sys.stderr, flush=True)
    config = uvicorn.Config(
        "assetgate.cli.serve:app_factory",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_level=settings.log_level,
        log_config=None,  # our handler, our format (operations.logs)
        access_log=False,  # operations.observe writes the one access line
        server_header=False,
        # uvicorn would otherwise believe X-Forwarded-For from 127.0.0.1 and rewrite the client
        # address before the rate limiter sees it; ASSETGATE_TRUSTED_PROXIES decides that instead.
        proxy_headers=False,
        timeout_graceful_shutdown=settings.shutdown_grace_s,
        # Header and idle deadlines per connection, a connection budget, and the work budget
        # (ASSETGATE_LIMIT_CONCURRENCY running requests) counted apart: cli.connections.
        http=GuardedHttpToolsProtocol,
        # Idle keep-alive connections close after keep_alive_s (the proxy in front must close its
        # idle upstream connections sooner: deploy/nginx.conf.template).
        timeout_keep_alive=settings.keep_alive_s,
        # Without httptools, h11 reads the head (request line and headers) up to this size and
        # answers plain text past it: keep it above ASSETGATE_MAX_URL_BYTES (web/urllimit.py).
        h11_max_incomplete_event_size=h11_head_limit(settings.max_url_bytes),
    )
    return run_server(config, sock)


def welcome(settings: Settings, parts: Sequence[Part] | None = None) -> str:
    """The URLs to open, printed once before uvicorn starts: the pages each part declares
    (``parts``: the app's)."""
    from assetgate.app import PARTS  # not at import: `assetgate sign` needs no app

    listed = PARTS if parts is None else parts
    host = settings.host if settings.host not in ("0.0.0.0", "::") else "127.0.0.1"
    base = f"http://{host if ':' not in host else f'[{host}]'}:{settings.port}"
    lines = [f"assetgate: serving {settings.root} with {settings.workers} worker(s); open"]
    lines += [
        f"  {base}{page.path:<17} {page.says}"
        for part in listed
        for page in part.pages
        if page.shown(settings)
    ]
    lines += [
        f"  {base}/openapi.json     the API description",
        f"  {base}/healthz          alive   ({base}/readyz ready, {base}/metrics Prometheus)",
    ]
    return "\n".join(lines)
