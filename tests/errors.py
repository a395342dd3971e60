"""The JSON error object (spec §2.2) as every test expects it: right status, JSON, the words it
must say, and nothing of the server's insides (no traceback, no temporary path)."""

from __future__ import annotations

import httpx


def assert_json_error(response: httpx.Response, status: int, *fragments: str) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert isinstance(body, dict)
    assert body["code"] == status
    for fragment in fragments:
        assert fragment in body["error"]
    assert "Traceback" not in response.text
    assert "/tmp" not in response.text
    return body
