"""Resource limits on what a user asks for: worker processes (``--processes``) never above the CPU count.

A worker process per CPU is the most that can run at once; more only cost memory and forks (100,000 workers
would exhaust the process table). ``--processes N`` above :func:`cpu_count` is error E383, naming N, the
count and the fix, before any work.
"""

from __future__ import annotations

import os

from biaskit.errors import BiaskitError


def cpu_count() -> int:
    """CPUs this process may run on (its affinity mask where the platform has one), at least 1."""
    if hasattr(os, "process_cpu_count"):
        n = os.process_cpu_count()
    elif hasattr(os, "sched_getaffinity"):
        n = len(os.sched_getaffinity(0))
    else:  # pragma: no cover - platforms without affinity
        n = os.cpu_count()
    return max(1, int(n or 1))


def check_processes(processes: object, *, option: str = "--processes") -> int:
    """``processes`` as a count of worker processes: a whole number from 1 to :func:`cpu_count`, else E005
    (not a positive whole number) or E383 (more than the CPUs)."""
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise BiaskitError("E005", f"{option} must be a positive integer", value=processes, fix=f"e.g. {option} 2")
    n = cpu_count()
    if processes > n:
        raise BiaskitError(
            "E383",
            f"{option} asks for more worker processes than this machine has CPUs ({n})",
            value=processes,
            fix=f"use {option} {n} or fewer",
        )
    return processes
