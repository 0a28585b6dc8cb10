"""Where the fast test loop's CPU seconds go: per test, per file, and outside the tests (start-up, collection).

    .venv/bin/python bench/test_loop_cpu.py                 # run the fast loop once, then print the breakdown
    .venv/bin/python bench/test_loop_cpu.py --log FILE      # print the breakdown of an earlier run's log
    .venv/bin/python bench/test_loop_cpu.py -- tests/core   # extra arguments go to pytest

The run is ``pytest -m "not slow and not server"`` (as ``scripts/test.sh --fast``) with BIASKIT_TEST_CPU_LOG set,
so tests/conftest.py appends each test's CPU seconds (set-up, call and tear-down; pytest's process and the
subprocesses it waited for) to the log. The total is the whole pytest process and its children, from the
operating system's accounting (``getrusage(RUSAGE_CHILDREN)``); what the tests do not account for is start-up,
plugin loading, collection (importing every test module) and the session's end. CPU seconds, unlike wall time,
hardly move on a shared machine. Nothing is written into the project: docs/measurements.md is bench/first_hour.py's.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def read_log(path: Path) -> dict[str, float]:
    """node id -> CPU seconds (summed when a node appears more than once)."""
    cpu: dict[str, float] = defaultdict(float)
    for line in path.read_text(encoding="utf-8").splitlines():
        node, _, secs = line.rpartition("\t")
        if node:
            cpu[node] += float(secs)
    return dict(cpu)


def run_fast_loop(log: Path, extra: list[str]) -> tuple[float, float, str]:
    """(CPU s of pytest and its children, wall s, pytest's last output line) of one fast-loop run."""
    env = dict(
        os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", MPLBACKEND="Agg", BIASKIT_TEST_CPU_LOG=str(log)
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as scripts/test.sh: the bytecode cache is part of the loop
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    cmd = [sys.executable, "-m", "pytest", "-m", "not slow and not server", "-q", *extra]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    return cpu, wall, lines[-1] if lines else f"pytest exited {proc.returncode} with no output: {proc.stderr[-500:]}"


def report(cpu: dict[str, float], total: float | None, top: int) -> str:
    """The breakdown as text: totals, the dearest files and the dearest tests."""
    in_tests = sum(cpu.values())
    out = [f"{len(cpu)} tests, {in_tests:.1f} CPU s inside tests"]
    if total is not None:
        out.append(f"{total:.1f} CPU s in all (pytest and its children); outside the tests (start-up, collection): {total - in_tests:.1f}")
    per_file: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for node, secs in cpu.items():
        f = node.split("::")[0]
        per_file[f] += secs
        count[f] += 1
    out.append(f"\nthe {top} dearest files (CPU s, tests):")
    out += [f"{secs:7.2f} {count[f]:5d}  {f}" for f, secs in sorted(per_file.items(), key=lambda kv: -kv[1])[:top]]
    out.append(f"\nthe {top} dearest tests (CPU s):")
    out += [f"{secs:7.2f}  {node}" for node, secs in sorted(cpu.items(), key=lambda kv: -kv[1])[:top]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", type=Path, help="an existing BIASKIT_TEST_CPU_LOG file: print its breakdown, run nothing")
    ap.add_argument("--top", type=int, default=30, help="how many files and tests to list (default 30)")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args(argv)
    if args.log:
        print(report(read_log(args.log), None, args.top))
        return
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "cpu.tsv"
        total, wall, last = run_fast_loop(log, args.pytest_args)
        print(last)
        print(f"wall {wall:.0f} s (depends on the machine's load; the CPU figure does not)")
        print(report(read_log(log) if log.exists() else {}, total, args.top))


if __name__ == "__main__":
    main()
