"""/openapi.json describes the optimizer from the parser's own table; a bounded schemathesis run
against a real loopback server finds no 5xx and no response that breaks the document."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import positive_data_acceptance

from assetgate.optimizer.params import OPENAPI_PARAMS
from assetgate.settings import Settings
from tests.conftest import live_server


@pytest.fixture
def served(files: dict[str, bytes], make_settings: Callable[..., Settings]) -> Iterator[str]:
    with live_server(make_settings()) as base:
        yield base


def test_document_is_generated_from_the_parameter_table(served: str) -> None:
    document = httpx.get(f"{served}/openapi.json").json()
    assert document["openapi"] == "3.1.1"
    assert document["info"]["version"] == "1.2.2"
    get = document["paths"]["/"]["get"]
    assert get["operationId"] == "optimizeFile"
    assert document["paths"]["/"]["head"]["operationId"] == "inspectOptimizedFile"
    params = {p["name"]: p for p in get["parameters"]}
    assert params["file"]["required"] is True
    for row in OPENAPI_PARAMS:
        assert params[row.name]["schema"] == row.schema(), row.name
        assert params[row.name]["in"] == "query"
    assert set(get["responses"]) >= {"200", "304", "400", "404", "405", "413", "415", "500", "501"}
    assert "X-Compression-Ratio" in get["responses"]["200"]["headers"]


def run_schemathesis(base_url: str, *, max_examples: int, fixed: dict[str, Any]) -> list[int]:
    document = httpx.get(f"{base_url}/openapi.json").json()
    schema = schemathesis.openapi.from_dict(document)
    statuses: list[int] = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path != "/" or operation.method.upper() == "OPTIONS":
            continue  # the optimizer's operations only (other parts test their own)
        strategy = operation.as_strategy()

        @settings(
            max_examples=max_examples,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy, data=st.data())
        def check(case: Any, data: st.DataObject) -> None:
            for name, choices in fixed.items():
                case.query = {**(case.query or {}), name: data.draw(st.sampled_from(choices))}
            response = case.call(base_url=base_url, timeout=30)
            statuses.append(response.status_code)
            assert response.status_code < 500, (case.query, response.text[:200])
            # A schema-valid value can still be refused on purpose (a crop box outside the image,
            # a 60000-pixel focus box): the spec documents those 400s, a regex cannot.
            case.validate_response(response, excluded_checks=[positive_data_acceptance])

        check()
    return statuses


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_schemathesis_finds_no_server_error(served: str) -> None:
    random_files = run_schemathesis(served, max_examples=40, fixed={})
    real_files = run_schemathesis(
        served,
        max_examples=80,
        fixed={
            "file": ["photo.jpg", "alpha.png", "anim.gif", "still.bmp", "style.css", "palette.png"]
        },
    )
    assert len(random_files) + len(real_files) >= 100
    assert 200 in real_files  # the run did reach the image pipeline
    assert all(status < 500 for status in random_files + real_files)
