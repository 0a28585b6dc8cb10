"""Write tests/slow_tests.txt from a CPU log: the fast loop keeps the cheapest tests within a CPU budget.

    BIASKIT_TEST_CPU_LOG=/tmp/cpu.tsv .venv/bin/python -m pytest -m "not slow and not server" -q
    .venv/bin/python tests/measure_cpu.py /tmp/cpu.tsv [--budget 75]

Tests already marked slow by tests/conftest.py (fixtures, folders, names) are not in the log; the rest are
sorted by CPU seconds and the dearest are listed as slow until the remainder fits ``--budget`` seconds
(collection, about 15 s on a quiet 2-core machine, comes on top). Entries of the old list for tests that were
not in this run (deselected, or already slow) are kept.
"""

from __future__ import annotations

import argparse
from pathlib import Path

HERE = Path(__file__).parent
LIST = HERE / "slow_tests.txt"
HEADER = (
    "# tests/conftest.py marks these `slow` (measured CPU seconds; this process and its subprocesses).\n"
    "# Regenerate: BIASKIT_TEST_CPU_LOG=/tmp/cpu.tsv pytest -m 'not slow and not server', then python tests/measure_cpu.py /tmp/cpu.tsv\n"
)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--budget", type=float, default=75.0, help="CPU seconds the fast tests may take together")
    ap.add_argument("--list", type=Path, default=LIST, help="the slow list to update (default: tests/slow_tests.txt)")
    args = ap.parse_args(argv)
    out = args.list
    cpu: dict[str, float] = {}
    for line in args.log.read_text(encoding="utf-8").splitlines():
        node, _, secs = line.rpartition("\t")
        cpu[node] = cpu.get(node, 0.0) + float(secs)
    old = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                node, _, secs = line.partition("\t")
                old[node.strip()] = secs.strip()
    total = sum(cpu.values())
    slow = {}
    for node, secs in sorted(cpu.items(), key=lambda kv: -kv[1]):
        if total <= args.budget:
            break
        slow[node] = f"{secs:.1f}"
        total -= secs
    kept = {n: s for n, s in old.items() if n not in cpu}
    rows = sorted({**kept, **slow}.items())
    out.write_text(HEADER + "".join(f"{n}\t{s}\n" for n, s in rows), encoding="utf-8")
    print(f"{len(slow)} tests newly measured slow, {len(kept)} kept from the old list; the fast loop's tests take {total:.0f} CPU s")


if __name__ == "__main__":
    main()
