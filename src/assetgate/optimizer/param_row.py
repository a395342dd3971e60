"""One row of the optimizer's parameter table: how it is read from a query and described.

A ``Param`` reads its value with the ``web.params`` reader its ``kind`` names (400 naming the
parameter) and gives the JSON Schema of the raw value for OpenAPI, so the parser and the document
cannot disagree. The rows themselves are ``optimizer.params.PARAMS``. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from assetgate.errors import AppError
from assetgate.optimizer.vocabulary import (
    AUTO_HIGH,
    AUTO_LOW,
    AUTO_PATTERN,
    DEFAULT_SHARPEN,
    MAX_STR,
    QUALITY_NUMBER,
)
from assetgate.web.params import (
    read_bool,
    read_choice,
    read_flag,
    read_int,
    read_number,
    read_str,
    read_strength,
    refuse_empty,
)

Kind = Literal["int", "choice", "bool", "flag", "str", "strength", "number", "quality"]


#: What a switch accepts, in its 400s (docs/optimizer.md, "Switches").
BOOL_EXPECTED: Final = "true, false, 1 or 0 (the bare name means true)"


@dataclass(frozen=True, slots=True)
class Param:
    """One query parameter: how to read it and how to describe it."""

    name: str
    kind: Kind
    doc: str
    alias: str | None = None
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    default: Any = None
    pattern: str | None = None
    expected: str = ""
    max_len: int = MAX_STR
    image: bool = True  # False: only meaningful for CSS/JS
    #: A valid value other than the default: the OpenAPI example, and the value the table-walking
    #: test (tests/optimizer/test_table.py) checks changes the ETag and the cache key.
    example: str = ""
    #: Not in spec §4.1: an assetgate extension (docs/optimizer.md, ``x-extension`` in OpenAPI).
    extension: bool = False
    #: ``strength`` kind: the value ``true`` stands for.
    on: int = DEFAULT_SHARPEN

    def read(self, query: Mapping[str, str]) -> Any:
        if self.kind == "int":
            return read_int(
                query, self.name, low=self.low, high=self.high, alias=self.alias,
                default=self.default,
            )  # fmt: skip
        if self.kind == "choice":
            table = {c: c for c in self.choices}
            return read_choice(query, self.name, table, alias=self.alias, default=self.default)
        if self.kind == "bool":
            refuse_empty(query, self.name, BOOL_EXPECTED)
            return read_bool(query, self.name, alias=self.alias, default=bool(self.default))
        if self.kind == "flag":
            return read_flag(query, self.name)
        if self.kind == "strength":
            return read_strength(query, self.name, self.low, self.high, self.on)
        if self.kind == "number":
            return read_number(query, self.name, self.low, self.high)
        if self.kind == "quality":
            return read_quality(query, self)
        assert self.pattern is not None
        return read_str(
            query, self.name, min_len=1, max_len=self.max_len, pattern=re.compile(self.pattern),
            expected=self.expected,
        )  # fmt: skip

    def schema(self) -> dict[str, Any]:
        """JSON Schema of the raw query value (OpenAPI 3.1)."""
        if self.kind == "int":
            return {"type": "integer", "minimum": self.low, "maximum": self.high}
        if self.kind == "choice":
            return {"type": "string", "enum": list(self.choices)}
        if self.kind == "bool":
            return {"type": "boolean"}
        if self.kind == "flag":
            return {"type": "integer", "enum": [0, 1]}
        if self.kind == "number":
            return {"type": "number", "minimum": self.low, "maximum": self.high}
        if self.kind == "quality":
            return {
                "oneOf": [
                    {"type": "integer", "minimum": self.low, "maximum": self.high},
                    {
                        "type": "string",
                        "pattern": f"^(?:{QUALITY_NUMBER}|{AUTO_PATTERN.pattern})$",
                    },
                ]
            }
        if self.kind == "strength":
            return {
                "oneOf": [
                    {"type": "boolean"},
                    {"type": "integer", "minimum": self.low, "maximum": self.high},
                ]
            }
        return {
            "type": "string",
            "minLength": 1,
            "maxLength": self.max_len,
            "pattern": f"^(?:{self.pattern})$",
        }


def read_quality(query: Mapping[str, str], param: Param) -> int | str | None:
    """An integer ``low..high``, or ``auto`` / ``auto:<score>`` returned as that string (the spec
    resolves a bare ``auto`` with the server's target); 400 naming the key given."""
    key = param.name if param.name in query else param.alias
    raw = query.get(key) if key is not None else None
    if raw is None or key is None or not raw.strip().startswith("auto"):
        value: int | None = read_int(
            query, param.name, low=param.low, high=param.high, alias=param.alias,
            default=param.default,
        )  # fmt: skip
        return value
    text = raw.strip()
    if AUTO_PATTERN.fullmatch(text) is None:
        raise AppError.bad_param(
            key,
            f"an integer {param.low}..{param.high}, auto, or auto:<score {AUTO_LOW}..{AUTO_HIGH}>",
            raw,
        )
    return text
