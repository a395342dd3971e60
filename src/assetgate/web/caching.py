"""Validators and conditional requests (RFC 9110 §8.8, §13), pure over header strings."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime


def make_etag(*parts: object) -> str:
    """A strong ETag over everything that decides the bytes of a response."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()
    return f'"{digest}"'


def http_date(when: datetime | float) -> str:
    if not isinstance(when, datetime):
        when = datetime.fromtimestamp(when, tz=UTC)
    return format_datetime(when.astimezone(UTC).replace(microsecond=0), usegmt=True)


def parse_http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _opaque(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag.startswith("W/") else tag


def is_not_modified(
    if_none_match: str | None,
    if_modified_since: str | None,
    *,
    etag: str,
    last_modified: datetime | float,
) -> bool:
    """If-None-Match (weak comparison, lists, ``*``) wins over If-Modified-Since (§13.2.2)."""
    if if_none_match is not None:
        tags = {_opaque(t) for t in if_none_match.split(",")}
        return "*" in tags or _opaque(etag) in tags
    since = parse_http_date(if_modified_since)
    if since is None:
        return False
    if not isinstance(last_modified, datetime):
        last_modified = datetime.fromtimestamp(last_modified, tz=UTC)
    return last_modified.replace(microsecond=0) <= since
