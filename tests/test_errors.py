"""The kinds of `AppError` callers tell apart, and that no caller tells them apart by number.

Each kind fixes its status where it is raised; the factories callers already use hand back the
kind, with the status, message and headers the client saw before the kinds existed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assetgate.errors import (
    AppError,
    NotFound,
    Overloaded,
    TimedOut,
    TooLarge,
    Unavailable,
    UpstreamFailed,
)
from assetgate.packages.catalogs import UpstreamRefused
from assetgate.packages.packument import Unpublished

SRC = Path(__file__).resolve().parents[1] / "src" / "assetgate"


@pytest.mark.parametrize(
    ("error", "kind", "status"),
    [
        (AppError.not_found(), NotFound, 404),
        (NotFound(), NotFound, 404),
        (Unpublished("left-pad"), NotFound, 404),
        (AppError.too_large("file: over the limit"), TooLarge, 413),
        (AppError.overloaded(), Overloaded, 503),
        (AppError.over_time(2.5), Overloaded, 503),
        (Unavailable("retry"), Unavailable, 503),
        (AppError.upstream("registry answered invalid JSON"), UpstreamFailed, 502),
        (UpstreamRefused(403), UpstreamFailed, 502),
        (TimedOut("upstream timed out"), TimedOut, 504),
    ],
)
def test_each_kind_fixes_its_status(error: AppError, kind: type[AppError], status: int) -> None:
    assert isinstance(error, kind)
    assert isinstance(error, AppError)
    assert error.status == status


def test_the_kinds_do_not_overlap() -> None:
    # A render past its deadline is "retry later" (503), not "something outside was slow" (504).
    assert not isinstance(AppError.over_time(1), TimedOut)
    assert not isinstance(TimedOut("slow"), (UpstreamFailed, Unavailable))
    assert isinstance(AppError.overloaded(), Unavailable)
    assert not isinstance(Unavailable("retry"), Overloaded)
    # Plain answers nobody reacts to stay plain.
    for plain in (AppError.bad_param("w", "an integer"), AppError.client_gone()):
        assert type(plain) is AppError


def test_factories_keep_what_the_client_sees() -> None:
    busy = AppError.overloaded(7, "waited too long for a worker")
    assert (busy.message, busy.headers) == (
        "waited too long for a worker",
        {"Retry-After": "7", "Cache-Control": "no-store"},
    )
    late = AppError.over_time(2.5)
    assert late.message == "the work took longer than the limit of 2.5 s"
    assert late.headers == {"Retry-After": "1", "Cache-Control": "no-store"}
    assert AppError.overloaded(0).headers["Retry-After"] == "1"
    assert AppError.not_found().message == "not found"
    assert repr(AppError.not_found("gone")) == "NotFound(404, 'gone')"


def test_again_is_a_fresh_error_of_the_same_kind() -> None:
    remembered = UpstreamRefused(401)
    remembered.headers["X-One"] = "1"
    fresh = remembered.again()
    assert type(fresh) is UpstreamRefused
    assert (fresh.status, fresh.message, fresh.code) == (502, remembered.message, 401)
    assert fresh.headers == {"X-One": "1"}
    fresh.headers["X-Two"] = "2"  # a caller adding headers leaves the remembered one alone
    assert remembered.headers == {"X-One": "1"}
    assert fresh is not remembered
    assert str(fresh) == remembered.message


#: ``exc.status == 404``, ``error.status in (502, 504)``, ``exc.status != 503``: telling errors
#: apart by number. An upstream HTTP answer's status (``response.status_code``, whois's RDAP
#: ``answer.status``) is not an AppError and is not matched.
BY_NUMBER = re.compile(r"\b(?:exc|error|err|failure|caught)\.status\s*(?:==|!=|\bin\b|\bnot in\b)")


def test_no_caller_tells_errors_apart_by_status() -> None:
    found = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if BY_NUMBER.search(line) or 'getattr(failure, "status"' in line
    ]
    assert found == []
