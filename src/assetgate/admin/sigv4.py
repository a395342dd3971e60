"""AWS Signature Version 4 for one request: what CloudFront's ``CreateInvalidation`` needs.

Written here rather than taken from ``botocore``: one signed POST is ~40 lines of the published
algorithm (canonical request, string to sign, derived key), while botocore is a 13 MB dependency
with its own pins on ``urllib3`` and ``jmespath`` and would be imported only for its signer; the
result store already reaches S3 through obstore, which signs in Rust. The tests check the signer
against AWS's published example signatures. Pure: no clock, no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import datetime
from typing import Final
from urllib.parse import quote, urlsplit

ALGORITHM: Final = "AWS4-HMAC-SHA256"


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = _hmac(("AWS4" + secret).encode(), date)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    return key


def _canonical_query(query: str) -> str:
    pairs = []
    for item in query.split("&") if query else []:
        name, _, value = item.partition("=")
        pairs.append((quote(name, safe="-_.~"), quote(value, safe="-_.~")))
    return "&".join(f"{name}={value}" for name, value in sorted(pairs))


def sign(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    access_key: str,
    secret_key: str,
    region: str,
    service: str,
    now: datetime,
    session_token: str | None = None,
) -> dict[str, str]:
    """``headers`` plus ``X-Amz-Date`` (and ``X-Amz-Security-Token``) and ``Authorization``;
    every header given is signed, ``Host`` from the URL when absent. ``now`` in UTC."""
    parts = urlsplit(url)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    date = stamp[:8]
    signed = {"host": parts.netloc, **{name.lower(): value for name, value in headers.items()}}
    signed["x-amz-date"] = stamp
    if session_token:
        signed["x-amz-security-token"] = session_token
    names = sorted(signed)
    canonical_headers = "".join(f"{name}:{' '.join(signed[name].split())}\n" for name in names)
    signed_headers = ";".join(names)
    canonical = "\n".join(
        [
            method,
            quote(parts.path or "/", safe="/-_.~"),
            _canonical_query(parts.query),
            canonical_headers,
            signed_headers,
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join([ALGORITHM, stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = signing_key(secret_key, date, region, service)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out = {name: value for name, value in headers.items() if name.lower() != "host"}
    out["X-Amz-Date"] = stamp
    if session_token:
        out["X-Amz-Security-Token"] = session_token
    out["Authorization"] = (
        f"{ALGORITHM} Credential={access_key}/{scope}, "
        f"SignedHeaders={signed_headers}, Signature={signature}"
    )
    return out
