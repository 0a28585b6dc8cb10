"""Every command line in docs/*.md runs on the bundled data after the commands before it, or is
visibly marked with what it needs that biaskit does not ship: a trailing ``# needs: ...`` comment on the line
(``# needs: your file``, ``network``, ``a Label Studio server``, ``a GPU``, ...), or ``# needs: ...`` as the first
line of its code block (the whole block). Each doc runs in its own folder holding a copy of a quick demo run as
``runs/demo`` (so no doc writes over another doc's inputs) and links to ``src/`` and ``tests/``."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
_FENCE = re.compile(r"^```(bash|sh|shell)\n(.*?)^```", re.S | re.M)
_NEEDS = re.compile(r"#\s*needs:\s*(.+)$")


def doc_commands(path: Path) -> list[tuple[int, str, str | None]]:
    """(line number, command, what it needs or None) for every command line of ``path``'s bash blocks, in order;
    backslash continuations joined; comment-only lines left out."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        start = text[: m.start(2)].count("\n") + 1
        lines = m.group(2).splitlines()
        first = next((ln for ln in lines if ln.strip()), "")
        block_needs = _NEEDS.match(first.strip())
        i = 0
        while i < len(lines):
            ln, no = lines[i], start + i
            while ln.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                ln = ln.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
            s = ln.strip()
            if not s or s.startswith("#"):
                continue
            needs = _NEEDS.search(s)
            out.append((no, s, block_needs.group(1) if block_needs else (needs.group(1) if needs else None)))
    return out


def test_every_doc_command_is_runnable_or_marked():
    # the parse itself: each command is either run by the test below or says what it needs; a marker names
    # something concrete
    total = [c for p in DOCS for c in doc_commands(p)]
    assert len(total) >= 60
    for _, cmd, needs in total:
        if needs is not None:
            assert len(needs.strip()) >= 5, cmd
    runnable = [c for c in total if c[2] is None]
    assert len(runnable) >= 25, runnable


def cli_usage_error(argv: list[str]) -> str | None:
    """The CLI's usage error for ``biaskit ARGV`` (an unknown command, a missing or extra argument, an unknown
    option), found by parsing only: nothing runs and no file is read; None when the line parses."""
    import typer

    from biaskit.cli import app

    click_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    cmd: Any = typer.main.get_command(app)
    ctx = typer.Context(cmd, info_name="biaskit")
    rest = list(argv)
    while hasattr(cmd, "get_command"):  # a group: skip its own options, descend into the named command
        while rest and rest[0].startswith("-"):
            rest.pop(0)
        sub = cmd.get_command(ctx, rest[0]) if rest else None
        if sub is None:
            return f"no command {rest[0]!r}" if rest else "no command named"
        ctx = typer.Context(sub, info_name=rest[0], parent=ctx)
        cmd, rest = sub, rest[1:]
    try:
        cmd.make_context(ctx.info_name, rest, parent=ctx.parent)
    except typer.Exit:  # --help
        return None
    except click_error as exc:
        return exc.format_message()
    return None


def test_every_biaskit_command_in_the_docs_parses_also_the_ones_marked_needs():
    """A command marked ``# needs:`` does not run here, but it must still be a command the CLI takes: its
    arguments and options parse (``biaskit report a.parquet b.parquet --out r`` did not: report takes one folder)."""
    checked, bad = 0, []
    for p in DOCS:
        for no, cmd, needs in doc_commands(p):
            # a marker that names the prior command making what is needed (`biaskit annotate pull`) names a real one
            for named in re.findall(r"`biaskit ([a-z][a-z -]*?)`", needs or ""):
                if cli_usage_error([*named.split(), "--help"]):
                    bad.append(f"docs/{p.name}:{no}: # needs: names `biaskit {named}`, which is no command")
            try:
                argv = shlex.split(cmd.split(" #")[0])
            except ValueError:
                continue
            if not argv or argv[0] != "biaskit" or any(t in argv for t in ("|", "&&", ";", ">")):
                continue
            checked += 1
            err = cli_usage_error(argv[1:])
            if err:
                bad.append(f"docs/{p.name}:{no}: {cmd}: {err}")
    assert checked >= 100 and not bad, bad
    assert "unexpected extra argument" in cli_usage_error(["report", "a.parquet", "b.parquet", "--out", "r"])
    assert cli_usage_error(["nosuch", "x"]) == "no command 'nosuch'"
    assert cli_usage_error(["report", "runs/demo", "--out", "r"]) is None
    assert cli_usage_error(["annotate", "pull", "--help"]) is None and cli_usage_error(["annotate", "fetch", "--help"])


@pytest.mark.slow
@pytest.mark.parametrize("doc", [p.name for p in DOCS if any(n is None for _, _, n in doc_commands(p))])
def test_doc_commands_run_in_order(doc, quick_demo, tmp_path):
    run_dir, _ = quick_demo
    (tmp_path / "runs").mkdir()
    shutil.copytree(run_dir, tmp_path / "runs" / "demo", symlinks=True)
    for name in ("src", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = dict(
        os.environ,
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        HF_HUB_OFFLINE="1",
        BIASKIT_CACHE=os.environ.get("BIASKIT_CACHE", str(Path.home() / ".cache" / "biaskit")),
        BIASKIT_ANNOTATION_LEDGER=str(tmp_path / "rounds.jsonl"),
    )
    env.pop("HF_TOKEN", None)
    ran = 0
    for no, cmd, needs in doc_commands(ROOT / "docs" / doc):
        if needs is not None:
            continue
        r = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"docs/{doc}:{no}: {cmd}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
        ran += 1
    assert ran
    if doc == "metrics.md":
        # the documented rescoring writes a new file, the demo's scores (with the Wikipedia baselines) stay
        import pyarrow.parquet as pq

        assert pq.read_table(tmp_path / "runs" / "demo" / "scores.parquet").column("model").to_pylist().count("wikipedia") > 0
