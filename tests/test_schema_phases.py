"""Schema = server under schemathesis's coverage and stateful phases, every operation, with real
loopback upstreams (an npm registry and a library catalog with a package each, a port-43 whois
server), as ``schemathesis run --phases coverage,stateful --checks all`` would run them.

Coverage sends every boundary value of every parameter (lengths at and past the limits, each
enum value, missing required ones); stateful follows the links between operations (a search's
result into the package routes). Derandomized with a fixed seed and bounded, so the run is the
same every time and takes well under a minute on two cores.

The spec forces these exclusions, each recognised by operation, status and message, never by
operation alone:

- a crop entirely outside the image is a 400 although every value is schema-valid (a pattern
  cannot say "inside the image"): ``positive_data_acceptance`` is excused for it;
- an upload that is no supported image is the spec's 500 (§7.2): ``not_a_server_error`` is
  excused for it;
- and, of the same kind as the crop, an output over a limit of spec §8 (upscaled past 24 MP, AVIF
  past 4 MP; WebP's 16383 px a side) is a 413 for schema-valid sizes: ``positive_data_acceptance``
  is excused for it;
- and, from our own extension, a ``watermark`` name that matches the pattern but names no entry of
  ``ASSETGATE_WATERMARKS`` is a 400 (the document is the same for every configuration). The
  server here configures ``logo``, the table's example, so that path is exercised too.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, seed, settings
from schemathesis.checks import not_a_server_error, positive_data_acceptance

from assetgate.app import PARTS
from assetgate.optimizer.openapi import EXAMPLE_FILE
from assetgate.settings import Settings
from assetgate.web.openapi import make_document
from tests.conftest import live_server
from tests.imaging import factory as make
from tests.packages.upstream import FakeUpstream, LibraryCatalog, Registry
from tests.whois.fakes import WhoisServer

# schemathesis cases against a live server: the first also sets the module's server up, and
# on a loaded machine that took more than the default 120 s.
pytestmark = pytest.mark.timeout(600)

SEED = 20261125
#: optimizer/plan.py's answer to a four-value crop that misses the image entirely.
CROP_OUTSIDE = re.compile(r"crop: expected a box that overlaps the [0-9]+x[0-9]+ image, got ")
#: optimizer/plan.py's answers to an output over a limit of spec §8 (or WebP's 16383 px a side).
OUTPUT_LIMIT = re.compile(
    r"(upscaled|AVIF|WebP) output [0-9]+x[0-9]+ is over the (format's )?limit"
)
#: optimizer/plan.py's answer to a well-formed name that is not configured.
UNKNOWN_WATERMARK = re.compile(r"watermark: expected a configured watermark")
STATEFUL_STEPS = 8
STATEFUL_RUNS = 12


def excused(case: Any, response: Any) -> list[Any]:
    """The checks the spec's two exceptions excuse for this answer (see the module docstring)."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if body is None and case.method.upper() == "HEAD" and response.status_code >= 400:
        # HEAD answers GET's status and headers without the body: read the message from GET.
        again = httpx.get(str(response.request.url), timeout=15)
        body = again.json() if again.status_code == response.status_code else None
    error = str(body.get("error", "")) if isinstance(body, dict) else ""
    path = case.operation.path
    optimizer = path in ("/", "/{path}")
    if response.status_code == 400 and optimizer and CROP_OUTSIDE.match(error):
        return [positive_data_acceptance]
    if response.status_code == 413 and optimizer and OUTPUT_LIMIT.match(error):
        return [positive_data_acceptance]
    if response.status_code == 400 and optimizer and UNKNOWN_WATERMARK.match(error):
        return [positive_data_acceptance]
    if response.status_code == 500 and path == "/api/convert" and error.startswith("images: '"):
        return [not_a_server_error]
    return []


class LoopThread:
    """An asyncio loop in a thread, for the asyncio whois server beside the threaded uvicorn."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(10)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base: Path = tmp_path_factory.mktemp("phases")
    root = base / "root"
    root.mkdir()
    (root / EXAMPLE_FILE).write_bytes(make.jpeg(64, 48))
    (root / "a.css").write_bytes(b"body {  color: red; }\n")
    (root / "logo.png").write_bytes(make.png(16, 16))
    upstream = FakeUpstream().start()
    registry, catalog = Registry(upstream), LibraryCatalog(upstream)
    registry.publish("demo", "1.0.0", {"index.js": b"export const a = 1;\n"}, description="demo")
    registry.add_search("demo", "1.0.0", "demo")
    catalog.add("demolib", "2.0.0", {"demolib.min.js": b"var demolib=1;"}, description="demo")
    loop = LoopThread()
    whois = loop.run(WhoisServer({}, default="Domain Name: {query}\r\nRegistrar: Test\r\n").start())
    servers = base / "whois-servers.json"
    servers.write_text(json.dumps({"*": whois.address}))
    bootstrap = base / "rdap.json"
    bootstrap.write_text(json.dumps({"version": "1.0", "services": []}))
    app_settings = Settings(
        root=root,
        store=base / "store",
        result_cache_dir=base / "results",
        work_dir=base,
        npm_registry=upstream.url + "/",
        library_api=catalog.api,
        library_files=catalog.files_base,
        whois_servers=servers,
        rdap_bootstrap=bootstrap,
        rate_limit="100000/1 second",
        upstream_timeout_s=2,
        whois_timeout_s=2,
        watermarks=json.dumps({"logo": {"path": "logo.png"}}),
        admin_token="schema-tests-admin-token-0123456789",  # /admin/purge on: 401/405, not 404
    )
    try:
        with live_server(app_settings) as url:
            yield url
    finally:
        loop.run(whois.close())
        loop.stop()
        upstream.stop()


def check(case: Any, response: Any) -> None:
    case.validate_response(response, excluded_checks=excused(case, response))


schema = schemathesis.openapi.from_dict(make_document(part.openapi for part in PARTS))
schema.config.phases.update(phases=["coverage"])
schema.config.generation.update(deterministic=True, database="none")


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
@seed(SEED)
def test_coverage_phase(case: Any, live_url: str) -> None:
    check(case, case.call(base_url=live_url, timeout=15))


def test_stateful_phase(live_url: str) -> None:
    stateful = schemathesis.openapi.from_dict(make_document(part.openapi for part in PARTS))
    stateful.config.phases.update(phases=["stateful"])
    stateful.config.generation.update(database="none")
    machine = stateful.as_state_machine()
    reached: Counter[str] = Counter()

    class Bound(machine):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": live_url, "timeout": 15}

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            reached[f"{case.operation.label} {response.status_code}"] += 1
            check(case, response)

    seed(SEED)(Bound)
    Bound.run(
        settings=settings(
            max_examples=STATEFUL_RUNS,
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
    )
    # The links were followed: a search led to a package, a listing to the optimizer's answer.
    assert reached["GET /npm/search 200"] > 0, reached
    assert any(key.startswith("GET /npm/{package}@{version}/ ") for key in reached), reached
    assert reached["GET / 200"] > 0, reached
