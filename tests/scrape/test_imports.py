"""The scrape modules import without cycles (config -> prompts -> pipeline -> config used to be one), and
each imports on its own in a fresh interpreter."""

from __future__ import annotations

import ast
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


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_alone(module):
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
