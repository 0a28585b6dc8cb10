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


def _loop_cpu():
    spec = importlib.util.spec_from_file_location("test_loop_cpu", TESTS.parent / "bench" / "test_loop_cpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_loop_breakdown_sums_each_file_and_names_the_time_outside_the_tests(tmp_path):
    log = tmp_path / "cpu.tsv"
    # x.py: a 1.5 (two runs: 1 + 0.5) + b 0.25 = 1.75 s over 2 tests; y.py: c 2 s; inside the tests 3.75 of 5 s
    log.write_text("x.py::a\t1\nx.py::b\t0.25\ny.py::c\t2\nx.py::a\t0.5\n")
    tool = _loop_cpu()
    cpu = tool.read_log(log)
    assert cpu == {"x.py::a": 1.5, "x.py::b": 0.25, "y.py::c": 2.0}
    lines = tool.report(cpu, 5.0, top=1).splitlines()
    assert lines[:2] == [
        "3 tests, 3.8 CPU s inside tests",
        "5.0 CPU s in all (pytest and its children); outside the tests (start-up, collection): 1.2",
    ]
    # top=1: only the dearest file (y.py, 2.00 s) and the dearest test (y.py::c) are listed
    assert lines[3:5] == ["the 1 dearest files (CPU s, tests):", "   2.00     1  y.py"]
    assert lines[6:] == ["the 1 dearest tests (CPU s):", "   2.00  y.py::c"]
