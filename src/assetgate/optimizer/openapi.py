"""The optimizer's OpenAPI paths, written from ``spec.PARAMS`` - the table the parser reads.

A parameter cannot be documented differently from how it is parsed: both come from one row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from assetgate.imaging.formats import MEDIA_TYPES
from assetgate.optimizer.param_row import Param
from assetgate.optimizer.params import OPENAPI_PARAMS
from assetgate.web.openapi import error_responses

_BINARY: Final = {"type": "string", "format": "binary"}
_BODY_TYPES: Final = (*MEDIA_TYPES.values(), "text/css", "application/javascript")

_RESPONSE_HEADERS: Final[dict[str, tuple[dict[str, Any], str]]] = {
    "ETag": ({"type": "string"}, "Derived from the transformation and the source file."),
    "Last-Modified": ({"type": "string"}, "Modification time of the source file (HTTP-date)."),
    "Cache-Control": ({"type": "string"}, "Caching directive for the CDN and clients."),
    "X-Optimizer-Cache": (
        {"type": "string", "enum": ["HIT", "MISS", "BYPASS"]},
        "Present when transformed: the result cache's answer (extension of spec §2.3).",
    ),
    "X-Optimizer-Status": (
        {"type": "string", "enum": ["passthrough"]},
        "Present when no transformation was needed.",
    ),
    "X-Original-Size": ({"type": "integer", "minimum": 0}, "Bytes of the source file."),
    "X-Compressed-Size": ({"type": "integer", "minimum": 0}, "Bytes after transformation."),
    "X-Compression-Ratio": (
        {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?%$"},
        "Reduction relative to the source file.",
    ),
    "X-Output-Format": (
        {"type": "string", "enum": list(MEDIA_TYPES)},
        "Actual image output format.",
    ),
    "X-Output-Quality": (
        {"type": "string", "pattern": r"^(?:[0-9]{1,3}|lossless|near-lossless:[0-9]{1,3})$"},
        "Extension: the quality a `max_bytes` or `quality=auto` search settled on (WebP `auto` "
        "may settle on `lossless` or `near-lossless:<level>`).",
    ),
    "X-Output-Score": (
        {"type": "string", "pattern": r"^-?[0-9]+\.[0-9]{2}$"},
        "Extension: with `quality=auto`, the answer's SSIMULACRA2 score against the variant's "
        "own lossless rendering (docs/optimizer.md).",
    ),
    "X-Optimizer-Budget": (
        {"type": "string", "enum": ["met", "exceeded"]},
        "Extension: whether the answer fits `max_bytes` (`exceeded`: even the lowest quality "
        "did not; this is the smallest).",
    ),
    "X-Minify-Skipped": (
        {"type": "string", "enum": ["timeout", "refused", "size"]},
        "CSS/JS served without the asked min=1/safe=1, and why: past the minify deadline, the"
        " minifier refused the file, or over the asset size cap (extension of spec §2.3).",
    ),
}
_INFO: Final = {
    "type": "object",
    "description": "Extension: the answer to `info=1` (docs/optimizer.md).",
    "properties": {
        "width": {"type": "integer"},
        "height": {"type": "integer"},
        "format": {"type": "string"},
        "frames": {"type": "integer"},
        "has_alpha": {"type": "boolean"},
        "orientation": {"type": "integer"},
        "color_space": {"type": "string"},
        "bytes": {"type": "integer"},
        "dominant_color": {"type": "string", "pattern": "^#[0-9a-f]{6}$"},
        "blurhash": {"type": "string"},
        "thumbhash": {"type": "string"},
        "placeholder": {"type": "string"},
    },
}

_ERRORS: Final = {
    "400": "Invalid parameter (the message names it); also face_crop.",
    "404": "File does not exist, or is not a safe public path.",
    "405": "Method other than GET, HEAD, OPTIONS.",
    "413": "Image size or memory safety limit exceeded.",
    "415": "Input image format cannot be identified or decoded.",
    "429": "Rate limit exceeded (only when the optimizer is rate limited).",
    "500": "Unexpected error; carries an error_id.",
    "501": "The server lacks the requested input or output codec.",
    "503": "Too many images in work; retry after Retry-After seconds.",
}


#: A file of the demo root (``assetgate serve`` without --root): what a reader may try, and what
#: schemathesis's coverage phase starts from, so its boundary values reach the image pipeline.
EXAMPLE_FILE: Final = "landscape.jpg"


def parameter(param: Param, *, required: bool = False) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": param.name,
        "in": "query",
        "required": required,
        "description": ("Extension (not in the interface spec): " if param.extension else "")
        + param.doc,
        "schema": param.schema() | ({"minLength": 1} if required else {}),
    }
    if param.name == "file":
        row["example"] = EXAMPLE_FILE
    elif param.example:
        row["example"] = param.example
    if param.extension:
        row["x-extension"] = True
    return row


#: What a reader (and schemathesis's stateful phase) can do next with the file just answered.
_LINKS: Final[dict[str, Any]] = {
    "HeadersOfThisAnswer": {
        "operationId": "inspectOptimizedFile",
        "parameters": {"file": "$request.query.file"},
        "description": "The same file's headers, without the body.",
    },
    "PublicUrlOfThisFile": {
        "operationId": "optimizePublicFile",
        "parameters": {"path": "$request.query.file"},
        "description": "The same file on its public URL (spec §4.1 rule 4).",
    },
}


def _responses(*, body: bool, links: dict[str, Any] | None = None) -> dict[str, Any]:
    headers = {
        name: {"schema": schema, "description": text}
        for name, (schema, text) in _RESPONSE_HEADERS.items()
    }
    ok: dict[str, Any] = {
        "description": "The transformed file, or the original when nothing had to change.",
        "headers": headers,
    }
    if body:
        ok["content"] = {media: {"schema": _BINARY} for media in _BODY_TYPES}
        ok["content"]["application/json"] = {"schema": _INFO}
    if links:
        ok["links"] = links
    responses: dict[str, Any] = {
        "200": ok,
        "304": {"description": "Not modified (If-None-Match / If-Modified-Since)."},
    }
    return {**responses, **error_responses(_ERRORS, body=body)}


def make_paths(file_param: Param) -> dict[str, Any]:
    params = [parameter(file_param, required=True), *(parameter(p) for p in OPENAPI_PARAMS)]
    path = {
        "name": "path",
        "in": "path",
        "required": True,
        "description": "Path of the file under the document root.",
        "schema": {"type": "string"},
        "example": EXAMPLE_FILE,
    }
    public = [path, *(parameter(p) for p in OPENAPI_PARAMS)]
    return {
        "/": {
            "get": {
                "operationId": "optimizeFile",
                "summary": "Transform an image or minify/compress a CSS or JavaScript file.",
                "parameters": params,
                "responses": _responses(body=True, links=_LINKS),
            },
            "head": {
                "operationId": "inspectOptimizedFile",
                "summary": "Headers of the optimizeFile answer, without a body.",
                "parameters": params,
                "responses": _responses(body=False),
            },
            "options": {
                "operationId": "optimizerOptions",
                "summary": "Allowed methods and CORS preflight.",
                "responses": {"204": {"description": "Allow and CORS headers."}},
            },
        },
        "/{path}": {
            "get": {
                "operationId": "optimizePublicFile",
                "summary": "The same transformation on the public URL of the file (spec §4.1 rule"
                " 4); without any optimizer parameter, the file as it is.",
                "parameters": public,
                "responses": _responses(body=True),
            },
            "head": {
                "operationId": "inspectPublicFile",
                "summary": "Headers of the optimizePublicFile answer, without a body.",
                "parameters": public,
                "responses": _responses(body=False),
            },
        },
    }


def with_configured_params(
    document: dict[str, Any], *, presets: Sequence[str], signed: bool
) -> dict[str, Any]:
    """The document with the parameters only these settings give the optimizer: ``preset``
    (ASSETGATE_PRESETS, its names as the enum) and ``s`` (ASSETGATE_SIGNING_KEYS)."""
    extra: list[dict[str, Any]] = []
    if presets:
        extra.append({
            "name": "preset",
            "in": "query",
            "description": "A named parameter set configured in ASSETGATE_PRESETS; explicit "
            "parameters override its values.",
            "schema": {"type": "string", "enum": sorted(presets)},
        })  # fmt: skip
    if signed:
        extra.append({
            "name": "s",
            "in": "query",
            "description": "The URL's signature (ASSETGATE_SIGNING_KEYS is set): required on "
            "every transforming request, made with `assetgate sign`.",
            "schema": {"type": "string"},
        })  # fmt: skip
    if not extra:
        return document
    paths = document.get("paths", {})
    for path in ("/", "/{path}"):
        for method in ("get", "head"):
            operation = paths.get(path, {}).get(method)
            if operation is not None:
                operation["parameters"] = [*operation["parameters"], *extra]
    return document
