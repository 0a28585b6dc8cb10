"""No module in src/ is over 800 lines: a file that grows past it is split along its seams."""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "biaskit"
LIMIT = 800


def test_no_source_file_is_over_800_lines():
    long = {p.relative_to(SRC).as_posix(): n for p in sorted(SRC.rglob("*.py")) if (n := len(p.read_text(encoding="utf-8").splitlines())) > LIMIT}
    assert long == {}, f"split these along their seams: {long}"


def test_the_check_reads_real_files():
    sizes = [len(p.read_text(encoding="utf-8").splitlines()) for p in SRC.rglob("*.py")]
    assert len(sizes) > 100 and max(sizes) > 500  # the walk found the package, and its larger modules
