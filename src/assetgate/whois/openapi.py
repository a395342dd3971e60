"""OpenAPI 3.1 paths of interface D, with the JSON record schema of ``record.py`` spelled out."""

from __future__ import annotations

from typing import Any, Final

from assetgate.web.openapi import error_responses
from assetgate.whois import domain

_NULLABLE_STR: Final = {"type": ["string", "null"]}
_DATE: Final = {"type": ["string", "null"], "format": "date-time"}

CONTACT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": [
        "name", "organization", "email", "phone", "street", "city", "state",
        "postal_code", "country", "redacted",
    ],
    "properties": {
        **{k: _NULLABLE_STR for k in ("name", "organization", "email", "phone", "city")},
        **{k: _NULLABLE_STR for k in ("state", "postal_code", "country")},
        "street": {"type": "array", "items": {"type": "string"}},
        "redacted": {"type": "boolean"},
    },
}  # fmt: skip

RECORD_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": [
        "domain", "domain_unicode", "tld", "registered", "source", "registrar", "dates",
        "status", "name_servers", "dnssec", "registrant", "contacts", "warnings",
    ],
    "properties": {
        "domain": {"type": "string", "description": "A-label form that was looked up"},
        "domain_unicode": {"type": "string"},
        "tld": {"type": "string"},
        "registered": {"type": ["boolean", "null"], "description": "null: answer not understood"},
        "source": {
            "type": "object",
            "required": ["protocol", "server", "hops", "fetched_at", "cached"],
            "properties": {
                "protocol": {"enum": ["whois", "rdap"]},
                "server": {"type": "string"},
                "hops": {"type": "integer", "minimum": 1},
                "fetched_at": {"type": "string", "format": "date-time"},
                "cached": {"type": "boolean"},
                "contacts_from": {
                    "type": "object",
                    "description": "role (registrant, admin, tech, billing) -> the server "
                    "whose answer gave that contact: the registry, or the registrar it referred to",
                    "additionalProperties": {"type": "string"},
                },
            },
        },
        "registrar": {
            "type": "object",
            "required": ["name", "iana_id", "url", "abuse_email", "abuse_phone", "whois_server"],
            "properties": {
                k: _NULLABLE_STR
                for k in ("name", "iana_id", "url", "abuse_email", "abuse_phone", "whois_server")
            },
        },
        "dates": {
            "type": "object",
            "required": ["created", "updated", "expires"],
            "properties": {"created": _DATE, "updated": _DATE, "expires": _DATE},
        },
        "status": {"type": "array", "items": {"type": "string"}},
        "name_servers": {"type": "array", "items": {"type": "string"}},
        "dnssec": _NULLABLE_STR,
        "registrant": CONTACT_SCHEMA,
        "contacts": {
            "type": "object",
            "required": ["admin", "tech", "billing"],
            "properties": {role: CONTACT_SCHEMA for role in ("admin", "tech", "billing")},
        },
        "warnings": {"type": "array", "items": {"type": "string"}},
        "raw": {"type": "string", "description": "only with raw=1"},
    },
}  # fmt: skip

_DOMAIN_PARAM: Final = {
    "name": "domain",
    "in": "query",
    "required": True,
    "description": "Domain name, Unicode or A-label; subdomains are cut to the registrable name.",
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": domain.MAX_NAME_OCTETS,
        "pattern": domain.SCHEMA_PATTERN,
    },
}


def _errors() -> dict[str, Any]:
    return error_responses({
        "400": "domain missing or not a valid domain name; raw not a boolean",
        "403": "restricted top-level domain (.edu, .mil, configurable)",
        "405": "method other than GET or HEAD",
        "429": "rate limit exceeded (budget shared with the conversion interface), or the "
        "registry's own query quota (the body names the registry; Retry-After)",
        "500": "error while fetching whois data (error_id in the body and the log)",
    })  # fmt: skip


OPENAPI: Final[dict[str, Any]] = {
    "/api/whois": {
        "get": {
            "operationId": "whoisText",
            "summary": "Whois answers as text, each hop marked",
            "parameters": [_DOMAIN_PARAM],
            "responses": {
                "200": {
                    "description": "Registry and registrar answers (or RDAP rendered as text)",
                    "content": {"text/plain": {"schema": {"type": "string"}}},
                },
                **_errors(),
            },
        }
    },
    "/api/whois/json": {
        "get": {
            "operationId": "whoisJson",
            "summary": "Parsed whois record",
            "parameters": [
                _DOMAIN_PARAM,
                {
                    "name": "raw",
                    "in": "query",
                    "required": False,
                    "description": "1 adds the raw answers as `raw`",
                    "schema": {"type": "boolean", "default": False},
                },
            ],
            "responses": {
                "200": {
                    "description": "Parsed record; unregistered domains have registered: false",
                    "content": {"application/json": {"schema": RECORD_SCHEMA}},
                },
                **_errors(),
            },
        }
    },
}
