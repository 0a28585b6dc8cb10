"""Move in-function imports of biaskit's own modules and of light libraries to the module's top import block.

Usage (from the repository root; re-runnable, a second run changes nothing):

    python scripts/hoist_imports.py src/biaskit/annotate src/biaskit/io.py ...   # rewrite the files
    python scripts/hoist_imports.py --dry-run src/biaskit/annotate               # only report
    python scripts/hoist_imports.py --count src/biaskit                          # in-function import statements

The rule (docs/architecture.md, "Imports"): an import stays inside its function only when it would load a heavy
library (``HEAVY``, measured with ``python -X importtime``: over about 100 ms) that the module does not load
already at import time. That holds for a biaskit module too: ``from biaskit.x import f`` stays lazy when
``biaskit.x``, at module level, pulls in a heavy library the importing module does not. Everything else moves up.

An in-function import is also left where it is when
- it sits under ``if TYPE_CHECKING``, inside try/except (an optional dependency) or inside a ``with`` block;
- the name it binds is a different module-level name, or a parameter or local of its function (or of an
  enclosing one);
- tests patch the name it binds (``monkeypatch.setattr(mod, "f", ...)``, ``mock.patch("biaskit.x.f")``): such a
  test relies on the lazy ``from biaskit.x import f`` reading the patched attribute at call time (``SKIP`` and the
  scan of tests/, ``patched_names``);
- it would close a cycle among module-level imports (a package's ``__init__`` runs before its submodules);
- the file is a package ``__init__.py`` (a hoisted name would join the package's public namespace);
- it is a bare ``import biaskit.x`` whose name the function never reads: it runs for its side effect (the module
  registers metrics, lexicons or plugins), which must happen when the function runs, not when its module loads.

The edit works on line numbers: the import's lines go, its text is added after the top import block, then
``ruff check --select I --fix`` sorts the block and ``ruff format`` formats the file. Comments elsewhere are kept.

Command modules (``biaskit.cli.*``) follow the same rule. They load lazily (``biaskit.cli.LazyGroup``):
``biaskit --help`` and ``biaskit GROUP --help`` list the commands from ``biaskit.cli.listing`` and import no command
module, so a command module may import its light library modules at module level. A command module is still
loaded for each of its commands and for their ``--help``, so a heavy library stays inside the command that needs
it: ``biaskit stats pairs --help`` must not pay for scipy because ``stats ztest`` in the same module uses it.
``tests/test_imports_rule.py`` uses ``classify`` of this file to keep the count of the remaining in-function imports
that are not heavy from growing.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = "biaskit"

# Heavy: `python -X importtime -c "import X"` over about 100 ms on the development machine (figures in
# docs/architecture.md), or a large optional dependency named by the architecture (torch, transformers, spacy,
# ray, label_studio_sdk, crowdkit). Light, measured: yaml 59 ms, rich 31-77 ms, vaderSentiment 46 ms, the stdlib.
HEAVY = frozenset(
    {
        "accelerate",
        "crowdkit",
        "datasets",
        "gensim",
        "gguf",
        "httpx",
        "huggingface_hub",
        "jinja2",
        "label_studio_sdk",
        "matplotlib",
        "mwparserfromhell",
        "nltk",
        "numpy",
        "pandas",
        "pyarrow",
        "pyarrow.compute",  # 40-65 ms on top of pyarrow, which `biaskit --help` does not load otherwise
        "ray",
        "requests",
        "scipy",
        "sentence_transformers",
        "simplemma",
        "sklearn",
        "spacy",
        "statsmodels",
        "tokenizers",
        "torch",
        "transformers",
        "typer",
        "urllib3",
    }
)

# Heavy by the measure, but `biaskit --help` loads them already (the table layer: cli/metrics.py -> pyarrow and
# numpy; typer's help loads rich), so an import of them costs no command anything: they may move up. tests/test_imports_rule.py checks
# that `import biaskit.cli` loads them and none of the rest of HEAVY.
LOADED_BY_CLI = frozenset({"numpy", "pyarrow", "typer", "rich"})

# (module, bound name) -> why that in-function import stays, for cases the scan of tests/ does not find.
SKIP: dict[tuple[str, str], str] = {
    ("biaskit.cli.group", "output_lock"): "`biaskit --help` runs this module; biaskit.io (pyarrow's csv, json and parquet "
    "readers) loads only when a command that writes --out runs",
}


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Name -> dotted module (or attribute) it stands for, from every import of a test file."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _dotted(expr: ast.AST, aliases: dict[str, str]) -> str | None:
    if isinstance(expr, ast.Name):
        return aliases.get(expr.id)
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value, aliases)
        return f"{base}.{expr.attr}" if base else None
    return None


def _patches(tree: ast.AST, where: str, found: dict[tuple[str | None, str], str], offset: int = 0) -> None:
    """(object patched or None when unknown, attribute) for setattr/patch/patch.object calls and assignments."""
    aliases = _aliases(tree)
    for node in ast.walk(tree):
        pairs: list[tuple[str | None, str]] = []
        if isinstance(node, ast.Call) and node.args:
            fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            a0 = node.args[0]
            a1 = node.args[1] if len(node.args) > 1 else None
            if isinstance(a0, ast.Constant) and isinstance(a0.value, str) and fn in ("setattr", "patch") and "." in a0.value:
                pairs.append(tuple(a0.value.rsplit(".", 1)))  # patch("biaskit.x.f")
            elif fn in ("setattr", "object") and isinstance(a1, ast.Constant) and isinstance(a1.value, str):
                pairs.append((_dotted(a0, aliases), a1.value))  # setattr(mod, "f"), patch.object(mod, "f")
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and (obj := _dotted(t.value, aliases)):
                    pairs.append((obj, t.attr))  # mod.f = fake
        elif (code := _string_text(node)) and "import" in code:
            try:  # a script a test runs in a subprocess
                _patches(ast.parse(textwrap.dedent(code)), where, found, offset + node.lineno - 1)
            except SyntaxError:
                pass
        for pair in pairs:
            found.setdefault(pair, f"{where}:{offset + node.lineno}")


def _string_text(node: ast.AST) -> str:
    """The text of a string literal; an f-string's fields read as ``_``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "_" for v in node.values)
    return ""


