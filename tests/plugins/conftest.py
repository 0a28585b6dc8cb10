"""Planting a plugin package: a module (or package folder) and a ``.dist-info`` folder with ``METADATA`` and
``entry_points.txt`` written into a fresh folder, which is then put on ``sys.path`` (in this process) or
``PYTHONPATH`` (for a CLI subprocess). ``importlib.metadata`` sees it as an installed distribution; no project
file is touched."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def doc_example(heading: str) -> tuple[str, dict[str, dict[str, str]]]:
    """(the code block, the entry points of the ``toml`` block) of the worked example under ``heading`` of
    docs/architecture.md: what the plugin tests plant is what the page shows."""
    text = DOC.read_text(encoding="utf-8")
    part = text[text.index(heading) + len(heading) :]
    part = part[: part.index("\n#")]
    blocks = re.findall(r"^```(\w+)\n(.*?)^```$", part, flags=re.S | re.M)
    code = next(body for lang, body in blocks if lang in ("python", "yaml"))
    toml = tomllib.loads(next(body for lang, body in blocks if lang == "toml"))
    return code, toml["project"]["entry-points"]


def plant(root: Path, dist: str, files: dict[str, str], entry_points: dict[str, dict[str, str]]) -> Path:
    """Write distribution ``dist`` into ``root``: ``files`` (path -> text, dedented) and its entry points
    (group -> {name: value}); returns ``root`` (the folder to put on the path)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
    eps = "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in names.items()) + "\n" for group, names in entry_points.items())
    (info / "entry_points.txt").write_text(eps, encoding="utf-8")
    return root


#: run in a fresh process with the planted folders on PYTHONPATH: each argv list through biaskit's CLI (typer's
#: CliRunner, one interpreter for all of them), printing [exit code, output] per command as JSON
CLI_SCRIPT = """
import contextlib, io, json, sys
from typer.testing import CliRunner
from biaskit.cli import app
out = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        r = CliRunner().invoke(app, argv)
    out.append([r.exit_code, r.output + err.getvalue() + (repr(r.exception) if r.exit_code not in (0, 1, 2) else "")])
print("\\n@@RESULTS@@" + json.dumps(out))
"""


def run_cli(sites: list[Path], commands: list[list[str]], cwd: Path) -> list[tuple[int, str]]:
    """Run ``commands`` through the CLI in one fresh process with ``sites`` on PYTHONPATH; (exit code, output) each."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, sites), *filter(None, [os.environ.get("PYTHONPATH")])])}
    r = subprocess.run([sys.executable, "-c", CLI_SCRIPT, json.dumps(commands)], env=env, capture_output=True, text=True, timeout=600, cwd=cwd)
    assert r.returncode == 0 and "@@RESULTS@@" in r.stdout, r.stdout + r.stderr
    return [(int(c), o) for c, o in json.loads(r.stdout.rsplit("@@RESULTS@@", 1)[1])]


@pytest.fixture
def isolated_registries(monkeypatch):
    """The backend and preset registries and the report sections as they are, restored after the test (a plugin
    registered in this process lasts for one test only); the next lookup loads the plugins on the path then."""
    import biaskit.evaluate.runners.builtin  # noqa: F401  (the built-ins registered before the copy)
    import biaskit.scrape.config  # noqa: F401
    from biaskit.evaluate.report import model
    from biaskit.registry import backends, plugin_loader, scrape_presets

    for reg, group in ((backends, "biaskit.backends"), (scrape_presets, "biaskit.scrape_presets")):
        for attr in ("_entries", "_loaded", "_help", "_origin"):
            monkeypatch.setattr(reg, attr, dict(getattr(reg, attr)))
        monkeypatch.setattr(reg, "_loaders", [plugin_loader(reg, group)])  # plugins load on the next lookup, as in a fresh process
    sections, origin, loaded = list(model.SECTIONS), dict(model.SECTION_ORIGIN), set(model._LOADED_PLUGINS)
    yield backends, scrape_presets
    model.SECTIONS[:] = sections  # in place: the report builder holds the same list
    model.SECTION_ORIGIN.clear()
    model.SECTION_ORIGIN.update(origin)
    model._LOADED_PLUGINS.clear()
    model._LOADED_PLUGINS.update(loaded)
