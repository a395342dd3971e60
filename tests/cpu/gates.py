"""What tests wait for on a work gate instead of sleeping until a started task has reached it."""

from __future__ import annotations

from assetgate.cpu.workgate import WorkGate


def admitted(gate: WorkGate) -> int:
    """Jobs the gate holds: running, queued in the pool or waiting for memory."""
    return gate._admitted
