"""``sign_url``: the importable helper a Python web app (or ``assetgate sign``) signs with."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from assetgate.optimizer.params import ALIASES
from assetgate.web.signing import SIGNATURE_PARAM, canonical_message, sign


def sign_url(url: str, key: str) -> str:
    """``/photo.jpg?width=400`` -> ``/photo.jpg?width=400&s=…`` (either URL form, any host).

    An ``s`` already present is replaced; the rest of the URL is kept byte for byte.
    """
    parts = urlsplit(url)
    pieces = [p for p in parts.query.split("&") if p and p.split("=", 1)[0] != SIGNATURE_PARAM]
    params = parse_qsl("&".join(pieces), keep_blank_values=True)
    api_form = parts.path in ("", "/")
    path = dict(params).get("file", "") if api_form else unquote(parts.path)
    signature = sign(key, canonical_message(path, params, ALIASES))
    query = "&".join([*pieces, f"{SIGNATURE_PARAM}={signature}"])
    return urlunsplit(parts._replace(query=query))
