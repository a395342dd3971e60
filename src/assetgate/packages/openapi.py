"""OpenAPI paths of the package library, from the same bounds the parsers use (query.py)."""

from __future__ import annotations

from typing import Any, Final

from assetgate.packages.query import (
    LIMIT_DEFAULT,
    LIMIT_MAX,
    LIMIT_MIN,
    Q_MAX_CHARS,
    Q_MIN_CHARS,
    Q_PATTERN,
)
from assetgate.web.openapi import error_response

SEARCH_RESULT: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["service", "query", "total", "results"],
    "properties": {
        "service": {"type": "string"},
        "query": {"type": "string"},
        "total": {"type": "integer", "minimum": 0},
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "version", "description", "kind", "url", "ready"],
                "properties": {
                    "name": {"type": "string"},
                    "version": {"type": "string"},
                    "description": {"type": "string"},
                    "kind": {"type": "string", "enum": ["package", "library"]},
                    "url": {"type": "string"},
                    "ready": {"type": "boolean"},
                },
            },
        },
        "warnings": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Extension: one line per catalog that failed (results are partial).",
        },
    },
}

#: What ``pkg`` accepts (``packages.esm.importmap.parse_wanted`` is the authority).
PKG_PATTERN = (
    r"^(@[a-z0-9~-][a-z0-9._~-]{0,50}/)?[a-z0-9~-][a-z0-9._~-]{0,100}"
    r"(@[0-9A-Za-z.^~<>=|*+_-]{1,64})?(/[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,50}){0,4}$"
)
_PINNED = {
    "200": {"description": "The file, `Cache-Control: public, max-age=31536000, immutable`."},
    "304": {"description": "Not modified (strong ETag = sha256 of the file)."},
    "401": error_response(
        "A package ASSETGATE_PACKAGES_TOKEN guards, asked without the bearer token."
    ),
    "404": error_response(
        "No such package, version or file; no published version; or a name"
        " ASSETGATE_PACKAGES_ALLOW/_DENY refuses (the message names the setting)."
    ),
    "413": error_response("The package exceeds a size limit."),
    "502": error_response("The upstream failed or the integrity check failed."),
    "504": error_response("The upstream download timed out."),
}

#: A range or tag (``^1``, ``latest``) answers with the exact version it resolves to, path kept.
_RESOLVED: Final = {
    "description": "From a range or tag to the exact version it resolves to (path and query"
    " kept; `Cache-Control: public, max-age=300`).",
    "headers": {
        "Location": {"schema": {"type": "string"}, "description": "The version-pinned URL."},
        "X-Resolved-Version": {
            "schema": {"type": "string"},
            "description": "The exact version a range or tag resolved to.",
        },
    },
}

