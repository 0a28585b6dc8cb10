"""Tests are named for what they check: no test file or test function name, and no comment or docstring in
tests/ or src/, speaks of the issue, round or review that brought it ("issue 27 item 2:", "review fix:",
``test_hardening_round2.py``). The scanner is checked on files written here, so it cannot pass by finding
nothing."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: a file, function or class name that tells history: issue27, issue_27, round2, round_2, hardening_round, review_fix
NAME = re.compile(r"issue[_-]?\d|round[_-]?\d|round_?two|hardening_round|review[_-]?fix", re.I)
#: a comment or docstring that tells history: "issue 27", "issues 21", "issue-22", "review fix", "hardening round"
TEXT = re.compile(r"\bissues? ?-?\d+\b|\breview fix|\bhardening round\b|\bround \d+ of (?:review|hardening)\b", re.I)


def _docstrings(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    out.append((body[0].lineno, body[0].value.value))
    return out


def history_in_text(path: Path) -> list[str]:
    """'path:line: text' for each comment or docstring of ``path`` that tells history."""
    src = path.read_text(encoding="utf-8")
    found = []
    # a comment is a verbatim piece of the source: a file whose text nowhere matches has none to find (tokenize,
    # pure Python, is most of this scan's time)
    tokens = tokenize.generate_tokens(io.StringIO(src).readline) if TEXT.search(src) else ()
    for tok in tokens:
        if tok.type == tokenize.COMMENT and TEXT.search(tok.string):
            found.append(f"{path}:{tok.start[0]}: {tok.string.strip()}")
    for line, doc in _docstrings(ast.parse(src)):
        for i, text in enumerate(doc.splitlines()):
            if TEXT.search(text):
                found.append(f"{path}:{line + i}: {text.strip()}")
    return found


def history_in_names(root: Path) -> list[str]:
    """Each .py file under ``root`` whose name, or whose function or class names, tell history."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if NAME.search(path.name):
            found.append(f"file {path}")
        src = path.read_text(encoding="utf-8")
        if not NAME.search(src):  # a name is a verbatim piece of the source: none to find
            continue
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and NAME.search(node.name):
                found.append(f"{path}:{node.lineno}: {node.name}")
    return found


def test_no_test_file_or_function_name_tells_history():
    assert history_in_names(ROOT / "tests") == []


def test_no_comment_or_docstring_in_tests_or_src_tells_history():
    # this file names the patterns it looks for, so it is left out
    paths = [p for top in ("tests", "src") for p in sorted((ROOT / top).rglob("*.py")) if p != Path(__file__).resolve()]
    found = [hit for path in paths for hit in history_in_text(path)]
    assert found == []


def test_the_scanner_finds_each_kind_of_history_and_passes_behaviour(tmp_path):
    bad = tmp_path / "test_hardening_round2.py"
    bad.write_text(
        '"""Issue 27 item 2: the stage list is code."""\n'
        "def test_issue_18_hint():\n"
        '    """Issues 21: secrets."""\n'
        "    x = 1  # review fix: a short row raised IndexError\n"
        "    y = 2  # fixed in issue-22\n"
        "class TestRound2:\n"
        "    pass\n",
        encoding="utf-8",
    )
    good = tmp_path / "test_format_roundtrip.py"
    good.write_text(
        '"""A round trip: every format read back gives the rows; an annotation round excludes the last one."""\n'
        "def test_round_trip_and_a_second_round_of_sampling():\n"
        '    s = "issue 27"  # a string value, not a comment or docstring\n'
        "    return round(2.5)  # round 2 decimals\n",
        encoding="utf-8",
    )
    assert [h.split(": ", 1)[-1] for h in history_in_text(bad)] == [
        "# review fix: a short row raised IndexError",
        "# fixed in issue-22",
        "Issue 27 item 2: the stage list is code.",
        "Issues 21: secrets.",
    ]
    assert sorted(h.rsplit(" ", 1)[-1].rsplit(":", 1)[-1] for h in history_in_names(tmp_path)) == sorted(
        [f"{bad}", "TestRound2", "test_issue_18_hint"]
    )
    assert history_in_text(good) == []
