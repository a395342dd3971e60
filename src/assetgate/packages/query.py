"""``/npm/search`` query string -> SearchQuery (pure; spec §4.2 and §8).

``q`` is measured as sent, in code points, 2..80 (the spec's limit and the schema's
``maxLength`` apply to the parameter, not to what is left after trimming), and must hold two
characters besides spaces; the search then uses it with runs of whitespace collapsed. ``limit``
is a base-10 integer 1..20, default 12. Anything else is a 400 that names the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from assetgate.errors import AppError
from assetgate.web.params import read_int

Q_MIN_CHARS: Final = 2
Q_MAX_CHARS: Final = 80
#: The schema's form of "2+ characters after trimming": two non-space characters, anything between.
Q_PATTERN: Final = r"^\s*\S[\s\S]*\S\s*$"
LIMIT_MIN: Final = 1
LIMIT_MAX: Final = 20
LIMIT_DEFAULT: Final = 12


@dataclass(frozen=True, slots=True)
class SearchQuery:
    q: str
    limit: int

    def cache_key(self) -> tuple[str, int]:
        return self.q.casefold(), self.limit


def parse_search_query(query: Mapping[str, str]) -> SearchQuery:
    raw = query.get("q")
    if raw is None:
        raise AppError.missing_param("q")
    if not Q_MIN_CHARS <= len(raw) <= Q_MAX_CHARS:
        raise AppError.bad_param("q", f"{Q_MIN_CHARS}..{Q_MAX_CHARS} characters", raw)
    q = " ".join(raw.split())
    if len(q) < Q_MIN_CHARS:
        raise AppError.bad_param("q", f"at least {Q_MIN_CHARS} characters besides spaces", raw)
    limit = read_int(query, "limit", low=LIMIT_MIN, high=LIMIT_MAX, default=LIMIT_DEFAULT)
    assert limit is not None
    return SearchQuery(q=q, limit=limit)
