"""The package's import graph has no cycle and keeps the documented package order, imports inside functions
included (docs/architecture.md).

An edge A -> B is any ``import``/``from ... import`` statement in module A (at any depth: module level,
inside a function, under ``if TYPE_CHECKING``) that names module B of the package, or a name defined in B's
package ``__init__``. ``from pkg import sub`` counts as an edge to ``pkg.sub`` when ``sub`` is a module.
Lazy registry strings (``"biaskit.evaluate.metrics.vader:VaderMetric"``) are data, not imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tests.conftest import plant_package

SRC = Path(__file__).resolve().parents[1] / "src"


def import_graph(src: Path, package: str) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports (anywhere in the file)."""
    files = {}
    for f in sorted((src / package).rglob("*.py")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        files[".".join(parts)] = (f, is_pkg)
    modules = frozenset(files)
    return {mod: set(_imported_modules(f.read_text(encoding="utf-8"), str(f), mod, is_pkg, modules)) for mod, (f, is_pkg) in files.items()}


#: (source text, module, is a package, the package's modules) -> the modules it imports: the checks of the real
#: tree parse each file once, and a planted copy of the tree parses only the file it changed
_IMPORTED: dict[tuple[str, str, bool, frozenset[str]], frozenset[str]] = {}


def _imported_modules(text: str, filename: str, mod: str, is_pkg: bool, modules: frozenset[str]) -> frozenset[str]:
    key = (text, mod, is_pkg, modules)
    if key in _IMPORTED:
        return _IMPORTED[key]
    found: set[str] = set()
    here = mod if is_pkg else mod.rpartition(".")[0]
    for node in ast.walk(ast.parse(text, filename)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        for t in targets:
            while t and t not in modules:  # `import a.b.c` of a name inside module a.b -> a.b
                t = t.rpartition(".")[0]
            if t and t != mod:
                found.add(t)
    _IMPORTED[key] = frozenset(found)
    return _IMPORTED[key]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_biaskit_import_graph_has_no_cycle():
    graph = import_graph(SRC, "biaskit")
    assert len(graph) > 100  # every module was read
    assert graph["biaskit.evaluate.report.build"] >= {"biaskit.evaluate.report.model", "biaskit.evaluate.report.sections"}
    assert cycles(graph) == []


#: docs/architecture.md's order of packages, lowest first: a module may import modules of its own rank or of a
#: lower one, never of a higher one. A name covers its submodules (the longest name that matches decides);
#: ``biaskit`` is only the package's ``__init__``. A module that no name covers fails the check until it is placed.
PACKAGE_ORDER: tuple[tuple[str, ...], ...] = (
    ("biaskit", "biaskit.arrow", "biaskit.hashing", "biaskit.jsonread", "biaskit.bootstrap", "biaskit.errors", "biaskit.secrets"),
    ("biaskit.schema", "biaskit.manifest", "biaskit.log", "biaskit.registry", "biaskit.spreadsheet", "biaskit.net", "biaskit.pool"),
    ("biaskit.output", "biaskit.limits", "biaskit.labels", "biaskit.votes"),
    ("biaskit.io", "biaskit.inputs"),
    ("biaskit.formats",),  # one reader per external format, on top of inputs and jsonread
    ("biaskit.ownership",),
    ("biaskit.assets",),
    ("biaskit.scrape",),
    ("biaskit.templates",),
    ("biaskit.evaluate", "biaskit.evaluate.cache"),
    ("biaskit.evaluate.runners",),
    ("biaskit.evaluate.metrics",),
    ("biaskit.evaluate.stats",),
    ("biaskit.evaluate.baseline",),
    ("biaskit.evaluate.report",),
    ("biaskit.annotate",),
    ("biaskit.train",),
    ("biaskit.interop",),
    ("biaskit.datasets",),
    ("biaskit.demo",),
    ("biaskit.cli",),
)


def placed(module: str, order: tuple[tuple[str, ...], ...] = PACKAGE_ORDER) -> tuple[int, str] | None:
    """(rank, the name of ``order`` that places ``module``), or None when no name covers it."""
    best: tuple[int, str] | None = None
    for rank, names in enumerate(order):
        for name in names:
            covers = module == name or (module.startswith(name + ".") and "." in name)
            if covers and (best is None or len(name) > len(best[1])):
                best = (rank, name)
    return best


def order_violations(graph: dict[str, set[str]], order: tuple[tuple[str, ...], ...] = PACKAGE_ORDER) -> list[str]:
    """One line per import that goes up the package order (naming both modules and their packages), and one
    per module that the order does not place."""
    out = []
    for mod in sorted(graph):
        here = placed(mod, order)
        if here is None:
            out.append(f"{mod} is in no package of the order: add it to PACKAGE_ORDER (and docs/architecture.md)")
            continue
        for dep in sorted(graph[mod]):
            there = placed(dep, order)
            if there is not None and there[0] > here[0]:
                out.append(f"{mod} ({here[1]}) imports {dep} ({there[1]}), a package above it")
    return out


def test_biaskit_keeps_the_package_order():
    assert order_violations(import_graph(SRC, "biaskit")) == []


def test_an_upward_import_breaks_the_package_order():
    """A synthetic graph: the lower package importing the upper one is named, module by module."""
    order = (("pkg", "pkg.low"), ("pkg.high",))
    graph = {"pkg": set(), "pkg.low.a": {"pkg.high.b"}, "pkg.high.b": {"pkg.low.a"}, "pkg.high.c": set()}
    assert order_violations(graph, order) == ["pkg.low.a (pkg.low) imports pkg.high.b (pkg.high), a package above it"]
    assert order_violations({"pkg.other": set()}, order) == [
        "pkg.other is in no package of the order: add it to PACKAGE_ORDER (and docs/architecture.md)"
    ]
    assert order_violations({"pkg.high.b": {"pkg.low.a", "pkg"}, "pkg.low.a": set(), "pkg": set()}, order) == []


def test_a_planted_package_order_violation_in_a_copy_of_biaskit_is_named(tmp_path):
    """evaluate.stats importing annotate (the back-import the shared vote code was moved out of) fails, and no
    cycle is needed for it to fail."""
    import shutil

    shutil.copytree(SRC / "biaskit", tmp_path / "biaskit", ignore=shutil.ignore_patterns("data", "__pycache__"))
    ppi = tmp_path / "biaskit" / "evaluate" / "stats" / "ppiround.py"
    ppi.write_text(
        ppi.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from biaskit.annotate.rankstats import spearman\n\n    return spearman\n",
        encoding="utf-8",
    )
    graph = import_graph(tmp_path, "biaskit")
    assert order_violations(graph) == [
        "biaskit.evaluate.stats.ppiround (biaskit.evaluate.stats) imports biaskit.annotate.rankstats (biaskit.annotate), a package above it"
    ]


DOMAIN = (
    "biaskit.cli",
    "biaskit.demo",
    "biaskit.scrape",
    "biaskit.templates",
    "biaskit.evaluate",
    "biaskit.annotate",
    "biaskit.train",
    "biaskit.datasets",
    "biaskit.interop",
)


def test_the_pool_imports_no_domain_package():
    graph = import_graph(SRC, "biaskit")
    assert not {m for m in graph["biaskit.pool"] if m.startswith(DOMAIN)}


def test_scrape_imports_nothing_of_evaluate():
    graph = import_graph(SRC, "biaskit")
    assert not {(a, b) for a, deps in graph.items() if a.startswith("biaskit.scrape") for b in deps if b.startswith("biaskit.evaluate")}


@pytest.mark.parametrize(
    "a_imports",
    [
        "from pkg.b import g\n",  # module level
        "def f():\n    from pkg.b import g\n    return g\n",  # hidden in a function, as the old cycles were
        "def f():\n    from .b import g\n    return g\n",  # relative
        "def f():\n    from pkg import b\n    return b\n",  # the module named through its package
    ],
)
def test_a_planted_cycle_is_found(tmp_path, a_imports):
    src = plant_package(
        tmp_path, {"__init__.py": "", "a.py": a_imports, "b.py": "from pkg.a import f\n\ndef g():\n    return f\n", "c.py": "from pkg import a\n"}
    )
    assert cycles(import_graph(src, "pkg")) == [["pkg.a", "pkg.b"]]


def test_a_graph_without_cycle_passes(tmp_path):
    src = plant_package(tmp_path, {"__init__.py": "", "a.py": "from pkg.b import g\n", "b.py": "import os\n\ndef g():\n    return os\n"})
    assert import_graph(src, "pkg") == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": set()}
    assert cycles(import_graph(src, "pkg")) == []


def test_the_planted_cycle_is_found_in_a_copy_of_biaskit(tmp_path):
    """The same check over the real tree with one planted back-import (pool -> runners.core) fails."""
    import shutil

    shutil.copytree(SRC / "biaskit", tmp_path / "biaskit", ignore=shutil.ignore_patterns("data", "__pycache__"))
    eng = tmp_path / "biaskit" / "pool.py"
    eng.write_text(
        eng.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from biaskit.evaluate.runners.core import run\n\n    return run\n",
        encoding="utf-8",
    )
    found = cycles(import_graph(tmp_path, "biaskit"))
    assert len(found) == 1 and {"biaskit.pool", "biaskit.evaluate.runners.core"} <= set(found[0])


def test_no_package_init_forwards_names_lazily():
    """A package ``__init__`` with a module ``__getattr__`` is a second, lazy address for names of its modules;
    names are imported from the module that defines them (docs/architecture.md)."""
    forwarding = []
    for init in sorted((SRC / "biaskit").rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
            forwarding.append(str(init.relative_to(SRC)))
    assert forwarding == []