def patched_names(tests: Path = ROOT / "tests") -> dict[tuple[str | None, str], str]:
    """(module, name) that some test patches -> the first place it does (file:line); module None: not resolved."""
    found: dict[tuple[str | None, str], str] = {}
    for f in sorted(tests.rglob("*.py")):
        _patches(ast.parse(f.read_text(encoding="utf-8"), str(f)), str(f.relative_to(ROOT)), found)
    return found


def module_files(src: Path = SRC) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for f in sorted((src / PACKAGE).rglob("*.py")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _is_type_checking(node: ast.AST) -> bool:
    t = node.test if isinstance(node, ast.If) else None
    return isinstance(t, ast.Name) and t.id == "TYPE_CHECKING" or isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"


def absolute(node: ast.ImportFrom, module: str, is_pkg: bool) -> str:
    """The absolute module of a ``from`` import (relative ones resolved against ``module``)."""
    if not node.level:
        return node.module or ""
    anchor = module.split(".") if is_pkg else module.split(".")[:-1]
    anchor = anchor[: len(anchor) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def targets(node: ast.Import | ast.ImportFrom, module: str, is_pkg: bool, modules: set[str] | frozenset[str]) -> list[str]:
    """Dotted names a statement imports: biaskit modules (with their parent packages) and external roots."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = absolute(node, module, is_pkg)
        subs = [f"{base}.{a.name}" for a in node.names]  # outside biaskit: maybe submodules (`from pyarrow import compute`)
        names = [base] + [n for n in subs if n in modules or n.split(".")[0] != PACKAGE]
    out = []
    for n in names:
        if n.split(".")[0] != PACKAGE:
            out.append(n)
            continue
        while n and n not in modules:
            n = n.rpartition(".")[0]
        while n:  # importing a.b.c runs a/__init__ and a/b/__init__ first
            out.append(n)
            n = n.rpartition(".")[0]
    return out


def module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported: not in functions, not under ``if TYPE_CHECKING``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or _is_type_checking(child):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            walk(child)

    walk(tree)
    return found


@dataclass
class Graph:
    """Module-level import edges of the package and the heavy libraries each module loads on import."""

    files: dict[str, Path]
    edges: dict[str, set[str]] = field(default_factory=dict)
    external: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, src: Path = SRC) -> Graph:
        g = cls(module_files(src))
        modules = frozenset(g.files)
        for mod, f in g.files.items():
            g.edges[mod], g.external[mod] = set(), set()
            for names in _module_level_targets(f.read_text(encoding="utf-8"), str(f), mod, modules):
                g.add(mod, names)
            parent = mod.rpartition(".")[0]
            if parent:
                g.edges[mod].add(parent)
        return g

    def add(self, mod: str, names: list[str]) -> None:
        for t in names:
            if t in self.files:
                if t != mod:
                    self.edges[mod].add(t)
            else:
                self.external[mod].add(t)

    def reach(self, start: set[str], loaded: set[str] = frozenset()) -> set[str]:
        """Modules that importing ``start`` runs; ``loaded`` ones (already imported or in progress) are not followed."""
        seen, todo = set(loaded), list(set(start) - set(loaded))
        while todo:
            m = todo.pop()
            if m in seen or m not in self.files:
                continue
            seen.add(m)
            todo.extend(self.edges[m])
        return seen - set(loaded)

    def heavy(self, names: list[str]) -> set[str]:
        """Heavy libraries that importing these names loads, module-level imports followed through biaskit."""
        out = set(heavy_of(names))
        for m in self.reach({n for n in names if n in self.files}):
            out |= heavy_of(self.external[m])
        return out


#: (source text, module, the package's modules) -> the targets of each module-level import: a graph of a copy of
#: the tree with one file changed (tests/test_imports_rule.py plants one) parses only that file again
_TARGETS: dict[tuple[str, str, frozenset[str]], list[list[str]]] = {}


def _module_level_targets(text: str, filename: str, mod: str, modules: frozenset[str]) -> list[list[str]]:
    key = (text, mod, modules)
    if key not in _TARGETS:
        is_pkg = Path(filename).name == "__init__.py"
        _TARGETS[key] = [targets(node, mod, is_pkg, modules) for node in module_level_imports(ast.parse(text, filename))]
    return _TARGETS[key]


def heavy_of(names) -> set[str]:
    """The ``HEAVY`` entries that importing these external dotted names loads (``pyarrow.compute`` loads both
    ``pyarrow`` and ``pyarrow.compute``)."""
    return {h for n in names for h in HEAVY if n == h or n.startswith(h + ".")}


def _bindings(node: ast.Import | ast.ImportFrom, mod: str, is_pkg: bool) -> list[tuple[str, tuple]]:
    """(bound name, what it is bound to) for each alias of an import."""
    out = []
    for a in node.names:
        if isinstance(node, ast.Import):
            out.append((a.asname, ("as", a.name)) if a.asname else (a.name.split(".")[0], ("pkg", a.name.split(".")[0])))
        else:
            out.append((a.asname or a.name, ("from", absolute(node, mod, is_pkg), a.name)))
    return out


def module_names(tree: ast.Module, mod: str, is_pkg: bool) -> dict[str, set[tuple]]:
    """Module-level name -> what binds it: an import's target, or ("other",) for defs, assignments, guarded imports."""
    names: dict[str, set[tuple]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for n, what in _bindings(stmt, mod, is_pkg):
                names.setdefault(n, set()).add(what)
            continue
        todo: list[ast.AST] = [stmt]
        while todo:  # the statement's own scope: not into defs, classes, lambdas or comprehensions
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.setdefault(node.name, set()).add(("other",))
                continue
            if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.setdefault(node.id, set()).add(("other",))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for n, _ in _bindings(node, mod, is_pkg):
                    names.setdefault(n, set()).add(("other",))
            todo.extend(ast.iter_child_nodes(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            for n in node.names:
                names.setdefault(n, set()).add(("other",))
    return names


def local_names(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> dict[str, list[ast.AST]]:
    """Names a function binds in its own scope (parameters, assignments, imports, nested defs) -> the binders."""
    names: dict[str, list[ast.AST]] = {}
    a = fn.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]:
        names.setdefault(arg.arg, []).append(arg)
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.setdefault(node.name, []).append(node)
            todo.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.setdefault(node.id, []).append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for al in node.names:
                n = al.asname or al.name.split(".")[0]
                names.setdefault(n, []).append(node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                names.setdefault(n, []).append(node)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.setdefault(node.name, []).append(node)
        todo.extend(ast.iter_child_nodes(node))
    return names


@dataclass
class Found:
    """One in-function import with its context."""

    node: ast.Import | ast.ImportFrom
    scopes: list[ast.AST]  # enclosing functions, outermost first
    guarded: str  # "" or why its position keeps it lazy (TYPE_CHECKING, try, with)
    parent_body: list[ast.stmt]


def in_function_imports(tree: ast.Module) -> list[Found]:
    found: list[Found] = []

    def walk(node: ast.AST, scopes: list[ast.AST], guarded: str) -> None:
        for _, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if not isinstance(child, ast.AST):
                    continue
                g, s = guarded, scopes
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    s = [*scopes, child]
                elif scopes and not g:
                    if _is_type_checking(child):
                        g = "under if TYPE_CHECKING"
                    elif isinstance(child, (ast.Try, ast.TryStar)):
                        g = "inside try/except (optional dependency)"
                    elif isinstance(child, (ast.With, ast.AsyncWith)):
                        g = "inside a with block"
                if isinstance(child, (ast.Import, ast.ImportFrom)) and scopes:
                    found.append(Found(child, scopes, guarded, value if isinstance(value, list) else []))
                walk(child, s, g)

    walk(tree, [], "")
    return found


@dataclass
class Decision:
    found: Found
    hoist: list[ast.alias]  # the aliases that move up
    keep: list[tuple[ast.alias, str]]  # the aliases that stay, each with why
    dedupe: list[ast.alias] = field(default_factory=list)  # moved aliases already imported at module level


def classify(path: Path, graph: Graph, patched: dict[str, str] | None = None) -> list[Decision]:
    """For each in-function import of a file: which aliases may move to module level, and why the rest stay."""
    mod = next(m for m, f in graph.files.items() if f.resolve() == path.resolve())
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    top = module_names(tree, mod, is_pkg)
    own_heavy = graph.heavy([mod])
    planned: dict[str, tuple] = {}
    out = []
    for fd in in_function_imports(tree):
        dec = Decision(fd, [], [])
        for alias, (name, what) in zip(fd.node.names, _bindings(fd.node, mod, is_pkg), strict=True):
            why = _why_keep(fd, alias, name, what, ctx=(mod, is_pkg, graph, top, own_heavy, planned, patched or {}))
            if why:
                dec.keep.append((alias, why))
                continue
            names = targets(_single(fd.node, alias), mod, is_pkg, set(graph.files))
            inner = {t for t in names if t in graph.files} - {mod}
            if mod in graph.reach(inner, loaded=_ancestors(mod)):  # a parent's __init__ runs before mod
                dec.keep.append((alias, "would close a cycle of module-level imports"))
                continue
            graph.edges[mod] |= inner
            planned.setdefault(name, what)
            if what in top.get(name, set()) and _exact_at_top(tree, fd.node, alias, mod, is_pkg):
                dec.dedupe.append(alias)
            dec.hoist.append(alias)
        out.append(dec)
    return out


def _ancestors(mod: str) -> set[str]:
    parts = mod.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def _single(node: ast.Import | ast.ImportFrom, alias: ast.alias) -> ast.Import | ast.ImportFrom:
    if isinstance(node, ast.Import):
        return ast.Import(names=[alias])
    return ast.ImportFrom(module=node.module, names=[alias], level=node.level)


def _exact_at_top(tree: ast.Module, node: ast.AST, alias: ast.alias, mod: str, is_pkg: bool) -> bool:
    want = ast.unparse(_absolute(_single(node, alias), mod, is_pkg))
    return any(
        isinstance(s, (ast.Import, ast.ImportFrom)) and ast.unparse(_absolute(_single(s, a), mod, is_pkg)) == want
        for s in tree.body
        if isinstance(s, (ast.Import, ast.ImportFrom))
        for a in s.names
    )


def _absolute(node: ast.Import | ast.ImportFrom, mod: str, is_pkg: bool) -> ast.Import | ast.ImportFrom:
    if isinstance(node, ast.Import) or not node.level:
        return node
    return ast.ImportFrom(module=absolute(node, mod, is_pkg), names=node.names, level=0)


def _why_keep(fd: Found, alias: ast.alias, name: str, what: tuple, ctx: tuple) -> str:
    mod, is_pkg, graph, top, own_heavy, planned, patched = ctx
    if fd.guarded:
        return fd.guarded
    if is_pkg:
        return "package __init__: a hoisted name would join the package namespace"
    if (mod, name) in SKIP:
        return SKIP[(mod, name)]
    if _for_side_effect(fd, alias):
        return "imported for its side effect (the module registers itself), which must happen when the function runs"
    if isinstance(fd.node, ast.ImportFrom):
        source = absolute(fd.node, mod, is_pkg)
        where = patched.get((source, alias.name)) or patched.get((None, alias.name))
        if where:
            return f"tests patch {source}.{alias.name} ({where}); a lazy import reads the patched attribute"
    names = targets(_single(fd.node, alias), mod, is_pkg, set(graph.files))
    extra = graph.heavy(names) - own_heavy - LOADED_BY_CLI
    if extra:
        return f"heavy: loads {', '.join(sorted(extra))}"
    bound = top.get(name, set())
    if bound and bound != {what}:
        return f"{name!r} is a different module-level name"
    if name in planned and planned[name] != what:
        return f"{name!r} is bound to something else by another hoisted import"
    for scope in fd.scopes:
        binders = [b for b in local_names(scope).get(name, []) if not _same_import(b, name, what, mod, is_pkg)]
        if binders:
            return f"{name!r} is a parameter or local of {getattr(scope, 'name', 'a lambda')}()"
    return ""


def _for_side_effect(fd: Found, alias: ast.alias) -> bool:
    """A bare ``import biaskit.x.y`` whose bound name (``biaskit``) its function never reads: it runs for what
    importing the module does (registering metrics, lexicons, plugins), and moving it up would do that (and load
    the plugins) whenever the importing module is loaded."""
    if not isinstance(fd.node, ast.Import) or alias.asname or not alias.name.startswith("biaskit."):
        return False
    return not any(isinstance(n, ast.Name) and n.id == "biaskit" for n in ast.walk(fd.scopes[-1]))


def _same_import(binder: ast.AST, name: str, what: tuple, mod: str, is_pkg: bool) -> bool:
    if not isinstance(binder, (ast.Import, ast.ImportFrom)):
        return False
    return all(w == what for n, w in _bindings(binder, mod, is_pkg) if n == name)


def _top_block_end(tree: ast.Module) -> int:
    """Line after which hoisted imports go: the end of the first run of module-level imports (or the docstring)."""
    end, started = 0, False
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            end, started = stmt.end_lineno or stmt.lineno, True
        elif started:
            break
        elif i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            end = stmt.end_lineno or stmt.lineno
    return end


def _moved_text(lines: list[str], dec: Decision) -> str:
    """The statement to add at the top: the original lines when all of it moves (comments after it dropped)."""
    node = dec.found.node
    to_add = [a for a in dec.hoist if a not in dec.dedupe]
    first, last = node.lineno, node.end_lineno or node.lineno
    src_text = "".join(lines[first - 1 : last])
    if dec.keep or len(to_add) < len(node.names) or ";" in src_text:
        return ast.unparse(_with(node, to_add)) + "\n" if to_add else ""
    text = textwrap.dedent(src_text)
    return re.sub(r"[ \t]*#.*$", "", text, flags=re.M).rstrip() + "\n"  # its reason to be lazy no longer holds


def rewrite(path: Path, decisions: list[Decision]) -> int:
    """Apply the decisions to the file (line-based); the number of aliases moved up."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    tree = ast.parse("".join(lines))
    new_top: list[str] = []
    edits: dict[int, tuple[int, list[str]]] = {}  # first line -> (last line, replacement lines)
    emptied: dict[int, list[ast.stmt]] = {}  # id(body) -> body, for blocks that may lose every statement
    gone: set[int] = set()
    for dec in decisions:
        if not dec.hoist:
            continue
        node = dec.found.node
        first, last = node.lineno, node.end_lineno or node.lineno
        indent = re.match(r"[ \t]*", lines[first - 1]).group(0)
        new_top.append(_moved_text(lines, dec))
        kept = [a for a, _ in dec.keep]
        edits[first] = (last, [indent + ast.unparse(_with(node, kept)) + "\n"] if kept else [])
        if not kept:
            gone.add(id(node))
            emptied[id(dec.found.parent_body)] = dec.found.parent_body
    for body in emptied.values():  # a block left without statements gets `pass`
        if all(id(s) in gone for s in body):
            last_stmt = body[-1]
            indent = re.match(r"[ \t]*", lines[last_stmt.lineno - 1]).group(0)
            edits[last_stmt.lineno] = (last_stmt.end_lineno or last_stmt.lineno, [indent + "pass\n"])
    if not edits:
        return 0
    for first in sorted(edits, reverse=True):
        last, repl = edits[first]
        before = lines[first - 2].rstrip() if first > 1 else ""
        opens_block = before.endswith((":", '"""', "'''")) or not before
        if not repl and last < len(lines) and not lines[last].strip() and opens_block:
            last += 1  # the blank line that set the imports apart from the code goes with them
        lines[first - 1 : last] = repl
    at = _top_block_end(tree)
    have = {ln.strip() for ln in lines[:at]}
    block: list[str] = []
    for t in new_top:
        if t and t.strip() not in have and t not in block:
            block.append(t)
    lines[at:at] = block
    path.write_text("".join(lines), encoding="utf-8")
    return sum(len(d.hoist) for d in decisions)


def _with(node: ast.Import | ast.ImportFrom, aliases: list[ast.alias]) -> ast.Import | ast.ImportFrom:
    if isinstance(node, ast.Import):
        return ast.Import(names=aliases)
    return ast.ImportFrom(module=node.module, names=aliases, level=node.level)


def python_files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return out


def count_in_function(files: list[Path]) -> dict[Path, int]:
    """File -> its in-function import statements, heavy ones included, those under ``if TYPE_CHECKING`` not (the
    figure of docs/architecture.md, "Imports"); files without any are left out."""
    out = {}
    for f in files:
        n = sum(1 for fd in in_function_imports(ast.parse(f.read_text(encoding="utf-8"), str(f))) if fd.guarded != "under if TYPE_CHECKING")
        if n:
            out[f] = n
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="files or folders under src/biaskit")
    ap.add_argument("--dry-run", action="store_true", help="report only, change nothing")
    ap.add_argument("--verbose", "-v", action="store_true", help="list every import that stays, with why")
    ap.add_argument("--count", action="store_true", help="only count the in-function import statements, per file and in all")
    args = ap.parse_args(argv)
    if args.count:
        counts = count_in_function(python_files(args.paths))
        if args.verbose:
            for f, n in sorted(counts.items(), key=lambda kv: -kv[1]):
                print(f"{n:4d} {f}")
        print(f"{sum(counts.values())} in-function import statement(s) in {len(counts)} file(s)")
        return 0
    patched = patched_names()
    changed: list[Path] = []
    total = 0
    for f in python_files(args.paths):
        graph = Graph.build()  # rebuilt per file: earlier rewrites add module-level edges
        decisions = classify(f, graph, patched)
        n = sum(len(d.hoist) for d in decisions)
        kept = [(d.found.node.lineno, ast.unparse(_with(d.found.node, [a])), w) for d in decisions for a, w in d.keep]
        if n or (args.verbose and kept):
            print(f"{f.relative_to(ROOT) if f.is_absolute() else f}: {n} moved up, {len(kept)} stay")
        if args.verbose:
            for line, stmt, why in kept:
                print(f"    {line}: {stmt}  -- {why}")
        if n and not args.dry_run:
            rewrite(f, decisions)
            changed.append(f)
        total += n
    if changed:
        ruff = [sys.executable, "-m", "ruff"]
        subprocess.run([*ruff, "check", "--select", "I", "--fix", "-q", *map(str, changed)], check=False)
        subprocess.run([*ruff, "format", "-q", *map(str, changed)], check=False)
    print(f"{total} import(s) {'would move' if args.dry_run else 'moved'} up in {len(changed) or 'no'} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
