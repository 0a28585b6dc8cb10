"""Measure what the README promises a newcomer, and write the figures to docs/measurements.md.

    .venv/bin/python bench/first_hour.py demo          # biaskit demo: wall and CPU seconds
    .venv/bin/python bench/first_hour.py fast          # the fast test loop: tests run, wall and CPU seconds
    .venv/bin/python bench/first_hour.py full          # the whole suite (bash scripts/test.sh): tests, wall, CPU

Each run replaces its row of docs/measurements.md with the figure, the date, the machine (CPU model, cores,
memory) and the load average while it ran, since a shared machine's wall time depends on the load. The README
quotes these rows; tests/core/test_readme.py checks that it quotes them exactly, so a changed figure is
measured, never typed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "measurements.md"
HEADER = """# Measured figures

Written by `bench/first_hour.py` (never by hand); the README quotes these rows and
`tests/core/test_readme.py` checks that it does. CPU seconds are user + system time of the command and its
children, steadier than wall time on a shared machine; the load average is the 1-minute figure sampled while
the command ran (its mean).

| what | figure | measured | machine | load average |
|---|---|---|---|---|
"""
#: the test that checks the README against this file's rows: it cannot pass before the figure it checks is written
SELF_TEST = "tests/core/test_readme.py::test_readme_quotes_the_measured_figures_of_docs_measurements"
_ROW = re.compile(r"^\| (?P<what>[^|]+?) \| (?P<figure>[^|]+?) \| (?P<date>[^|]+?) \| (?P<machine>[^|]+?) \| (?P<load>[^|]+?) \|$")


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {mem:.0f} GiB, {model}"


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[str, float, float, float]:
    """(output, wall s, CPU s of the children, mean load average) of one command, its output echoed as it comes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    loads: list[float] = []
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out: list[str] = []
    assert proc.stdout is not None
    last = 0.0
    for line in proc.stdout:
        out.append(line)
        sys.stdout.write(line)
        if time.monotonic() - last >= 5:
            loads.append(os.getloadavg()[0])
            last = time.monotonic()
    rc = proc.wait()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if rc != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {rc}: no figure written")
    return "".join(out), wall, cpu, sum(loads) / max(len(loads), 1)


def minutes(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def passed(output: str) -> int:
    """The count on pytest's closing line ("1,234 passed" is never written with a comma by pytest)."""
    found = re.findall(r"(\d+) passed", output)
    if not found:
        raise SystemExit("no pytest summary line in the output: no figure written")
    return int(found[-1])


def write_row(what: str, figure: str, load: float) -> None:
    rows: dict[str, str] = {}
    if DOC.exists():
        for line in DOC.read_text(encoding="utf-8").splitlines():
            m = _ROW.match(line)
            if m and m["what"] not in ("what", "---"):
                rows[m["what"]] = line
    date = _dt.date.today().isoformat()
    rows[what] = f"| {what} | {figure} | {date} | {machine()} | {load:.1f} |"
    DOC.write_text(HEADER + "\n".join(rows[k] for k in sorted(rows)) + "\n", encoding="utf-8")
    print(f"docs/measurements.md: {rows[what]}")


def read_rows(path: Path = DOC) -> dict[str, tuple[str, str, str]]:
    """what -> (figure, date, machine), from docs/measurements.md (the README test reads it the same way)."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m and m["what"] != "what" and not m["what"].startswith("-"):
            out[m["what"]] = (m["figure"], m["date"], m["machine"])
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["demo", "fast", "full"])
    args = ap.parse_args(argv)
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    if args.what == "demo":
        with tempfile.TemporaryDirectory() as tmp:
            _, wall, cpu, load = run([str(ROOT / ".venv" / "bin" / "biaskit"), "--quiet", "demo", "--out", tmp], env)
        write_row("demo", f"{minutes(wall)} wall, {cpu:.0f} CPU s", load)
    elif args.what == "fast":
        out, wall, cpu, load = run(["bash", "scripts/test.sh", "--fast", "--deselect", SELF_TEST], env)  # already -q: a second -q hides the summary
        write_row("fast test loop", f"{passed(out):,} tests, {minutes(wall)} wall, {cpu:.0f} CPU s", load)
    else:
        out, wall, cpu, load = run(["bash", "scripts/test.sh", "-q", "--deselect", SELF_TEST], env)
        write_row("whole suite", f"{passed(out):,} tests, {minutes(wall)} wall, {cpu:.0f} CPU s", load)


if __name__ == "__main__":
    main()
