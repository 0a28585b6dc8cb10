"""Measure the whole suite's set-up on a fresh machine: the project's .venv and every test service, per job and in total.

    .venv/bin/python bench/services_setup.py                   # the working tree's scripts, every cache empty
    .venv/bin/python bench/services_setup.py --ref main        # the scripts of a commit (a before/after pair)
    .venv/bin/python bench/services_setup.py --cache DIR       # caches in DIR, kept: run twice for the reuse figure
    .venv/bin/python bench/services_setup.py --write           # also write the row to docs/measurements.md

"Fresh" means a copy of the tree in a temp folder (no .venv, no .venv-ls, no .venv-lmeval) and every cache the set-up
scripts honour pointed at an empty temp folder: XDG_CACHE_HOME (biaskit's service venvs, the llama.cpp build, uv's
wheel cache), PIP_CACHE_DIR; BIASKIT_SERVICE_CACHE, BIASKIT_LLAMA_CACHE, BIASKIT_LS_VENV, BIASKIT_LMEVAL_VENV,
BIASKIT_VENV and BIASKIT_UV are unset. Nothing of this machine's own caches is read or written. The Debian packages
(Chromium, Hunspell, MediaWiki) are what they are on this machine: where they are installed their scripts are no-ops,
and the figure says so (it cannot uninstall them).

The set-up runs as scripts/test.sh runs it (`scripts/services-setup.sh --with-venv`: every job in parallel); a tree
whose services-setup.sh has no --with-venv (older commits) runs scripts/setup.sh first and then the services, as its
test.sh did. Per job: the wall time from the start to its "done" line and its CPU seconds where the script prints
them. The row (with --write) goes to docs/measurements.md in bench/first_hour.py's format; the README quotes every
row there, so a written row is for the maintainer who remeasures.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from first_hour import minutes, run, write_row

ROOT = Path(__file__).resolve().parents[1]
#: the variables that point a set-up script at a cache or a venv outside the temp folder: unset
UNSET = (
    "BIASKIT_SERVICE_CACHE",
    "BIASKIT_LLAMA_CACHE",
    "BIASKIT_LS_VENV",
    "BIASKIT_LMEVAL_VENV",
    "BIASKIT_VENV",
    "BIASKIT_UV",
    "UV_CACHE_DIR",
    "PIP_NO_CACHE_DIR",
)
_DONE = re.compile(r"^services: (?P<name>.+?) done \((?P<m>\d+)m(?P<s>\d+)s(?:, (?P<cpu>\d+) CPU s)?\)$")
_STEP = re.compile(r"^setup: (?P<what>\d/\d .*|done) \((?P<at>\d\d:\d\d:\d\d)\)$")


def lay_tree(ref: str | None, dest: Path) -> None:
    """The working tree's files (tracked and untracked, not ignored) or a commit's, copied into dest."""
    dest.mkdir(parents=True)
    if ref:
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        src = ROOT / name
        if src.is_file() and not src.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def fresh_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(XDG_CACHE_HOME=str(cache / "xdg"), PIP_CACHE_DIR=str(cache / "pip"), SERVICES_TICK="10", SETUP_TICK="60")
    return env


def jobs(output: str) -> dict[str, tuple[int, int | None]]:
    """name -> (wall s since the set-up's start, CPU s or None) from services-setup.sh's "done" lines."""
    out = {}
    for line in output.splitlines():
        m = _DONE.match(line.strip())
        if m:
            out[m["name"]] = (int(m["m"]) * 60 + int(m["s"]), int(m["cpu"]) if m["cpu"] else None)
    return out


def measure(tree: Path, env: dict[str, str]) -> tuple[dict[str, tuple[int, int | None]], float, float, float]:
    """(per job, total wall s, total CPU s, mean load) of the whole set-up in tree."""
    setup = tree / "scripts" / "services-setup.sh"
    if "--with-venv" in setup.read_text():
        out, wall, cpu, load = run(["bash", str(setup), "--with-venv"], env)
        return jobs(out), wall, cpu, load
    # an older tree: its test.sh ran setup.sh, then the services
    _, vwall, vcpu, vload = run(["bash", str(tree / "scripts" / "setup.sh")], env)
    out, swall, scpu, sload = run(["bash", str(setup)], env)
    per = {"venv": (round(vwall), round(vcpu))}
    per.update({k: (round(vwall) + w, c) for k, (w, c) in jobs(out).items()})
    return per, vwall + swall, vcpu + scpu, (vload * vwall + sload * swall) / max(vwall + swall, 1)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", help="a commit whose scripts to measure (default: the working tree)")
    ap.add_argument("--cache", type=Path, help="keep the caches in this folder (default: a temp folder, removed)")
    ap.add_argument("--write", action="store_true", help="write the row to docs/measurements.md")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="biaskit-setup-bench.") as tmp:
        cache = args.cache.resolve() if args.cache else Path(tmp) / "cache"
        warm = cache.is_dir() and any(cache.iterdir())
        tree = Path(tmp) / "tree"
        lay_tree(args.ref, tree)
        per, wall, cpu, load = measure(tree, fresh_env(cache))
    print(f"\nset-up of {args.ref or 'the working tree'}, caches {'reused' if warm else 'empty'}:")
    for name, (w, c) in sorted(per.items(), key=lambda kv: -kv[1][0]):
        print(f"  {name:40s} done at {minutes(w):>8s}" + (f", {c} CPU s" if c is not None else ""))
    print(f"  {'total':40s} {minutes(wall):>11s}, {cpu:.0f} CPU s, load average {load:.1f}")
    if args.write:
        slowest = max(per, key=lambda k: per[k][0]) if per else "none"
        what = "services set-up, caches reused" if warm else "services set-up, fresh"
        write_row(what, f"{minutes(wall)} wall, {cpu:.0f} CPU s (slowest: {slowest}, {minutes(per[slowest][0])})", load)


if __name__ == "__main__":
    sys.exit(main())
