"""Run JavaScript before and after ``min=1`` and ``safe=1`` in node: the results must be equal."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assetgate.minify.minifiers import minify_js
from assetgate.minify.safejs import tidy_js
from tests.conftest import require_binary
from tests.minify.jsprograms import PROGRAMS, crlf, noisy, run_programs

VARIANTS: dict[str, Callable[[str], str]] = {
    "plain": lambda source: source,
    "noisy": noisy,
    "crlf": crlf,
}
MODES: dict[str, Callable[[str], str]] = {
    "min": lambda source: minify_js(source.encode()).decode(),
    "safe": tidy_js,
}
CASES = [(program, variant, mode) for program in PROGRAMS for variant in VARIANTS for mode in MODES]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str, str], tuple[str, str]]:
    """(program, variant, mode) -> (result before, result after), from one node process."""
    node = require_binary("node")
    sources: list[str] = []
    for program, variant, mode in CASES:
        before = VARIANTS[variant](PROGRAMS[program])
        sources += [before, MODES[mode](before)]
    values = run_programs(node, sources)
    return {case: (values[2 * n], values[2 * n + 1]) for n, case in enumerate(CASES)}


@pytest.mark.parametrize(("program", "variant", "mode"), CASES)
def test_same_result_after_transformation(
    results: dict[tuple[str, str, str], tuple[str, str]], program: str, variant: str, mode: str
) -> None:
    before, after = results[(program, variant, mode)]
    assert before.startswith("ok: "), before  # the fixture program itself must run
    assert after == before


def test_minified_programs_are_smaller() -> None:
    for source in PROGRAMS.values():
        assert len(minify_js(source.encode())) < len(source.encode())


def test_safe_mode_changed_the_noisy_programs() -> None:
    for source in PROGRAMS.values():
        assert len(tidy_js(noisy(source))) < len(noisy(source))
