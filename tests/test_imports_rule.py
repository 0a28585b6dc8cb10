"""Imports go at module level; inside a function only when they load a heavy library (docs/architecture.md, "Imports").

"Heavy" is ``HEAVY`` of scripts/hoist_imports.py (measured with ``python -X importtime``: over about 100 ms); an
import of a biaskit module is heavy when that module, at module level, loads a heavy library the importing module
does not load already. ``LOADED_BY_CLI`` (numpy, pyarrow, typer, rich) are heavy but ``biaskit --help`` loads them
anyway, so they may be imported at module level.

- A ratchet: the in-function imports that are not heavy, counted per file, may not grow past ``CEILING`` (the count
  after scripts/hoist_imports.py ran over ``src/biaskit``, the lazily loaded command modules of ``cli/`` included). A new one fails naming its file and lines; moving one up fails until its ceiling is lowered.
- No heavy library moved to module level: each module loads at import only the heavy libraries of
  ``HEAVY_AT_IMPORT``.
- ``import biaskit.cli`` and ``biaskit --help`` load none of the heavy libraries but ``LOADED_BY_CLI``.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

_spec = importlib.util.spec_from_file_location("hoist_imports", ROOT / "scripts" / "hoist_imports.py")
hoist = importlib.util.module_from_spec(_spec)
sys.modules["hoist_imports"] = hoist  # dataclasses look their module up while the class is built
_spec.loader.exec_module(hoist)

# file (relative to src/) -> in-function imports (aliases) there that are not heavy. Files not listed: 0.
CEILING: dict[str, int] = json.loads((Path(__file__).parent / "fixtures" / "imports_ceiling.json").read_text())

# module -> heavy libraries (besides LOADED_BY_CLI) it loads when imported; modules not listed load none. The command
# modules (biaskit.cli.*) load lazily, so their light library imports went to module level, but none of them is
# listed: a command module is loaded for each of its commands' --help too, which must not load scipy or torch.
HEAVY_AT_IMPORT = {  # as before the hoisting (the same by scripts/hoist_imports.py's measure at commit 55bca92)
    "biaskit.annotate.agreement": {"pyarrow.compute"},
    "biaskit.annotate.groupvalidity": {"pyarrow.compute", "scipy"},
    "biaskit.annotate.rankstats": {"scipy"},
    "biaskit.annotate.validation": {"pyarrow.compute", "scipy"},
    "biaskit.datasets.stage": {"pyarrow.compute"},
    "biaskit.demo.stage_templates": {"pyarrow.compute"},
    "biaskit.templates.holistic": {"pyarrow.compute"},
    "biaskit.templates.holistic_plan": {"pyarrow.compute"},  # split out of holistic
}


@functools.cache
def _graph(src: Path):
    """The import graph of ``src``, built once per tree (the checks of the real tree share it; a planted tree is a
    new tmp folder, so it gets its own)."""
    return hoist.Graph.build(src)


#: source text -> (line, one single-alias import) for each alias of its in-function imports that are not under
#: ``if TYPE_CHECKING``; keyed by the text, so a planted copy of the tree parses only the file it changed
_ALIASES: dict[str, list[tuple[int, ast.Import | ast.ImportFrom]]] = {}


def _in_function_aliases(f: Path) -> list[tuple[int, ast.Import | ast.ImportFrom]]:
    text = f.read_text(encoding="utf-8")
    if text not in _ALIASES:
        found = [fd for fd in hoist.in_function_imports(ast.parse(text, str(f))) if fd.guarded != "under if TYPE_CHECKING"]
        _ALIASES[text] = [(fd.node.lineno, hoist._single(fd.node, alias)) for fd in found for alias in fd.node.names]
    return _ALIASES[text]


def light_in_function(src: Path) -> dict[str, list[int]]:
    """File (relative to ``src``) -> lines of its in-function imports (one per alias) that are not heavy."""
    graph = _graph(src)
    modules = set(graph.files)
    heavy = functools.cache(lambda names: graph.heavy(list(names)))  # the same targets recur in many modules
    out: dict[str, list[int]] = {}
    for mod, f in graph.files.items():
        is_pkg = f.name == "__init__.py"
        own = heavy((mod,))
        for line, node in _in_function_aliases(f):
            names = hoist.targets(node, mod, is_pkg, modules)
            if not heavy(tuple(names)) - own - hoist.LOADED_BY_CLI:
                out.setdefault(f.relative_to(src).as_posix(), []).append(line)
    return out


def ratchet_failures(src: Path, ceiling: dict[str, int]) -> list[str]:
    found = light_in_function(src)
    bad = []
    for file in sorted(set(found) | set(ceiling)):
        lines, cap = found.get(file, []), ceiling.get(file, 0)
        if len(lines) > cap:
            where = ", ".join(f"{file}:{n}" for n in lines)
            bad.append(
                f"{file}: {len(lines)} in-function imports of light libraries or biaskit modules (ceiling {cap}); "
                f"move the new one to the top of the module (python scripts/hoist_imports.py {file}): {where}"
            )
        elif len(lines) < cap:
            bad.append(
                f"{file}: {len(lines)} light in-function imports, fewer than its ceiling {cap}: lower "
                f"tests/fixtures/imports_ceiling.json to {len(lines)}"
            )
    return bad


def heavy_failures(src: Path) -> list[str]:
    graph = _graph(src)
    bad = []
    for mod in sorted(graph.files):
        extra = graph.heavy([mod]) - hoist.LOADED_BY_CLI - HEAVY_AT_IMPORT.get(mod, set())
        if extra:
            bad.append(f"{mod} loads {', '.join(sorted(extra))} at import: import it inside the function that needs it")
    return bad


def _copy_src(tmp_path: Path) -> Path:
    dst = tmp_path / "src"
    shutil.copytree(
        SRC / "biaskit", dst / "biaskit", ignore=lambda d, names: [n for n in names if n == "data" or n.endswith((".pyc", "__pycache__"))]
    )
    return dst


def test_in_function_imports_are_heavy_ones_only():
    assert ratchet_failures(SRC, CEILING) == []


def test_no_heavy_library_at_module_level():
    assert heavy_failures(SRC) == []


def test_a_planted_light_in_function_import_is_named(tmp_path):
    src = _copy_src(tmp_path)
    errors = src / "biaskit" / "errors.py"
    n = len(errors.read_text().splitlines())
    errors.write_text(errors.read_text() + "\n\ndef _planted():\n    import json\n\n    import torch\n\n    return json, torch\n")
    assert ratchet_failures(src, CEILING) == [
        "biaskit/errors.py: 1 in-function imports of light libraries or biaskit modules (ceiling 0); move the new one "
        f"to the top of the module (python scripts/hoist_imports.py biaskit/errors.py): biaskit/errors.py:{n + 4}"
    ]  # `import json` (n + 4: two blank lines, the def, then it); `import torch` is heavy and may stay


def test_a_planted_heavy_module_level_import_is_named(tmp_path):
    src = _copy_src(tmp_path)
    agg = src / "biaskit" / "evaluate" / "stats" / "aggregate.py"
    agg.write_text(agg.read_text().replace("from __future__ import annotations\n", "from __future__ import annotations\n\nimport pandas as pd\n", 1))
    bad = heavy_failures(src)
    # aggregate, and every module that imports it at module level, now load pandas
    assert "biaskit.evaluate.stats.aggregate loads pandas at import: import it inside the function that needs it" in bad
    assert all("loads pandas at import" in b for b in bad)


def _loaded(code: str) -> set[str]:
    script = code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    env = dict(os.environ, PYTHONPATH=str(SRC))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return set(r.stdout.split())


def test_cli_and_help_load_no_heavy_library():
    help_ = textwrap.dedent("""
        import contextlib, io, sys
        sys.argv = ["biaskit", "--help"]
        from biaskit.cli import main
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main()
    """)
    by_help = _loaded(help_)
    for code, loaded in (("import biaskit.cli", _loaded("import biaskit.cli")), (help_, by_help)):
        assert not loaded & (hoist.HEAVY - hoist.LOADED_BY_CLI), (code, sorted(loaded & hoist.HEAVY))
        for must_stay_out in ("torch", "transformers", "spacy", "ray"):
            assert must_stay_out not in loaded
    # the exemption holds only while --help loads them anyway
    assert hoist.LOADED_BY_CLI <= by_help


def test_count_takes_every_in_function_import_but_those_for_type_checking(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(
        textwrap.dedent("""
            import os
            from typing import TYPE_CHECKING


            def f():
                import json
                from pathlib import Path, PurePath

                if TYPE_CHECKING:
                    from collections import OrderedDict
                try:
                    import torch
                except ImportError:
                    torch = None
                return json, Path, PurePath, torch, os
        """)
    )
    # json, the pathlib statement (one statement, two names) and torch (heavy, guarded: still counted) = 3
    assert hoist.count_in_function([f]) == {f: 3}
    assert hoist.count_in_function([tmp_path / "m.py"]) == {f: 3} and hoist.count_in_function([]) == {}
