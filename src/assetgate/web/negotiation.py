"""Pure content negotiation over header strings (RFC 9110 §12.5)."""

from __future__ import annotations


def _qvalue(params: list[str]) -> float:
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "q":
            try:
                return max(0.0, min(1.0, float(value.strip())))
            except ValueError:
                return 0.0
    return 1.0


def parse_header_list(header: str | None) -> dict[str, float]:
    """``"image/webp;q=0.9, */*;q=0.1"`` -> ``{"image/webp": 0.9, "*/*": 0.1}`` (lower-cased)."""
    result: dict[str, float] = {}
    if not header:
        return result
    for item in header.split(","):
        token, *params = item.split(";")
        token = token.strip().lower()
        if token:
            result[token] = _qvalue(params)
    return result


def accepts(accept: str | None, media_type: str) -> bool:
    """True when ``media_type`` is explicitly acceptable (q > 0) — wildcards do not count.

    ``*/*`` is sent by every client, including ones that cannot decode WebP, so only an explicit
    mention negotiates a modern format (as imgproxy and Cloudflare do).
    """
    return parse_header_list(accept).get(media_type.lower(), 0.0) > 0.0


def accepts_encoding(accept_encoding: str | None, coding: str) -> bool:
    """RFC 9110 §12.5.3: the coding, else ``*``, with q > 0; ``gzip;q=0`` means no."""
    table = parse_header_list(accept_encoding)
    coding = coding.lower()
    if coding in table:
        return table[coding] > 0.0
    return table.get("*", 0.0) > 0.0
