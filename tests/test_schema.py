"""Schema = server: schemathesis over every operation of ``/openapi.json``, on a real uvicorn.

Positive data (valid by the schema) must never be refused as a client mistake, negative data
must never be a 5xx, and every answer must match the documented statuses, media types and
shapes. Bounded in examples per operation (examples and fuzzing phases, derandomized: the same
cases every run), and every request in time, so it stays well under a minute on 2 cores. Upstreams
(package catalogs, whois servers) point at a closed loopback port; the 5xx answers the spec gives
for that (and for an upload that is no image) are excused for their operations only, recognised by
status and message (``SPEC_5XX``); every other 5xx fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from assetgate.app import PARTS
from assetgate.settings import Settings
from assetgate.web.openapi import make_document
from tests.conftest import live_server
from tests.imaging import factory as make

# schemathesis cases against a live server: the first also sets the module's server up, and
# on a loaded machine that took more than the default 120 s.
pytestmark = pytest.mark.timeout(600)

EXAMPLES = 6
#: A loopback port nothing listens on (discard): every upstream is down, answered at once.
CLOSED = "127.0.0.1:9"
#: The 5xx answers the spec gives for what is not the server's own failure, per operation path:
#: upstreams on a closed port here (packages: 502/504; whois: 500 "whois lookup failed", spec
#: §7.3) and an upload that is no convertible image (convert: 500 naming the file, spec §7.2).
SPEC_5XX: tuple[tuple[str, frozenset[int], str], ...] = (
    ("/npm/", frozenset({502, 504}), ""),
    ("/api/whois", frozenset({500}), "whois lookup failed: "),
    ("/api/convert", frozenset({500}), "images: '"),
)


def spec_5xx(case: Any, response: Any) -> bool:
    """True when a 5xx is the spec'd answer of this operation, not a crash."""
    for prefix, statuses, message in SPEC_5XX:
        if case.operation.path.startswith(prefix) and response.status_code in statuses:
            return str(response.json().get("error", "")).startswith(message)
    return False


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("fuzz")
    root = base / "root"
    root.mkdir()
    (root / "a.jpg").write_bytes(make.jpeg(64, 48))
    (root / "a.css").write_bytes(b"body {  color: red; }\n")
    # Every whois server and RDAP base is a closed loopback port: no name is ever resolved.
    servers = base / "whois-servers.json"
    servers.write_text(json.dumps({"*": CLOSED}))
    bootstrap = base / "rdap.json"
    bootstrap.write_text(json.dumps({"version": "1.0", "services": []}))
    app_settings = Settings(
        root=root,
        store=base / "store",
        npm_registry=f"http://{CLOSED}/",
        library_api=f"http://{CLOSED}",
        library_files=f"http://{CLOSED}/libs",
        whois_servers=servers,
        rdap_bootstrap=bootstrap,
        rate_limit="100000/1 second",
        upstream_timeout_s=1,
        whois_timeout_s=1,
        admin_token="schema-tests-admin-token-0123456789",  # /admin/purge on: 401/405, not 404
    )
    with live_server(app_settings) as url:
        yield url


# The document the app serves at /openapi.json (built from the same parts' tables).
schema = schemathesis.openapi.from_dict(make_document(part.openapi for part in PARTS))
schema.config.phases.update(phases=["examples", "fuzzing"])
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
    max_examples=EXAMPLES,
    deterministic=True,
    database="none",
)


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=EXAMPLES)
def test_schema_and_server_agree(case: Any, live_url: str) -> None:
    response = case.call(base_url=live_url, timeout=10)
    if spec_5xx(case, response):
        case.validate_response(response, excluded_checks=[not_a_server_error])
    else:
        case.validate_response(response)
