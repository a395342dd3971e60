"""OpenAPI path of ``POST /admin/purge`` (docs/caching.md, "Purge")."""

from __future__ import annotations

from typing import Any, Final

from assetgate.admin.orders import MAX_CHARS, MAX_ITEMS
from assetgate.serving.tags import MAX_TAG_CHARS
from assetgate.web.openapi import error_responses


def _list(max_chars: int, example: str) -> dict[str, Any]:
    item = {"type": "string", "minLength": 1, "maxLength": max_chars}
    return {"type": "array", "items": item, "maxItems": MAX_ITEMS, "example": [example]}


OPENAPI: Final[dict[str, Any]] = {
    "/admin/purge": {
        "post": {
            "operationId": "purge",
            "summary": "Forget source paths, folders or tagged answers on every node, in every "
            "tier, and at the CDN. Only with ASSETGATE_ADMIN_TOKEN set (else 404); "
            "`Authorization: Bearer <token>`.",
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {
                                "paths": _list(MAX_CHARS, "/img/a.jpg"),
                                "prefixes": _list(MAX_CHARS, "/img/2024/"),
                                "tags": _list(MAX_TAG_CHARS, "npm:react@18.2.0"),
                            },
                        }
                    }
                },
            },
            "responses": {
                "200": {
                    "description": "Purged: the paths, the counts per shared tier and per node, "
                    "what each CDN acknowledged.",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
                **error_responses(
                    {
                        "400": "A field of the body is wrong.",
                        "401": "Token missing or wrong.",
                        "404": "Purge is off (no admin token).",
                        "405": "Not a POST.",
                        "413": "Body over 1 MiB.",
                        "503": "A tier cannot answer; retry.",
                    }
                ),
            },
        }
    }
}