OPENAPI: Final[dict[str, Any]] = {
    "/npm": {
        "get": {
            "operationId": "packageSearchPage",
            "summary": "Package search page (HTML).",
            "responses": {
                "200": {"description": "The page.", "content": {"text/html": {}}},
                "404": error_response("The page is missing."),
            },
        }
    },
    "/npm/search": {
        "get": {
            "operationId": "searchPackages",
            "summary": "Search the npm registry and the library catalog.",
            "parameters": [
                {
                    "name": "q",
                    "in": "query",
                    "required": True,
                    "schema": {
                        "type": "string",
                        "minLength": Q_MIN_CHARS,
                        "maxLength": Q_MAX_CHARS,
                        "pattern": Q_PATTERN,
                    },
                },
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {
                        "type": "integer",
                        "minimum": LIMIT_MIN,
                        "maximum": LIMIT_MAX,
                        "default": LIMIT_DEFAULT,
                    },
                },
            ],
            "responses": {
                "200": {
                    "description": "Merged, ranked results with version-pinned URLs.",
                    "content": {"application/json": {"schema": SEARCH_RESULT}},
                    "links": {
                        "FirstResultDefaultFile": {
                            "operationId": "packageDefaultFile",
                            "parameters": {
                                "package": "$response.body#/results/0/name",
                                "version": "$response.body#/results/0/version",
                            },
                            "description": "The first result's default file (a `package`).",
                        }
                    },
                },
                "400": error_response("Invalid q or limit."),
                "405": error_response("Method not allowed."),
                "502": error_response("The search catalogs cannot be fetched."),
            },
        }
    },
    "/npm/{package}@{version}/": {
        "get": {
            "operationId": "packageDefaultFile",
            "summary": "Redirect to the package's default file (or to the exact version).",
            "parameters": [
                {"name": "package", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "version", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "responses": {
                "302": {
                    "description": "To the default file (`X-Default-File-Reason` says why),"
                    " or from a range or tag to the exact version.",
                    "headers": _RESOLVED["headers"],
                },
                **{k: v for k, v in _PINNED.items() if k not in ("200", "304")},
            },
        }
    },
    "/npm/{package}@{version}/{path}": {
        "get": {
            "operationId": "packageFile",
            "summary": "A file of an npm package at an exact version (`?sri` for its integrity,"
            " `?meta` on a folder for a listing, `?min=1`/`?compress=1` for CSS and JS).",
            "parameters": [
                {"name": "package", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "version", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "path", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "responses": {"302": _RESOLVED, **_PINNED},
        }
    },
    "/npm/{package}@{version}/+esm": {
        "get": {
            "operationId": "packageModule",
            "summary": "The package's entry as an ES module built by esbuild, dependencies external"
            " and pinned (also `/<subpath>/+esm`; `?sri` for its integrity).",
            "parameters": [
                {"name": "package", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "version", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "responses": {
                **_PINNED,
                "302": {"description": "From a range or tag to the exact version."},
                "501": error_response("The bundler is not installed (the message names it)."),
                "502": error_response(
                    "The package cannot be built (names it and the first error)."
                ),
                "504": error_response("The build or an upstream took longer than its deadline."),
            },
        }
    },
    "/npm/importmap": {
        "get": {
            "operationId": "packageImportMap",
            "summary": "An import map for the named packages, every module pinned, with integrity.",
            "parameters": [
                {
                    "name": "pkg",
                    "in": "query",
                    "required": True,
                    "style": "form",
                    "explode": True,
                    "schema": {
                        "type": "array",
                        "items": {"type": "string", "pattern": PKG_PATTERN},
                        "minItems": 1,
                        "maxItems": 32,
                    },
                    "description": "`<name>[@<version, range or tag>][/<subpath>]`, repeated.",
                }
            ],
            "responses": {
                "200": {
                    "description": "`imports`, `scopes` where versions conflict, `integrity`.",
                    "content": {"application/importmap+json": {"schema": {"type": "object"}}},
                },
                "400": error_response("A missing or malformed pkg."),
                "401": error_response(
                    "A guarded package (ASSETGATE_PACKAGES_TOKEN) without the token."
                ),
                "404": error_response(
                    "A package, version or entry that does not exist, or a package (or a"
                    " dependency) ASSETGATE_PACKAGES_ALLOW/_DENY refuses."
                ),
                "501": error_response("The bundler is not installed (the message names it)."),
                "502": error_response("A registry failure, or a module that cannot be built."),
                "504": error_response("A build or an upstream took longer than its deadline."),
            },
        }
    },
    "/npm/_assets/{name}": {
        "get": {
            "operationId": "packageSearchPageAsset",
            "summary": "The search page's script and style.",
            "parameters": [
                {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "responses": {
                "200": {"description": "The file."},
                "404": error_response("No such file."),
            },
        }
    },
    "/npm/lib/{library}@{version}/{path}": {
        "get": {
            "operationId": "libraryFile",
            "summary": "A library catalog file at an exact version.",
            "parameters": [
                {"name": "library", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "version", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "path", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "responses": _PINNED,
        }
    },
}
