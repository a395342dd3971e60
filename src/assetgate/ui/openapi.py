"""OpenAPI paths of the pages: each page, and the listing that completes the playground's path."""

from __future__ import annotations

from typing import Any, Final

from assetgate.ui.listing import QUERY_MAX
from assetgate.web.openapi import error_response

_PAGES: Final = {
    "/ui/": ("uiHome", "What the service offers, with links to every page."),
    "/ui/optimizer": ("uiOptimizer", "Optimizer playground; its query string is its state."),
    "/ui/convert": ("uiConvert", "Convert images to WebP by drag and drop."),
    "/ui/whois": ("uiWhois", "Whois lookup as a readable table; `?domain=` looks one up."),
    "/ui/api": ("uiApi", "This OpenAPI document as a readable page."),
}


def _page(operation: str, summary: str) -> dict[str, Any]:
    return {
        "get": {
            "operationId": operation,
            "summary": summary,
            "responses": {"200": {"description": "The page.", "content": {"text/html": {}}}},
        }
    }


OPENAPI: Final[dict[str, Any]] = {
    "/ui": {
        "get": {
            "operationId": "uiRedirect",
            "summary": "Redirects to `/ui/`.",
            "responses": {"308": {"description": "Location: /ui/"}},
        }
    },
    **{path: _page(*row) for path, row in _PAGES.items()},
    "/ui/static/{name}": {
        "get": {
            "operationId": "uiAsset",
            "summary": "The pages' scripts and style sheet.",
            "parameters": [
                {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "responses": {
                "200": {"description": "The file."},
                "404": error_response("No such file."),
            },
        }
    },
    "/ui/files": {
        "get": {
            "operationId": "uiListFiles",
            "summary": "Images, CSS and JS files of the document root whose path contains `q`.",
            "parameters": [
                {
                    "name": "q",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string", "maxLength": QUERY_MAX},
                },
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
                },
            ],
            "responses": {
                "200": {
                    "description": "Matching relative paths, sorted.",
                    "links": {
                        "OptimizeFirstFile": {
                            "operationId": "optimizeFile",
                            "parameters": {"file": "$response.body#/files/0"},
                            "description": "Each path is a `file` of the optimizer.",
                        }
                    },
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["files", "truncated"],
                                "properties": {
                                    "files": {"type": "array", "items": {"type": "string"}},
                                    "truncated": {"type": "boolean"},
                                },
                            }
                        }
                    },
                },
                "400": error_response("Invalid q or limit."),
                "404": error_response(
                    "The listing is turned off (ASSETGATE_UI_FILE_LISTING=false)."
                ),
            },
        }
    },
}
