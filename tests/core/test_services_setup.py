"""scripts/services-setup.sh: the apt scripts one after another, every other service script beside them, a line
while any runs, and a failing script's log shown with the set-up failing. Run on planted service scripts that
record when they start and end (no real install)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _plant(tmp: Path, scripts: dict[str, str]) -> Path:
    (tmp / "scripts" / "services").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "services-setup.sh", tmp / "scripts" / "services-setup.sh")
    for name, body in scripts.items():
        (tmp / "scripts" / "services" / f"{name}.sh").write_text(f"#!/usr/bin/env bash\nset -e\n{body}\n")
    return tmp / "scripts" / "services-setup.sh"


def _timed(log: Path, name: str, seconds: float) -> str:
    return f'echo "{name} start $(date +%s.%N)" >> {log}; sleep {seconds}; echo "{name} end $(date +%s.%N)" >> {log}'


def test_apt_scripts_run_in_sequence_and_the_others_beside_them(tmp_path):
    log = tmp_path / "times"
    plan = {"chromium": 1, "hunspell": 1, "mediawiki": 1, "pip-a": 2.5, "pip-b": 2.5}
    script = _plant(tmp_path, {name: _timed(log, name, s) for name, s in plan.items()})
    env = dict(os.environ, SERVICES_TICK="1")
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    t: dict[tuple[str, str], float] = {}
    for line in log.read_text().splitlines():
        name, what, at = line.split()
        t[(name, what)] = float(at)
    # the apt chain in its order, each after the one before
    assert t[("chromium", "end")] <= t[("hunspell", "start")] and t[("hunspell", "end")] <= t[("mediawiki", "start")]
    # the pip scripts ran at the same time as each other and as the chain (both started before chromium ended)
    assert max(t[("pip-a", "start")], t[("pip-b", "start")]) < t[("chromium", "end")]
    assert t[("pip-a", "start")] < t[("pip-b", "end")] and t[("pip-b", "start")] < t[("pip-a", "end")]
    assert "services: pip-a done" in r.stdout and "services: all ready" in r.stdout
    assert "services: still running after" in r.stdout  # a line every SERVICES_TICK seconds while any runs


def test_a_failing_service_fails_the_setup_and_shows_its_log(tmp_path):
    script = _plant(tmp_path, {"chromium": "true", "broken": 'echo "pip: no matching distribution for frobnicate==9"; exit 3', "ok": "sleep 1"})
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "services: broken FAILED" in r.stderr and "no matching distribution for frobnicate==9" in r.stderr
    assert "services: ok done" in r.stdout and "all ready" not in r.stdout


def test_with_venv_runs_the_project_setup_beside_the_services_and_the_compile_starts_first(tmp_path):
    log = tmp_path / "times"
    script = _plant(tmp_path, {name: _timed(log, name, 1.5) for name in ("chromium", "label-studio", "llama-server", "lm-eval")})
    (tmp_path / "scripts" / "setup.sh").write_text(f"#!/usr/bin/env bash\nset -e\n{_timed(log, 'venv', 1.5)}\n")
    r = subprocess.run(["bash", str(script), "--with-venv"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    started = [line.split()[1] for line in r.stdout.splitlines() if line.endswith(" started")]
    # the llama.cpp compile is the longest job: it starts first, the other pip venvs next, the apt chain last
    assert started == ["llama-server", "lm-eval", "label-studio", "venv", "apt"], started
    t = {tuple(line.split()[:2]): float(line.split()[2]) for line in log.read_text().splitlines()}
    assert t[("venv", "start")] < t[("llama-server", "end")] and t[("llama-server", "start")] < t[("venv", "end")]
    assert "services: venv done" in r.stdout


def test_each_done_line_gives_the_jobs_cpu_seconds(tmp_path):
    # a job that spins until it has used 1.2 CPU s of its own (python's start-up adds a few hundredths): "1 CPU s";
    # one that sleeps: "0 CPU s"
    spin = "python3 -c 'import time\nwhile time.process_time() < 1.2: pass'"
    script = _plant(tmp_path, {"chromium": "true", "spin": spin, "sleepy": "sleep 1"})
    r = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^services: spin done \(0m0\ds, 1 CPU s\)$", r.stdout, re.M), r.stdout
    assert re.search(r"^services: sleepy done \(0m0\ds, 0 CPU s\)$", r.stdout, re.M), r.stdout


def test_an_unknown_argument_is_refused_with_the_one_it_takes(tmp_path):
    script = _plant(tmp_path, {"chromium": "true"})
    r = subprocess.run(["bash", str(script), "--with-venvs"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "unknown argument '--with-venvs' (the only one is --with-venv)" in r.stderr
    assert "started" not in r.stdout
