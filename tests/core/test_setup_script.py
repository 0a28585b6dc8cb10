"""scripts/setup.sh on a stand-in pip: pip's known noise is filtered, a line shows at least every SETUP_TICK seconds
while a step runs, and a failing step still fails the set-up."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = r"""#!/usr/bin/env bash
# a stand-in for "python -m pip ...": pip's noise, one real line, a slow torch step, a failing one on request
for a in "$@"; do
  if [ "$a" = "$FAIL_ON" ]; then echo "ERROR: No matching distribution found for $a" >&2; exit 3; fi
done
echo "WARNING: Location '/nowhere/wheels' is ignored: it is either a non-existing path or lacks a specific scheme." >&2
echo "WARNING: Ignoring invalid distribution ~orch (/venv/lib/python3.12/site-packages)" >&2
echo "WARNING: Running pip as the 'root' user can result in broken permissions." >&2
echo "DEPRECATION: a legacy editable install will stop working in pip 25" >&2
echo "[notice] A new release of pip is available: 24.0 -> 25.0"
case " $* " in *" torch==2.13.0 "*) echo "Successfully installed torch-2.13.0"; sleep 2.5 ;; esac
exit 0
"""


def _run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    py = venv / "bin" / "python"
    py.write_text(FAKE_PYTHON)
    py.chmod(0o755)
    full = {**os.environ, "BIASKIT_VENV": str(venv), "PYTHON": "false", "SETUP_TICK": "1", "FAIL_ON": "", **env}
    return subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh")], capture_output=True, text=True, env=full, timeout=60)


def test_setup_filters_pip_noise_and_prints_a_line_while_a_step_runs(tmp_path):
    r = _run(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = (r.stdout + r.stderr).splitlines()
    for noise in ("is ignored", "Ignoring invalid distribution", "as the 'root' user", "DEPRECATION", "[notice]"):
        assert not any(noise in x for x in out), noise
    assert "Successfully installed torch-2.13.0" in out  # what is not noise still shows
    ticks = [x for x in out if x.startswith("setup: ... torch: still working, ")]
    assert len(ticks) >= 2  # 2.5 s of torch with a line every second
    assert out[-1].startswith("setup: done")
    assert any(p.name.startswith(".biaskit-setup-") for p in (tmp_path / "venv").iterdir())


def test_a_failing_step_fails_the_setup_with_its_error_shown(tmp_path):
    r = _run(tmp_path, FAIL_ON="-e")
    assert r.returncode == 3
    assert "ERROR: No matching distribution found for -e" in r.stdout
    assert "setup: 3/5 biaskit with all extras" in r.stdout and "setup: 4/5" not in r.stdout
    assert not any(p.name.startswith(".biaskit-setup-") for p in (tmp_path / "venv").iterdir())
