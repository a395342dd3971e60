"""Command line: ``assetgate serve [--root DIR] [--host H] [--port P] [--workers N]``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn
from starlette.applications import Starlette

from assetgate.settings import Settings


def app_factory() -> Starlette:
    """Used by uvicorn's worker processes: each builds its app from the environment."""
    from assetgate.app import create_app

    return create_app(Settings())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assetgate", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--root", type=Path, help="document root (ASSETGATE_ROOT)")
    serve.add_argument("--host", help="bind address (ASSETGATE_HOST)")
    serve.add_argument("--port", type=int, help="TCP port (ASSETGATE_PORT)")
    serve.add_argument("--workers", type=int, help="worker processes (ASSETGATE_WORKERS)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    overrides = {
        key: value
        for key, value in (
            ("root", args.root),
            ("host", args.host),
            ("port", args.port),
            ("workers", args.workers),
        )
        if value is not None
    }
    settings = Settings(**overrides)
    if not settings.root.is_dir():
        print(f"assetgate: document root {settings.root} is not a directory", file=sys.stderr)
        return 2
    # Worker processes rebuild Settings from the environment: hand the overrides down that way.
    for key, value in overrides.items():
        os.environ[f"ASSETGATE_{key.upper()}"] = str(value)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(levelname)s %(name)s %(message)s"
    )
    uvicorn.run(
        "assetgate.__main__:app_factory",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_level=settings.log_level,
        server_header=False,
        # uvicorn would otherwise believe X-Forwarded-For from 127.0.0.1 and rewrite the client
        # address before the rate limiter sees it; ASSETGATE_TRUSTED_PROXIES decides that instead.
        proxy_headers=False,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
