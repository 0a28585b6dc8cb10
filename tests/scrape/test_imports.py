"""The scrape modules import without cycles (config -> prompts -> pipeline -> config used to be one), and
each imports on its own in a fresh interpreter."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import biaskit.scrape

PKG = Path(biaskit.scrape.__file__).parent
MODULES = sorted(f"biaskit.scrape.{p.stem}" for p in PKG.glob("*.py") if p.stem != "__init__")


def scrape_imports(module: str) -> set[str]:
    """biaskit.scrape modules that ``module`` imports anywhere in its source (top level or inside functions)."""
    tree = ast.parse((PKG / f"{module.rsplit('.', 1)[1]}.py").read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        out |= {n for n in names if n in MODULES and n != module}
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state and (c := visit(m)):
                return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (c := visit(n)):
            return c
    return None


def test_find_cycle_finds_the_old_cycle():
    # the graph before the fix: prompts imported CANDIDATE_SCHEMA from pipeline (inside a function)
    old = {
        "biaskit.scrape.config": {"biaskit.scrape.prompts"},
        "biaskit.scrape.prompts": {"biaskit.scrape.pipeline"},
        "biaskit.scrape.pipeline": {"biaskit.scrape.config", "biaskit.scrape.prompts"},
    }
    assert find_cycle(old) == ["biaskit.scrape.config", "biaskit.scrape.prompts", "biaskit.scrape.pipeline", "biaskit.scrape.config"]


def test_no_import_cycle_among_scrape_modules():
    graph = {m: scrape_imports(m) for m in MODULES}
    assert "biaskit.scrape.prompts" in graph["biaskit.scrape.config"]  # the graph is read, not empty
    assert "biaskit.scrape.pipeline" not in graph["biaskit.scrape.prompts"]
    assert find_cycle(graph) is None


#: Run in one fresh interpreter: a first child imports every module and names the libraries outside biaskit that
#: they load; the parent loads those, then forks one child per module, which imports it as the first biaskit
#: module of its process (what an import cycle among biaskit modules depends on), and reports (exit status, error).
#: Each child so skips loading numpy and pyarrow again, most of a fresh interpreter's import time.
ALONE = """
import importlib, json, os, sys, traceback

def child(run):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out, code = run(), 0
        except BaseException:
            out, code = traceback.format_exc(), 1
        os.write(w, out.encode())
        os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        text = fh.read().decode()
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), text

modules = sys.argv[1:]
def libraries():
    for m in modules:
        importlib.import_module(m)
    return " ".join(m for m in sys.modules if m.split(".")[0] not in {x.split(".")[0] for x in modules})
status, libs = child(libraries)
for lib in libs.split() if status == 0 else ():
    try:
        importlib.import_module(lib)
    except Exception:
        pass
assert not [m for m in sys.modules if m.split(".")[0] in {x.split(".")[0] for x in modules}]
print(json.dumps({m: child(lambda m=m: importlib.import_module(m) and "") for m in modules}))
"""


@pytest.fixture(scope="module")
def imported_alone() -> dict[str, list]:
    """module -> [exit status, error] of importing it first in its own process (see ``ALONE``)."""
    r = subprocess.run([sys.executable, "-c", ALONE, *MODULES], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_alone(module, imported_alone):
    status, error = imported_alone[module]
    assert status == 0, error


def test_a_module_in_an_import_cycle_fails_alone_and_the_error_is_reported(tmp_path):
    """The forking runner sees what a fresh interpreter sees: a planted pair of modules that import each other's
    names fails whichever is imported first, and a module outside the cycle imports."""
    files = {"__init__.py": "", "a.py": "from cyc.b import g\n\ndef f():\n    return g\n", "b.py": "from cyc.a import f\n\ndef g():\n    return f\n"}
    (tmp_path / "cyc").mkdir()
    for name, text in {**files, "c.py": "import json\n"}.items():
        (tmp_path / "cyc" / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", ALONE, "cyc.c", "cyc.a", "cyc.b"], capture_output=True, text=True, timeout=120, env=env)
    found = json.loads(r.stdout)
    assert found["cyc.c"] == [0, ""]
    for m in ("cyc.a", "cyc.b"):
        assert found[m][0] == 1 and "ImportError: cannot import name" in found[m][1] and "partially initialized module" in found[m][1], found[m]
