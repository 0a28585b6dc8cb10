"""No module imports another biaskit module's private (``_name``) names: a name another module uses is part of its
defining module's API and is named without the underscore.

Every ``from ... import`` in ``src/biaskit`` is read (module level, inside functions, relative ones too). Allowed:
a public name bound to a private alias (``from biaskit.x import f as _f``), a package-private submodule
(``from biaskit.x import _mod`` where ``_mod.py`` or ``_mod/`` is a module) and dunders (``__version__``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tests.conftest import plant_package

SRC = Path(__file__).resolve().parents[1] / "src"


def _modules(src: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package ``__init__``)."""
    out = {}
    for f in sorted((src / package).rglob("*.py")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (f, is_pkg)
    return out


def private_imports(src: Path, package: str) -> list[str]:
    """``file:line: ...`` for each import of another module's private name."""
    modules = _modules(src, package)
    names = frozenset(modules)
    bad = []
    for mod, (f, is_pkg) in modules.items():
        for line, base, name in _private_names_imported(f.read_text(encoding="utf-8"), str(f), mod, is_pkg, package, names):
            bad.append(
                f"{f.relative_to(src).as_posix()}:{line}: imports {base}.{name}, private to its module: "
                f"rename it without the underscore there (or move it to its one user)"
            )
    return bad


#: (source text, module, is a package, package, its modules) -> (line, module, name) of each private import: the
#: check of the real tree and of a planted copy share the parse of every file the copy did not change
_FOUND: dict[tuple[str, str, bool, str, frozenset[str]], list[tuple[int, str, str]]] = {}


def _private_names_imported(text: str, filename: str, mod: str, is_pkg: bool, package: str, modules: frozenset[str]) -> list[tuple[int, str, str]]:
    key = (text, mod, is_pkg, package, modules)
    if key in _FOUND:
        return _FOUND[key]
    here = mod if is_pkg else mod.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(text, filename)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            anchor = here.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        if base != package and not base.startswith(package + "."):
            continue
        for alias in node.names:
            name = alias.name
            if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
                continue
            if f"{base}.{name}" in modules:  # a package-private submodule
                continue
            found.append((node.lineno, base, name))
    _FOUND[key] = found
    return found


def test_no_module_imports_another_modules_private_names():
    assert private_imports(SRC, "biaskit") == []


LIB = {
    "__init__.py": "",
    "a.py": "def _helper():\n    return 1\n\n\ndef helper():\n    return 2\n",
    "_sub.py": "def f():\n    return 3\n",
    "inner/__init__.py": "",
}


@pytest.mark.parametrize(
    ("b_text", "line"),
    [
        ("from pkg.a import _helper\n", 1),  # module level
        ("import os\n\n\ndef f():\n    from pkg.a import helper, _helper\n\n    return os, helper, _helper\n", 5),  # in a function
        ("from .a import _helper as helper\n", 1),  # relative, under a public alias
    ],
)
def test_a_planted_private_import_is_named(tmp_path, b_text, line):
    src = plant_package(tmp_path, {**LIB, "b.py": b_text})
    assert private_imports(src, "pkg") == [
        f"pkg/b.py:{line}: imports pkg.a._helper, private to its module: rename it without the underscore there (or move it to its one user)"
    ]


def test_a_planted_private_import_in_a_subpackage_is_named(tmp_path):
    src = plant_package(tmp_path, {**LIB, "inner/c.py": "def g():\n    from ..a import _helper\n\n    return _helper\n"})
    assert [b.split(": rename")[0] for b in private_imports(src, "pkg")] == ["pkg/inner/c.py:2: imports pkg.a._helper, private to its module"]


def test_private_aliases_submodules_and_dunders_pass(tmp_path):
    b = "from pkg import _sub, __doc__\nfrom pkg._sub import f\nfrom pkg.a import helper as _helper\n"
    src = plant_package(tmp_path, {**LIB, "b.py": b})
    assert private_imports(src, "pkg") == []


def test_a_planted_private_import_is_found_in_a_copy_of_biaskit(tmp_path):
    """The same check over the real tree with one planted private import fails naming its file and line."""
    import shutil

    shutil.copytree(SRC / "biaskit", tmp_path / "biaskit", ignore=shutil.ignore_patterns("data", "__pycache__"))
    pool = tmp_path / "biaskit" / "pool.py"
    n = len(pool.read_text(encoding="utf-8").splitlines())
    pool.write_text(pool.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from biaskit.errors import _x\n\n    return _x\n")
    assert [b.split(",")[0] for b in private_imports(tmp_path, "biaskit")] == [f"biaskit/pool.py:{n + 4}: imports biaskit.errors._x"]
