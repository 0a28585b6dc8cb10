"""Library functions stay under ~100 code lines; the longer ones are listed, with the reason, in docs/architecture.md.

A "code line" is a non-blank line that is not only a comment, counted from the first statement after the
docstring to the function's end (nested functions count in their parent). CLI commands have their own,
tighter limit (tests/core/test_cli_functions.py).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import biaskit

SRC = Path(biaskit.__file__).parent
DOC = SRC.parents[1] / "docs" / "architecture.md"
LIMIT = 100


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        return 0
    span = lines[body[0].lineno - 1 : node.end_lineno]
    return sum(1 for line in span if line.strip() and not line.strip().startswith("#"))


def long_functions(root: Path = SRC, limit: int = LIMIT) -> dict[str, int]:
    """``{"evaluate/runners/core.py _run": 130, ...}`` for every library function over ``limit`` code lines."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("cli/"):
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = code_lines(node, lines)
                if n > limit:
                    found[f"{rel} {node.name}"] = n
    return found


def documented() -> dict[str, str]:
    """The rows of the "Long functions" table in docs/architecture.md: ``{"file name": why}``."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Long functions", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*`([^`]+)`\s*\|\s*(\d+)\s*\|\s*(.+?)\s*\|\s*$", line)
        if m:
            rows[f"{m.group(1)} {m.group(2)}"] = m.group(4)
    return rows


def test_counting_skips_docstring_blank_and_comment_lines():
    src = 'def f():\n    """doc\n    more doc"""\n    a = 1\n\n    # note\n    def g():\n        return a\n    return g\n'
    # counted: `a = 1`, `def g():`, `return a`, `return g` = 4 (docstring, blank line and comment are not)
    assert code_lines(ast.parse(src).body[0], src.splitlines()) == 4


def test_a_long_function_is_found(tmp_path):
    (tmp_path / "m.py").write_text("def big():\n" + "".join(f"    x{i} = {i}\n" for i in range(LIMIT + 1)))
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "c.py").write_text("def cmd():\n" + "    y = 0\n" * (LIMIT + 5))
    assert long_functions(tmp_path) == {"m.py big": LIMIT + 1}


def test_every_long_library_function_is_documented_with_its_reason():
    long = long_functions()
    docs = documented()
    missing = sorted(set(long) - set(docs))
    assert not missing, (
        f"library functions over {LIMIT} code lines: {[f'{k} ({long[k]})' for k in missing]}; split them into named steps, "
        "or add a row saying why to the 'Long functions' table of docs/architecture.md"
    )
    stale = sorted(set(docs) - set(long))
    assert not stale, f"docs/architecture.md lists functions that are no longer over {LIMIT} code lines (remove their rows): {stale}"
    assert all(len(why) > 20 for why in docs.values()), docs
