"""Presets (``preset=thumb``) and snapped widths: fewer, named variants for caches and signers.

Pure: the preset file is read by the caller (start-up and the optimizer's lifespan) and checked
here, so a bad file stops the server at start with one line naming ``ASSETGATE_PRESETS``.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Final

from assetgate.errors import AppError
from assetgate.optimizer.params import ALIASES
from assetgate.optimizer.spec import ImageSpec, is_recognised, parse_spec
from assetgate.settings import json_text
from assetgate.web.params import long_names

PRESET_PARAM: Final = "preset"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

Presets = Mapping[str, Mapping[str, str]]
NO_PRESETS: Final[Presets] = MappingProxyType({})


def transforms(query: Mapping[str, str]) -> bool:
    """Does the query ask for a transformation (else a public URL is a static file)?"""
    return PRESET_PARAM in query or is_recognised(query)


def expand(query: Mapping[str, str], presets: Presets) -> Mapping[str, str]:
    """The preset's parameters under the request's own (explicit parameters win)."""
    name = query.get(PRESET_PARAM)
    if name is None:
        return query
    preset = presets.get(name)
    if preset is None:
        known = ", ".join(sorted(presets)[:20]) or "none are configured"
        raise AppError.bad_param(PRESET_PARAM, f"a configured preset ({known})", name)
    explicit = long_names({k: v for k, v in query.items() if k != PRESET_PARAM}, ALIASES)
    return {**preset, **explicit}


def snap_width(spec: ImageSpec, allowed: Sequence[int]) -> ImageSpec:
    """Width rounded up to the next allowed one (the largest when above them all).

    Output still never exceeds the source unless ``upscaling=resampling`` asks for it.
    """
    if not allowed or spec.width is None:
        return spec
    index = bisect.bisect_left(allowed, spec.width)
    return replace(spec, width=allowed[min(index, len(allowed) - 1)])


def parse_presets(text: str) -> dict[str, dict[str, str]]:
    """JSON ``{"thumb": {"width": 200, "format": "webp"}}`` -> checked presets, else ValueError."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object mapping a preset name to its parameters")
    return {str(name): _preset(str(name), params) for name, params in data.items()}


def load_presets(value: str | os.PathLike[str] | None) -> dict[str, dict[str, str]]:
    """ASSETGATE_PRESETS: the JSON itself or its file (``settings.json_text``)."""
    if value is None:
        return {}
    return parse_presets(json_text(value))


def _preset(name: str, params: object) -> dict[str, str]:
    if not _NAME.fullmatch(name):
        raise ValueError(f"preset name {name[:64]!r}: expected 1-64 of A-Z a-z 0-9 _ -")
    if not isinstance(params, dict):
        raise ValueError(f"preset {name!r}: expected an object of parameters")
    values = {str(key): _value(value) for key, value in params.items()}
    if values and not is_recognised(values):
        raise ValueError(f"preset {name!r}: names no optimizer parameter")
    unknown = [key for key in values if not is_recognised({key: ""}) or key == "face_crop"]
    if unknown:
        raise ValueError(f"preset {name!r}: unknown parameter {unknown[0]!r}")
    try:
        parse_spec(values)
    except AppError as exc:
        raise ValueError(f"preset {name!r}: {exc.message}") from None
    return long_names(values, ALIASES)


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    raise ValueError(f"parameter values must be strings, integers or booleans, got {value!r}")
