"""The measured slow list (tests/slow_tests.txt) names tests that exist, and tests/measure_cpu.py writes it right."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _measure_cpu():
    spec = importlib.util.spec_from_file_location("measure_cpu", TESTS / "measure_cpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_listed_test_exists():
    listed = [line.split("\t")[0] for line in (TESTS / "slow_tests.txt").read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert listed, "tests/slow_tests.txt is empty"
    missing = []
    functions: dict[Path, set[str]] = {}  # each listed file parsed once
    for node in listed:
        path, _, name = node.partition("::")
        func = name.split("[")[0]
        file = TESTS.parent / path
        if file not in functions:
            functions[file] = {n.name for n in ast.walk(ast.parse(file.read_text())) if isinstance(n, ast.FunctionDef)} if file.exists() else set()
        if func not in functions[file]:
            missing.append(node)
    assert not missing, f"tests/slow_tests.txt names tests that no longer exist (remove them): {missing}"


def test_the_dearest_tests_are_listed_until_the_rest_fit_the_budget(tmp_path, capsys):
    log = tmp_path / "cpu.tsv"
    # a 10 s, b 5 s (two runs: 2 + 3), c 1 s, d 0.5 s = 16.5 s; budget 2: drop a (6.5 left), then b (1.5 <= 2)
    log.write_text("t.py::a\t10\nt.py::b\t2\nt.py::c\t1\nt.py::b\t3\nt.py::d\t0.5\n")
    out = tmp_path / "slow.txt"
    out.write_text("# old\nold.py::gone\t7.0\nt.py::c\t9.0\n")
    _measure_cpu().main([str(log), "--budget", "2", "--list", str(out)])
    rows = [line.split("\t") for line in out.read_text().splitlines() if not line.startswith("#")]
    # old.py::gone was not in this run: kept; t.py::c was measured cheap now: dropped from the list
    assert rows == [["old.py::gone", "7.0"], ["t.py::a", "10.0"], ["t.py::b", "5.0"]]
    assert "2 tests newly measured slow, 1 kept" in capsys.readouterr().out
