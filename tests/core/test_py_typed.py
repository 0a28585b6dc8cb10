"""The package says it ships type hints (PEP 561): the marker file exists and is package data."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_py_typed_is_shipped():
    assert (ROOT / "src" / "biaskit" / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
