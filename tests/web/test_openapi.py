"""The served OpenAPI document after the error answers moved to one helper (``error_response``):
a valid OpenAPI 3.1 document whose every path still documents the error answers it did, each
with the one error body."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from schemathesis.specs.openapi.definitions import OPENAPI_31

from assetgate.web.openapi import ERROR_REF, error_response, error_responses

pytestmark = pytest.mark.anyio

#: status codes of the error answers each operation documented before the helper (one line per
#: set; 414 is every operation's, added by ``make_document``).
DOCUMENTED: dict[str, tuple[str, ...]] = {
    "400 404 405 413 414 415 429 500 501 503": ("GET /", "HEAD /", "GET /{path}", "HEAD /{path}"),
    "414": (
        "OPTIONS /", "GET /healthz", "GET /metrics", "GET /openapi.json", "GET /ui", "GET /ui/",
        "GET /ui/api", "GET /ui/convert", "GET /ui/optimizer", "GET /ui/whois",
    ),
    "400 401 404 405 413 414 503": ("POST /admin/purge",),
    "400 405 413 414 429 500 503": ("POST /api/convert",),
    "400 403 405 414 429 500": ("GET /api/whois", "GET /api/whois/json"),
    "404 414": ("GET /npm", "GET /npm/_assets/{name}", "GET /ui/static/{name}"),
    "400 401 404 414 501 502 504": ("GET /npm/importmap",),
    "401 404 413 414 502 504": (
        "GET /npm/lib/{library}@{version}/{path}", "GET /npm/{package}@{version}/",
        "GET /npm/{package}@{version}/{path}",
    ),
    "400 405 414 502": ("GET /npm/search",),
    "401 404 413 414 501 502 504": ("GET /npm/{package}@{version}/+esm",),
    "414 503": ("GET /readyz",),
    "400 404 414": ("GET /ui/files",),
}  # fmt: skip


def operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        f"{method.upper()} {path}": op
        for path, ops in document["paths"].items()
        for method, op in ops.items()
        if isinstance(op, dict) and "responses" in op
    }


@pytest.fixture
async def document(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    served: dict[str, Any] = response.json()
    return served


async def test_the_served_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    errors = sorted(Draft202012Validator(OPENAPI_31).iter_errors(document), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


async def test_every_path_documents_the_error_answers_it_did(document: dict[str, Any]) -> None:
    found = operations(document)
    expected = {op: statuses for statuses, ops in DOCUMENTED.items() for op in ops}
    assert sorted(found) == sorted(expected)
    for name, op in found.items():
        errors = " ".join(sorted(s for s in op["responses"] if s[0] in "45"))
        assert errors == expected[name], name


async def test_every_error_answer_is_the_one_error_body(document: dict[str, Any]) -> None:
    assert document["components"]["schemas"]["Error"]["required"] == ["error", "code"]
    for name, op in operations(document).items():
        for status, answer in op["responses"].items():
            if status[0] not in "45" or (name, status) == ("GET /readyz", "503"):
                continue  # /readyz's 503 is its report (the failing checks), not an error
            assert answer["description"], (name, status)
            error_body = {"application/json": {"schema": {"$ref": ERROR_REF}}}
            if name.startswith("HEAD "):  # no body to describe (the 414 is added to all alike)
                assert answer.get("content", error_body) == error_body, (name, status)
            else:
                assert answer["content"] == error_body, (name, status)


def test_the_helper_spells_the_reference_once() -> None:
    assert ERROR_REF == "#/components/schemas/Error"
    assert error_response("x", body=False) == {"description": "x"}
    assert error_responses({"404": "gone"}) == {"404": error_response("gone")}
