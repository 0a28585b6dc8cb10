"""CLI commands are module-level functions: importable, callable without typer, and short."""

from __future__ import annotations

import ast
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import biaskit.cli as cli_pkg

CLI_DIR = Path(cli_pkg.__file__).parent


def test_commands_are_importable_and_callable_directly(capsys, tmp_path):
    from biaskit import __version__
    from biaskit.cli.core import schema, version

    version()
    assert capsys.readouterr().out.strip() == __version__
    schema(stage="prompts", check=None)
    out = capsys.readouterr().out
    assert "prompt_id" in out and "text" in out


def test_command_function_checks_a_table(capsys, tmp_path):
    from biaskit.cli.core import schema
    from biaskit.errors import BiaskitError

    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"x": [1]}), bad)
    try:
        schema(stage="prompts", check=bad)
    except BiaskitError as exc:  # the same coded error the CLI prints
        assert exc.code == "E001"
    else:  # pragma: no cover
        raise AssertionError("a table without the prompts columns passed --check")


def test_register_only_wires():
    """No command is defined inside register(): each one is a top-level function of its module."""
    for f in sorted(CLI_DIR.glob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "register":
                nested = [n.name for n in ast.walk(node) if isinstance(n, ast.FunctionDef) and n is not node]
                assert not nested, f"{f.name}: functions defined inside register(): {nested}"


def test_no_cli_function_longer_than_sixty_lines():
    """A command's body (after its option declarations and docstring) stays under ~60 lines: logic lives in library functions."""
    long = []
    for f in sorted(CLI_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the help text
            n = node.end_lineno - body[0].lineno + 1 if body else 0
            if n > 65:  # "about 60": a few lines of slack for the formatter
                long.append(f"{f.name}:{node.name} ({n} lines)")
    assert not long, long


def test_a_grouped_command_takes_its_option_group_as_one_dict():
    """An OptionGroup parameter stands, in the signature typer reads, as the group's options at its place; a call
    (through typer or directly) hands the command their values as one dict, the defaults where not given."""
    import inspect
    from typing import Annotated

    import typer
    from typer.testing import CliRunner

    from biaskit.cli.options import OptionGroup, grouped

    group = OptionGroup(
        alpha=(Annotated[int, typer.Option("--alpha", help="A.")], 1), beta=(Annotated[str | None, typer.Option("--beta", help="B.")], None)
    )
    seen = []

    @grouped
    def cmd(first: str = typer.Option("x", "--first"), opts: dict = group, last: bool = typer.Option(False, "--last")) -> None:
        seen.append((first, opts, last))

    assert list(inspect.signature(cmd).parameters) == ["first", "alpha", "beta", "last"]
    cmd(first="y", beta="b", last=True)
    assert seen[-1] == ("y", {"alpha": 1, "beta": "b"}, True)
    app = typer.Typer()
    app.command()(cmd)
    r = CliRunner().invoke(app, ["--alpha", "3", "--last"])
    assert r.exit_code == 0, r.output
    assert seen[-1] == ("x", {"alpha": 3, "beta": None}, True)
    help_text = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
    assert help_text.index("--first") < help_text.index("--alpha") < help_text.index("--beta") < help_text.index("--last")


def _option_declarations(flag: str) -> list[str]:
    """``file:line`` of every ``typer.Option(...)`` in cli/ whose flags include ``flag``."""
    found = []
    for f in sorted(CLI_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Option":
                if any(isinstance(a, ast.Constant) and isinstance(a.value, str) and flag in a.value.split("/") for a in node.args):
                    found.append(f"{f.name}:{node.lineno}")
    return found


def test_the_model_options_are_declared_once_in_options():
    """--device, --dtype and the model's --revision are one declaration each (cli/options.py), reused by every
    command; `hub push`/`hub load` keep their own --revision (a dataset branch or revision, another option)."""
    assert [d.split(":")[0] for d in _option_declarations("--device")] == ["options.py"]
    assert [d.split(":")[0] for d in _option_declarations("--dtype")] == ["options.py"]
    assert sorted(d.split(":")[0] for d in _option_declarations("--revision")) == ["hub.py", "hub.py", "options.py"]
