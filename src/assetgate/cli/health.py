"""``assetgate health [--url URL] [--ready]``: ask a running server, exit 0 or 1 with one line.

What compose healthchecks, exec probes and the image's ``HEALTHCHECK`` run. Without ``--url`` it
asks this machine's ``ASSETGATE_PORT`` (on ``ASSETGATE_HOST``, or loopback when that is a wildcard
address), so the same environment that configures ``assetgate serve`` configures the probe.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Final

import httpx

TIMEOUT_S: Final = 5.0
WILDCARDS: Final = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


def add_parser(sub: Any) -> None:
    health = sub.add_parser(
        "health",
        help="check a running server (exit 0 healthy, 1 not)",
        description="Ask a running server's /healthz (or /readyz with --ready) and exit 0 when it "
        "answers 200, else 1, with one line saying what was seen.",
    )
    health.add_argument(
        "--url",
        help="the server's base URL, or its /healthz or /readyz URL itself (default: "
        "http://ASSETGATE_HOST:ASSETGATE_PORT, loopback for a wildcard host)",
    )
    health.add_argument("--ready", action="store_true", help="ask /readyz instead of /healthz")
    health.add_argument(
        "--timeout", type=float, default=TIMEOUT_S, help=f"seconds (default {TIMEOUT_S:g})"
    )
    health.set_defaults(run=run)


def default_base() -> str:
    """From the environment alone: a probe must not fail on a setting it does not use."""
    host = os.environ.get("ASSETGATE_HOST", "127.0.0.1").strip()
    host = WILDCARDS.get(host, host)
    port = os.environ.get("ASSETGATE_PORT", "8080").strip() or "8080"
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def probe_url(given: str | None, ready: bool) -> str:
    """The URL to ask: a base URL gets /healthz (/readyz with ``--ready``) appended; a probe URL
    itself (``…/healthz`` or ``…/readyz``, what a load balancer is configured with) is taken as
    it is, or swapped for the other probe when ``--ready`` says so."""
    base = (given or default_base()).rstrip("/")
    for probe in ("/healthz", "/readyz"):
        if base.endswith(probe):
            base = base.removesuffix(probe)
            if given is not None and not ready:
                return f"{base}{probe}"
    return f"{base}/readyz" if ready else f"{base}/healthz"


def run(args: argparse.Namespace) -> int:
    url = probe_url(args.url, args.ready)
    ok, line = check(url, args.timeout)
    print(line, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


def check(url: str, timeout_s: float) -> tuple[bool, str]:
    # trust_env=False: a probe talks to the server directly, never through HTTP_PROXY.
    try:
        with httpx.Client(timeout=timeout_s, trust_env=False) as client:
            response = client.get(url)
    except httpx.InvalidURL as exc:
        return False, f"assetgate health: --url: {exc}"
    except httpx.HTTPError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return False, f"unhealthy: {url}: {reason}"
    try:
        body = response.json()
    except ValueError:
        body = None
    status = body.get("status") if isinstance(body, dict) else None
    summary = f"{response.status_code} {status or '(not an assetgate answer)'}"
    if isinstance(body, dict) and body.get("failed"):
        summary += f" (failed: {', '.join(map(str, body['failed']))})"
    if isinstance(body, dict) and body.get("version"):
        summary += f", assetgate {body['version']}"
    healthy = response.status_code == 200 and status in ("ok", "ready")
    return healthy, f"{'healthy' if healthy else 'unhealthy'}: {url} {summary}"
