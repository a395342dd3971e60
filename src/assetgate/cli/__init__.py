"""The ``assetgate`` command line: one sub-command a module, this file only dispatches."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from assetgate import __version__
from assetgate.cli import health, optimize, purge, serve, sign
from assetgate.web.openapi import API_VERSION


def version_line() -> str:
    """The package's version and the version of the interfaces it serves (spec, OpenAPI)."""
    return f"assetgate {__version__} (interfaces {API_VERSION})"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="assetgate",
        description="assetgate: image and asset optimizer, package library, WebP conversion "
        "and whois lookups in one HTTP service.",
    )
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve.add_parser(sub)
    optimize.add_parser(sub)
    sign.add_parser(sub)
    health.add_parser(sub)
    purge.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    result: int = args.run(args)
    return result
