"""A part reaches its own state typed as its lifespan built it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from starlette.requests import Request

from assetgate.part import part_state


@dataclass
class Mine:
    value: int


@dataclass
class Other:
    value: int


def request_with(state: dict[str, object]) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/", "headers": [], "state": state})


def test_the_state_comes_back_typed() -> None:
    found = part_state(request_with({"mine": Mine(3)}), "mine", Mine)
    assert found == Mine(3)


def test_a_state_of_another_type_is_a_programming_error_named() -> None:
    with pytest.raises(TypeError, match="mine: the lifespan yielded Other, not Mine"):
        part_state(request_with({"mine": Other(3)}), "mine", Mine)
