"""The command table of ``biaskit.cli.listing``: ``biaskit --help`` and ``biaskit GROUP --help`` list every command
from it without importing a command module, it cannot drift from the commands the modules register, and a command
built lazily behaves as one built at import did (output lock, typo suggestions)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from biaskit import cli
from biaskit.cli import group as cli_group
from biaskit.cli import listing

SRC = Path(__file__).resolve().parents[2] / "src"
#: what ``import biaskit.cli`` loads of cli/: the package, its groups and the table; no command module
NO_COMMAND_MODULE = ["biaskit.cli", "biaskit.cli.group", "biaskit.cli.listing"]
CLI_DIR = SRC / "biaskit" / "cli"


def _command_modules() -> list[str]:
    """The modules of cli/ that define ``register(app)``: every command module, listed in the table or not."""
    out = []
    for f in sorted(CLI_DIR.glob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name == "register" for n in tree.body):
            out.append(f.stem)
    return out


def _registered() -> tuple[list[tuple[str, str, str, str]], list[str]]:
    """(group, command, module, short help) of every command the modules attach, and the groups they create."""
    rows, groups = [], []
    for module in _command_modules():
        built = cli_group.module_commands(module)
        for name, cmd in built.commands.items():
            if hasattr(cmd, "list_commands"):
                groups.append(name)
                rows += [(name, sub, module, listing.short_help(c.help)) for sub, c in cmd.commands.items()]
            else:
                rows.append(("", name, module, listing.short_help(cmd.help)))
    return rows, groups


def test_the_table_lists_exactly_the_registered_commands_with_their_short_help():
    rows, groups = _registered()
    missing = sorted(set(rows) - set(listing.COMMANDS))
    stale = sorted(set(listing.COMMANDS) - set(rows))
    assert not missing and not stale, f"src/biaskit/data/cli/commands.json: add rows {missing}, remove rows {stale}"
    assert sorted(listing.COMMANDS) == sorted(rows)
    assert sorted(listing.GROUPS) == sorted(groups)
    assert len(set((g, n) for g, n, _, _ in listing.COMMANDS)) == len(listing.COMMANDS)


def test_short_help_is_the_first_sentence_of_the_first_paragraph():
    text = """Rebuild BBQ (Parrish et al. 2022) from its templates (e.g. the
    age ones). Second sentence.

    Example: biaskit expand bbq"""
    assert listing.short_help(text) == "Rebuild BBQ (Parrish et al. 2022) from its templates (e.g. the age ones)."
    assert listing.short_help("No full stop at all") == "No full stop at all"
    assert listing.short_help(None) == ""


def _run_cli(args: list[str]) -> tuple[str, list[str]]:
    """Run ``biaskit ARGS`` in a fresh interpreter: its stdout and the biaskit.cli modules it imported."""
    script = textwrap.dedent(f"""
        import contextlib, io, json, sys
        sys.argv = ["biaskit", *{args!r}]
        from biaskit.cli import main
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
            main()
        print(json.dumps([buf.getvalue(), sorted(m for m in sys.modules if m.startswith("biaskit.cli"))]))
    """)
    env = dict(os.environ, PYTHONPATH=str(SRC), COLUMNS="400")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    out, modules = json.loads(r.stdout.strip().splitlines()[-1])
    return out, modules


@pytest.mark.parametrize("group", ["", "stats", "annotate"])
def test_help_lists_the_commands_without_importing_a_command_module(group):
    out, modules = _run_cli([group, "--help"] if group else ["--help"])
    assert modules == NO_COMMAND_MODULE
    listed = [(n, s) for g, n, _, s in listing.COMMANDS if g == group]
    if not group:
        listed += [(n, listing.short_help(h)) for n, h in listing.GROUPS.items()]
    lines = [" ".join(line.strip("│ ").split()) for line in out.splitlines()]
    for name, short in listed:
        assert f"{name} {short}" in lines, (name, short)


def test_a_command_imports_its_own_module_only():
    out, modules = _run_cli(["cache", "--help"])
    assert modules == NO_COMMAND_MODULE
    out, modules = _run_cli(["cache", "info", "--help"])
    assert "Show what a response cache holds" in out
    assert [m for m in modules if m not in [*NO_COMMAND_MODULE, "biaskit.cli.options"]] == ["biaskit.cli.cache"]


def test_lazily_built_commands_that_write_out_hold_its_lock():
    root = typer.main.get_command(cli.app)
    ctx = root.context_class(root)
    checked = 0
    for group, name, _, _ in listing.COMMANDS:
        cmd = root.get_command(ctx, group).get_command(ctx, name) if group else root.get_command(ctx, name)
        assert getattr(cmd.callback, "_biaskit_locked", False), f"{group} {name}"
        checked += any(p.name == "out" for p in cmd.params)
    assert checked >= 30  # most commands write --out


def test_a_mistyped_command_gets_the_close_names_of_the_table():
    r = CliRunner().invoke(cli.app, ["stats", "zest"])
    assert r.exit_code == 2
    assert "No such command 'zest'. Did you mean 'ztest'?" in r.output


def test_a_table_row_its_module_does_not_register_is_named(monkeypatch):
    monkeypatch.setattr(listing, "COMMANDS", (*listing.COMMANDS, ("cache", "purge", "cache", "Purge.")))
    with pytest.raises(LookupError, match=r"names `cache purge` in biaskit.cli.cache, whose register\(\) does not attach it"):
        cli_group.command("cache", "purge")
    assert cli_group.command("cache", "no-such-row") is None
