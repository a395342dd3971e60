"""The one "dependency is down" type: open after failures, one probe after the cool-down, close on
an answer, and what the caller is told at each step. A hand-turned clock, no waiting."""

from __future__ import annotations

import math

import pytest

from assetgate.breaker import Breaker, BreakerState


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Events:
    def __init__(self) -> None:
        self.opened: list[BaseException | None] = []
        self.closed: list[float] = []

    def breaker(self, clock: Clock, *, cooldown_s: float = 5.0, threshold: int = 1) -> Breaker:
        return Breaker(
            cooldown_s=cooldown_s,
            threshold=threshold,
            on_open=self.opened.append,
            on_close=self.closed.append,
            clock=clock,
        )


def test_a_closed_breaker_lets_every_caller_ask() -> None:
    breaker = Events().breaker(Clock())
    assert breaker.state is BreakerState.CLOSED
    assert all(breaker.allows() for _ in range(5))
    assert not breaker.is_open
    assert breaker.down_for_s == 0.0


def test_one_failure_opens_it_and_callers_are_told_not_to_ask() -> None:
    clock, events = Clock(), Events()
    breaker = events.breaker(clock)
    boom = ConnectionRefusedError("refused")
    breaker.failed(boom)
    assert breaker.state is BreakerState.OPEN
    assert breaker.is_open
    assert not breaker.allows()
    assert not breaker.would_allow
    assert events.opened == [boom]  # said once, with the failure that opened it
    clock.now += 4.9
    assert not breaker.allows()
    assert breaker.down_for_s == pytest.approx(4.9)


def test_it_opens_only_after_threshold_failures_in_a_row() -> None:
    events = Events()
    breaker = events.breaker(Clock(), threshold=3)
    breaker.failed()
    breaker.failed()
    breaker.succeeded()  # an answer between them: the count starts again
    breaker.failed()
    breaker.failed()
    assert breaker.allows()
    assert events.opened == []
    breaker.failed()
    assert not breaker.allows()
    assert len(events.opened) == 1


def test_after_the_cool_down_one_caller_probes_and_its_answer_closes_it() -> None:
    clock, events = Clock(), Events()
    breaker = events.breaker(clock)
    breaker.failed(TimeoutError())
    clock.now += 5.0
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.would_allow  # a peek does not take the probe
    assert breaker.allows()  # the probe
    assert not breaker.allows()  # the others wait for it
    assert breaker.is_open
    clock.now += 0.25
    breaker.succeeded()
    assert breaker.state is BreakerState.CLOSED
    assert breaker.allows()
    assert breaker.allows()
    assert events.closed == [pytest.approx(5.25)]  # said once, with how long it was down


def test_a_failed_probe_opens_it_for_another_cool_down_without_a_second_warning() -> None:
    clock, events = Clock(), Events()
    breaker = events.breaker(clock)
    breaker.failed(OSError("first"))
    clock.now += 5.0
    assert breaker.allows()
    breaker.failed(OSError("second"))
    assert not breaker.allows()
    clock.now += 4.0
    assert not breaker.allows()
    clock.now += 1.0
    assert breaker.allows()
    assert len(events.opened) == 1
    assert events.closed == []


def test_a_probe_that_never_reports_does_not_wedge_it() -> None:
    clock = Clock()
    breaker = Events().breaker(clock)
    breaker.failed()
    clock.now += 5.0
    assert breaker.allows()  # the probe's task is cancelled: it reports nothing
    clock.now += 5.0
    assert breaker.allows()  # the next caller probes


def test_success_while_closed_says_nothing() -> None:
    events = Events()
    breaker = events.breaker(Clock())
    breaker.succeeded()
    assert events.closed == []
    assert events.opened == []


def test_an_infinite_cool_down_lets_no_caller_probe_only_succeeded_closes_it() -> None:
    clock, events = Clock(), Events()
    breaker = events.breaker(clock, cooldown_s=math.inf)
    breaker.failed()
    clock.now += 1e9
    assert breaker.state is BreakerState.OPEN
    assert not breaker.allows()
    breaker.succeeded()  # a background check saw it answer
    assert breaker.allows()
    assert len(events.closed) == 1


def test_a_zero_cool_down_lets_the_next_caller_probe_at_once() -> None:
    breaker = Events().breaker(Clock(), cooldown_s=0.0)
    breaker.failed()
    assert breaker.is_open
    assert breaker.allows()


def test_a_threshold_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="threshold"):
        Breaker(cooldown_s=1.0, threshold=0)
