"""scripts/setup.sh on a stand-in pip (and a stand-in uv): pip's known noise is filtered, a line shows at least every
SETUP_TICK seconds while a step runs, and a failing step still fails the set-up; uv gets pip's configured package
sources, and a machine where uv cannot be installed is set up with pip."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_PYTHON = r"""#!/usr/bin/env bash
# a stand-in for "python -m pip ..." and for "uv pip install ...": pip's noise, one real line, a slow torch step,
# a failing one on request; each call's arguments go to $CALLS
echo "$(basename "$0") $*" >> "$CALLS"
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


def _run(tmp_path: Path, installer: str = "pip", **env: str) -> subprocess.CompletedProcess:
    """setup.sh into tmp_path/venv whose python is the stand-in; installer "pip", "uv" (a stand-in uv) or "" (none
    set: setup.sh tries to install uv with $PYTHON, here `false`, so it cannot)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    for fake in (venv / "bin" / "python", tmp_path / "uv"):
        fake.write_text(FAKE_PYTHON)
        fake.chmod(0o755)
    uv = {"pip": "pip", "uv": str(tmp_path / "uv"), "": ""}[installer]
    full = {**os.environ, "BIASKIT_VENV": str(venv), "PYTHON": "false", "SETUP_TICK": "1", "FAIL_ON": "", "BIASKIT_UV": uv}
    full.update(BIASKIT_SERVICE_CACHE=str(tmp_path / "cache"), CALLS=str(tmp_path / "calls"), **env)
    return subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh")], capture_output=True, text=True, env=full, timeout=60)


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_setup_filters_pip_noise_and_prints_a_line_while_a_step_runs(tmp_path, installer):
    r = _run(tmp_path, installer)
    assert r.returncode == 0, r.stdout + r.stderr
    out = (r.stdout + r.stderr).splitlines()
    for noise in ("is ignored", "Ignoring invalid distribution", "as the 'root' user", "DEPRECATION", "[notice]"):
        assert not any(noise in x for x in out), noise
    assert "Successfully installed torch-2.13.0" in out  # what is not noise still shows
    ticks = [x for x in out if x.startswith("setup: ... torch: still working, ")]
    assert len(ticks) >= 2  # 2.5 s of torch with a line every second
    assert out[-1].startswith("setup: done")
    assert any(p.name.startswith(".biaskit-setup-") for p in (tmp_path / "venv").iterdir())


@pytest.mark.parametrize("installer", ["pip", "uv"])
def test_a_failing_step_fails_the_setup_with_its_error_shown(tmp_path, installer):
    r = _run(tmp_path, installer, FAIL_ON="-e")
    assert r.returncode == 3
    assert "ERROR: No matching distribution found for -e" in r.stdout
    assert "setup: 3/5 biaskit with all extras" in r.stdout and "setup: 4/5" not in r.stdout
    assert not any(p.name.startswith(".biaskit-setup-") for p in (tmp_path / "venv").iterdir())


def test_uv_installs_into_the_venv_with_the_package_sources_pip_is_configured_with(tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nfind-links = /opt/w1 /opt/w2\nextra-index-url = file:///opt/simple\nconstraint = /etc/c.txt\n")
    r = _run(tmp_path, "uv", PIP_CONFIG_FILE=str(conf), PIP_FIND_LINKS="", PYTHON="python3")
    assert r.returncode == 0, r.stdout + r.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    # uv does every install (no pip upgrade step), into the venv's python, with pip's sources as uv arguments
    assert all(c.startswith(f"uv pip install -q --python {tmp_path}/venv/bin/python --index-strategy unsafe-best-match ") for c in calls), calls
    assert len(calls) == 4 and "torch==2.13.0" in calls[0] and calls[1].endswith("-e .[dev]")
    for arg in ("--find-links /opt/w1 --find-links /opt/w2", "--extra-index-url file:///opt/simple", "--constraint /etc/c.txt"):
        assert arg in calls[0], (arg, calls[0])


def test_a_machine_where_uv_cannot_be_installed_is_set_up_with_pip(tmp_path):
    r = _run(tmp_path, "")  # PYTHON=false: `false -m pip install uv` fails
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pyinstall: could not install uv" in r.stderr and "using pip" in r.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[0] == "python -m pip --disable-pip-version-check -q install --upgrade pip setuptools wheel"
    assert all(c.startswith("python -m pip ") for c in calls) and len(calls) == 5
