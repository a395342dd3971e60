"""Signed URLs: HMAC-SHA256 over the file's path and the canonical transformation.

Pure (no HTTP objects), so a web app, the command line and the server share one definition
(docs/deploying.md "Signed URLs" spells it out for reimplementation):

1. the path of the file relative to the document root, ``/``-prefixed, percent-encoded with ``/``
   kept (the public form ``/a/b.jpg?…`` and the API form ``/?file=a/b.jpg&…`` give the same path);
2. every query parameter but ``s`` and ``file``; a short alias (``w``, ``h``, ``q``, ``f``) becomes
   its long name unless the long name is present too (then the alias is dropped: the long name wins
   on the server as well); of a repeated name the last value counts;
3. sorted by name, each ``name=value`` percent-encoded (RFC 3986 unreserved characters kept),
   joined with ``&``; the message is ``<path>?<that>`` (``<path>?`` with no parameters);
4. the signature is base64url without padding of HMAC-SHA256(key, message as UTF-8), sent as ``s``.

Several keys verify (rotation: the first signs, all verify), compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from typing import Final
from urllib.parse import quote

from assetgate.errors import AppError
from assetgate.web.params import long_names

SIGNATURE_PARAM: Final = "s"
#: Parameters that are not part of the transformation: the signature and the API form's path.
UNSIGNED: Final = frozenset({SIGNATURE_PARAM, "file"})


def canonical_message(
    path: str, params: Iterable[tuple[str, str]], aliases: Mapping[str, str]
) -> str:
    """``/photo.jpg?format=webp&width=400`` for ``photo.jpg`` with ``w=400&f=webp`` (any order)."""
    last: dict[str, str] = {}
    for name, value in params:
        if name not in UNSIGNED:
            last[name] = value
    canonical = long_names(last, aliases)
    query = "&".join(
        f"{quote(name, safe='')}={quote(value, safe='')}"
        for name, value in sorted(canonical.items(), key=lambda item: item[0].encode())
    )
    return f"/{quote(path.lstrip('/'), safe='/')}?{query}"


def sign(key: str, message: str) -> str:
    digest = hmac.new(key.encode(), message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def verify(keys: Sequence[str], message: str, signature: str | None) -> bool:
    """True when any key signs ``message`` as ``signature`` (each compared in constant time)."""
    if not signature:
        return False
    given = signature.encode(errors="replace")
    matched = False
    for key in keys:  # every key is tried, so timing does not tell which one matched
        matched |= hmac.compare_digest(sign(key, message).encode(), given)
    return matched


def require_signature(
    keys: Sequence[str],
    path: str,
    params: Iterable[tuple[str, str]],
    signature: str | None,
    aliases: Mapping[str, str],
) -> None:
    """403 naming ``s`` unless one of ``keys`` signed ``path`` with ``params``: checked before any
    file is looked at, so an unsigned request learns nothing and costs nothing."""
    if not verify(keys, canonical_message(path, params, aliases), signature):
        raise AppError(
            403, f"{SIGNATURE_PARAM}: missing or wrong URL signature", param=SIGNATURE_PARAM
        )
