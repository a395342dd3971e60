from __future__ import annotations

import pytest

from assetgate.errors import AppError
from assetgate.packages.query import SearchQuery, parse_search_query


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"q": "jq"}, SearchQuery("jq", 12)),
        ({"q": "  jquery  ui "}, SearchQuery("jquery ui", 12)),
        ({"q": "x" * 80, "limit": "20"}, SearchQuery("x" * 80, 20)),
        ({"q": "react", "limit": "1"}, SearchQuery("react", 1)),
        ({"q": "日本"}, SearchQuery("日本", 12)),
        ({"q": " " * 39 + "ok" + " " * 39}, SearchQuery("ok", 12)),  # 80 as sent
    ],
)
def test_valid(query: dict[str, str], expected: SearchQuery) -> None:
    assert parse_search_query(query) == expected


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({}, "q"),
        ({"q": ""}, "q"),
        ({"q": "a"}, "q"),
        ({"q": "  a  "}, "q"),
        ({"q": "x" * 81}, "q"),
        ({"q": "  " + "x" * 79 + "  "}, "q"),  # the limit applies to q as sent, not trimmed
        ({"q": "jquery   " * 9 + "ui"}, "q"),  # 83 characters, 51 once spaces are collapsed
        ({"q": "ok", "limit": "0"}, "limit"),
        ({"q": "ok", "limit": "21"}, "limit"),
        ({"q": "ok", "limit": "1.5"}, "limit"),
        ({"q": "ok", "limit": "abc"}, "limit"),
        ({"q": "ok", "limit": ""}, "limit"),
        ({"q": "ok", "limit": "-3"}, "limit"),
    ],
)
def test_invalid_names_the_parameter(query: dict[str, str], param: str) -> None:
    with pytest.raises(AppError) as caught:
        parse_search_query(query)
    assert caught.value.status == 400
    assert caught.value.param == param
    assert caught.value.message.startswith(param)
