"""The OpenAPI 3.1 document, assembled from the parts' own declarative tables."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

API_VERSION = "1.2.2"

#: The one error body (``AppError``, rendered by ``web/responses.py``), referenced by every
#: documented error answer through ``error_response``.
ERROR_REF: Final = "#/components/schemas/Error"

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error", "code"],
    "properties": {
        "error": {"type": "string"},
        "code": {"type": "integer"},
        "error_id": {"type": "string"},
    },
}


#: The routes the app itself answers, beside the parts'.
SERVICE_PATHS: dict[str, Any] = {
    "/healthz": {
        "get": {
            "operationId": "health",
            "summary": "Liveness: the process answers.",
            "responses": {
                "200": {
                    "description": '`{"status": "ok", "version": "<package>", '
                    '"interface_version": "1.2.2"}`, `Cache-Control: no-store`.',
                    "content": {"application/json": {"schema": {"type": "object"}}},
                }
            },
        }
    },
    "/readyz": {
        "get": {
            "operationId": "readiness",
            "summary": "Readiness: the store is writable and Redis (when configured) answers.",
            "responses": {
                "200": {
                    "description": "Every check passed (`Cache-Control: no-store`).",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
                "503": {
                    "description": "A check failed; the body names it.",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
            },
        }
    },
    "/metrics": {
        "get": {
            "operationId": "metrics",
            "summary": "Prometheus metrics (`assetgate_*`).",
            "responses": {
                "200": {
                    "description": "The text exposition format.",
                    "content": {"text/plain": {"schema": {"type": "string"}}},
                }
            },
        }
    },
    "/openapi.json": {
        "get": {
            "operationId": "openapiDocument",
            "summary": "This document.",
            "responses": {
                "200": {
                    "description": "OpenAPI 3.1.",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                }
            },
        }
    },
}


def error_response(description: str, *, body: bool = True) -> dict[str, Any]:
    """One documented error answer: ``description`` and, unless the answer has no body (a HEAD),
    the JSON error every part answers with."""
    if not body:
        return {"description": description}
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": ERROR_REF}}},
    }


def error_responses(described: Mapping[str, str], *, body: bool = True) -> dict[str, Any]:
    """``error_response`` for each status -> description of ``described``."""
    return {status: error_response(text, body=body) for status, text in described.items()}


#: Every operation may answer it: the URL limit is checked before routing (web/urllimit.py).
URL_TOO_LONG: Final = error_response(
    "The URL is longer than ASSETGATE_MAX_URL_BYTES (16 KiB by default)."
)


def make_document(paths: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for table in (SERVICE_PATHS, *paths):
        for path, operations in table.items():
            merged[path] = {
                method: {**op, "responses": {**op["responses"], "414": URL_TOO_LONG}}
                if isinstance(op, dict) and "responses" in op
                else op
                for method, op in operations.items()
            }
    return {
        "openapi": "3.1.1",
        "info": {
            "title": "assetgate",
            "version": API_VERSION,
            "description": "Image and asset optimizer, package library, WebP conversion, whois.",
        },
        "paths": merged,
        "components": {"schemas": {"Error": ERROR_SCHEMA}},
    }
