"""What this process may use of the machine (memory, cores), and the budgets derived from it.

Unset, the settings that size work take their defaults from here (``settings/derived.py``), so an
operator states at most two figures — the memory limit and the CPUs of the container or unit —
and every budget follows them. An explicit setting always wins.

**Memory.** A fixed 512 MiB job limit refused every full-size WebP of an RGBA image above
~13 MP on any machine. The defaults of ``ASSETGATE_RENDER_MEMORY_BYTES`` (the budget every running
image job shares) and ``ASSETGATE_RENDER_JOB_MEMORY_BYTES`` (what one job may cost) therefore
come from the memory the process may really use: the cgroup's limit (v2 ``memory.max``; v1
``memory.limit_in_bytes`` on older hosts) when one is set, else the machine's ``MemTotal``.

    budget = max(256 MiB, 60 % of (usable - 512 MiB) / ASSETGATE_WORKERS)
    job    = budget

The 512 MiB stay for the interpreter, the caches in memory and the package/minify work; 40 % of
the rest is headroom for what the cost model does not count (connections, buffers, the page
cache the decoders read through). The job limit equals the budget, so a single job, which the
work gate admits alone even when it costs more than the budget, still never exceeds it.
docs/configuration.md lists what this gives at 1, 4 and 16 GB.

**Cores.** The cores this process may run on: its CPU affinity (``taskset``, a cpuset), lowered to
the cgroup's CPU quota (v2 ``cpu.max``; v1 ``cpu.cfs_quota_us``) rounded up, so a container given
2 CPUs on a 16-core host sizes its pools for 2, not 16 (``os.cpu_count`` says 16):

    ASSETGATE_RENDER_WORKERS    = cores / ASSETGATE_WORKERS + 1   (at least 2)
    ASSETGATE_MINIFY_WORKERS    = cores / 2                       (at least 1)
    ASSETGATE_ESM_BUILD_WORKERS = cores / 2                       (at least 1)

One render thread more than the cores a process has keeps them busy while a render waits for the
GIL (docs/benchmarks.md); dividing by the worker processes keeps the threads, and so the memory
at once, where one process would have them.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Final

MIB: Final = 1024 * 1024
RESERVED_BYTES: Final = 512 * MIB
SHARE: Final = 0.6
FLOOR_BYTES: Final = 256 * MIB
CGROUP_ROOT: Final = Path("/sys/fs/cgroup")


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # "max": no limit


def _own_cgroup_dirs(root: Path, controller: str = "memory") -> list[Path]:
    """The directories of this process's cgroup: v2 (``0::/path``) and v1's ``controller``."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and controllers == "":
            found.append(root / path.lstrip("/"))
            found.append(root)  # a container sees its own cgroup as the root
        elif controller in controllers.split(","):
            mount = root / controllers  # v1 mounts a joint hierarchy as "cpu,cpuacct"
            found.append(mount / path.lstrip("/"))
            found.append(mount)
    return found


def cgroup_limit(root: Path = CGROUP_ROOT) -> int | None:
    """The tightest memory limit of this process's cgroup, or None when none is set."""
    limits = []
    for directory in _own_cgroup_dirs(root):
        for name in ("memory.max", "memory.limit_in_bytes"):
            value = _read_int(directory / name)
            if value is not None and value < 1 << 60:  # v1 says "no limit" with a huge number
                limits.append(value)
    return min(limits) if limits else None


def machine_memory() -> int:
    """``MemTotal`` from /proc/meminfo, else what sysconf reports."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 4 * 1024 * MIB


def usable_memory() -> int:
    """What this process may use: the cgroup limit when lower than the machine's memory."""
    machine = machine_memory()
    limit = cgroup_limit()
    return machine if limit is None else min(limit, machine)


def render_budget(usable: int, workers: int = 1) -> int:
    """The image jobs' shared budget for one of ``workers`` processes (the formula above)."""
    share = int((usable - RESERVED_BYTES) * SHARE / max(1, workers))
    return max(FLOOR_BYTES, share)


def cgroup_cpus(root: Path = CGROUP_ROOT) -> float | None:
    """The tightest CPU quota of this process's cgroup in CPUs (``200000 100000`` is 2.0), or
    None when none is set."""
    quotas = []
    for directory in _own_cgroup_dirs(root, "cpu"):
        try:
            quota, _, period = (directory / "cpu.max").read_text().strip().partition(" ")
        except OSError:
            quota = str(_read_int(directory / "cpu.cfs_quota_us") or "max")
            period = str(_read_int(directory / "cpu.cfs_period_us") or "")
        if quota.isdigit() and period.isdigit() and int(period) > 0:
            quotas.append(int(quota) / int(period))
    return min(quotas) if quotas else None


def usable_cores() -> int:
    """The cores this process may run on: its affinity, lowered to the cgroup's CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    quota = cgroup_cpus()
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return max(1, cores)


def render_workers(cores: int, workers: int = 1) -> int:
    """The render threads of one of ``workers`` processes (the formula above)."""
    return max(1, cores // max(1, workers)) + 1


def helper_workers(cores: int) -> int:
    """The minify and ES module build processes: half the cores, at least one, so images keep
    the rest whatever CSS/JS and builds ask."""
    return max(1, cores // 2)
