"""A type checker runs. mypy checks the modules ``[tool.mypy] files`` lists in pyproject.toml (the layers
every command passes through); a type error there fails this test. The list only grows."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _files() -> list[str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]


def test_the_checked_modules_include_every_layer():
    files = set(_files())
    for layer in ("output", "ownership", "inputs", "labels", "secrets", "io"):
        assert f"src/biaskit/{layer}.py" in files, layer
    for mod in ("inference", "families", "ppi", "cluster"):
        assert f"src/biaskit/evaluate/stats/{mod}.py" in files, mod
    assert all((ROOT / f).is_file() for f in files), [f for f in files if not (ROOT / f).is_file()]


@pytest.mark.slow
def test_mypy_finds_no_type_error_in_the_checked_modules(tmp_path):
    pytest.importorskip("mypy", reason="mypy is in the dev extra: run `bash scripts/setup.sh`")
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


@pytest.mark.slow
def test_mypy_would_catch_a_type_error_in_a_checked_module(tmp_path):
    """The check can fail: a copy of a checked module with a planted error is reported."""
    pytest.importorskip("mypy", reason="mypy is in the dev extra: run `bash scripts/setup.sh`")
    bad = tmp_path / "planted.py"
    bad.write_text((ROOT / "src/biaskit/hashing.py").read_text(encoding="utf-8") + "\n\nx: int = 'not an int'\n")
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache"), str(bad)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 1 and "planted.py" in r.stdout and "[assignment]" in r.stdout, r.stdout
