"""``assetgate sign URL``: print the URL with its signature, signed by the first configured key."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from assetgate.cli.settings_errors import load_settings
from assetgate.optimizer.signed import sign_url


def add_parser(sub: Any) -> None:
    sign = sub.add_parser(
        "sign",
        help="print a signed optimizer URL",
        description="Print URL with s= appended, signed with the first key of "
        "ASSETGATE_SIGNING_KEYS (docs/deploying.md, Signed URLs).",
    )
    sign.add_argument("url", help="e.g. '/photo.jpg?width=400&format=webp'")
    sign.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = load_settings({}, {})
    except SystemExit as exc:
        print(exc.code, file=sys.stderr)
        return 2
    if not settings.signing_keys:
        print("assetgate: ASSETGATE_SIGNING_KEYS: not set, nothing to sign with", file=sys.stderr)
        return 2
    print(sign_url(args.url, settings.signing_keys[0]))
    return 0
