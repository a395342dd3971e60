"""``assetgate purge PATH… [--prefix P]… [--tag T]… [--url URL]``: the purge from a shell.

It asks the running service's ``POST /admin/purge`` (the same purge: every node, every tier, the
CDN) with ``ASSETGATE_ADMIN_TOKEN`` from the environment, prints the JSON answer and exits 0, or
prints the error and exits 1. Without ``--url`` it asks this machine's ``ASSETGATE_HOST`` and
``ASSETGATE_PORT``, as ``assetgate health`` does. The token never appears in what it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Final

import httpx

from assetgate.cli.health import default_base

TIMEOUT_S: Final = 60.0


def add_parser(sub: Any) -> None:
    purge = sub.add_parser(
        "purge",
        help="forget files on every node, in every tier and at the CDN",
        description="Purge source paths (and everything under --prefix, and every --tag) "
        "through a running server's POST /admin/purge, with ASSETGATE_ADMIN_TOKEN.",
    )
    purge.add_argument("paths", nargs="*", metavar="PATH", help="a public path, e.g. /img/a.jpg")
    purge.add_argument("--prefix", action="append", default=[], help="every path under it")
    purge.add_argument("--tag", action="append", default=[], help="a cache tag, e.g. npm:react")
    purge.add_argument(
        "--url",
        help="the server's base URL (default: http://ASSETGATE_HOST:ASSETGATE_PORT, "
        "loopback for a wildcard host)",
    )
    purge.add_argument(
        "--timeout", type=float, default=TIMEOUT_S, help=f"seconds (default {TIMEOUT_S:g})"
    )
    purge.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    token = os.environ.get("ASSETGATE_ADMIN_TOKEN", "").strip()
    if not token:
        print("assetgate purge: ASSETGATE_ADMIN_TOKEN is not set", file=sys.stderr)
        return 1
    if not (args.paths or args.prefix or args.tag):
        print("assetgate purge: name at least one PATH, --prefix or --tag", file=sys.stderr)
        return 1
    base = (args.url or default_base()).rstrip("/")
    body = {"paths": args.paths, "prefixes": args.prefix, "tags": args.tag}
    try:
        with httpx.Client(timeout=args.timeout, trust_env=False) as client:
            answer = client.post(
                f"{base}/admin/purge", json=body, headers={"Authorization": f"Bearer {token}"}
            )
    except httpx.InvalidURL as exc:
        print(f"assetgate purge: --url: {exc}", file=sys.stderr)
        return 1
    except httpx.HTTPError as exc:
        print(f"assetgate purge: {base}: {type(exc).__name__}", file=sys.stderr)
        return 1
    try:
        shown = json.dumps(answer.json(), indent=2)
    except ValueError:
        shown = answer.text[:500]
    if answer.status_code != 200:
        print(f"assetgate purge: {answer.status_code} {shown}", file=sys.stderr)
        return 1
    print(shown)
    return 0
