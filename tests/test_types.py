"""A type checker runs. mypy checks the whole package (``[tool.mypy] files = ["src/biaskit"]`` in pyproject.toml)
at its default strictness, with unused ``# type: ignore`` comments reported; a type error anywhere in src/biaskit
fails this test."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def test_the_type_check_covers_the_whole_package():
    cfg = _config()
    assert cfg["files"] == ["src/biaskit"], cfg["files"]
    assert cfg.get("warn_unused_ignores") is True
    assert cfg.get("ignore_missing_imports") is True
    assert (ROOT / "src/biaskit/__init__.py").is_file()


@pytest.mark.slow
def test_mypy_finds_no_type_error_in_the_package(tmp_path):
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
def test_mypy_would_catch_a_type_error_and_a_stale_ignore(tmp_path):
    """The check can fail: under the project's settings, a copy of a module with a planted type error and a
    `# type: ignore` that silences nothing is reported for both."""
    pytest.importorskip("mypy", reason="mypy is in the dev extra: run `bash scripts/setup.sh`")
    bad = tmp_path / "planted.py"
    bad.write_text(
        (ROOT / "src/biaskit/hashing.py").read_text(encoding="utf-8") + "\n\nx: int = 'not an int'\ny: int = 1  # type: ignore[assignment]\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"), str(bad)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 1 and "planted.py" in r.stdout, r.stdout
    assert "[assignment]" in r.stdout and "[unused-ignore]" in r.stdout, r.stdout
