"""Help pages. No ``<bool>`` after flags; every ``Example:`` in every help page parses against its
command (known options, valid values); the offline ones that need no input files run."""

from __future__ import annotations

import re
import shlex

import pytest
import typer
from typer.testing import CliRunner

from biaskit.cli import app

runner = CliRunner()


def _is_group(cmd) -> bool:
    return hasattr(cmd, "list_commands")  # typer vendors its own click: no isinstance against click.Group


def _commands(group, path=()):
    ctx = group.context_class(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if _is_group(cmd):
            yield from _commands(cmd, (*path, name))
        else:
            yield (*path, name), cmd


ROOT = typer.main.get_command(app)
COMMANDS = dict(_commands(ROOT))


def _examples():
    out = []
    for path, cmd in [((), ROOT), *COMMANDS.items()]:
        for line in (cmd.help or "").splitlines():
            m = re.match(r"\s*Example[^:]*:\s*(.+)$", line)
            if not m:
                continue
            for part in re.split(r"\s*(?:;|&&)\s*", m.group(1)):
                words = shlex.split(part)
                while words and re.match(r"^[A-Z_]+=", words[0]):
                    words = words[1:]  # HF_TOKEN=... biaskit ...
                if words and words[0] == "biaskit":
                    out.append((" ".join(path) or "biaskit", words[1:]))
    return out


EXAMPLES = _examples()


def _leaf(args):
    cmd, rest, path = ROOT, list(args), []
    while _is_group(cmd) and rest and not rest[0].startswith("-"):
        path.append(rest[0])
        cmd = cmd.get_command(cmd.context_class(cmd), rest.pop(0))
        assert cmd is not None, f"no command {' '.join(path)}"
    return cmd, rest


def test_every_help_page_has_examples_and_they_were_found():
    assert len(EXAMPLES) >= 60
    with_examples = {where for where, _ in EXAMPLES}
    missing = [" ".join(p) for p in COMMANDS if " ".join(p) not in with_examples]
    assert missing == [], f"commands without a runnable example in their help: {missing}"


@pytest.mark.parametrize("where,args", EXAMPLES, ids=[f"{w}: {' '.join(a)[:60]}" for w, a in EXAMPLES])
def test_every_example_parses_against_its_command(where, args):
    cmd, rest = _leaf(args)
    ctx = cmd.make_context(cmd.name, list(rest))  # raises on an unknown option or a bad value
    assert ctx.params is not None


@pytest.mark.parametrize(
    "args",
    [
        ["assets"],
        ["metrics", "list"],
        ["schema", "prompts"],
        ["annotate", "rounds"],
        ["annotate", "tasks", "regard", "--config"],
        ["templates", "validate", "cs", "pl", "sk"],
        ["templates", "show", "cs", "--id", "work-02"],
        ["version"],
    ],
)
def test_offline_examples_run_as_printed(args):
    assert any(a == args for _, a in EXAMPLES), f"{args} is not an example of the help any more"
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("path", [p for p in COMMANDS] + [()])
def test_no_type_shown_after_flags(path):
    r = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "160"})
    assert r.exit_code == 0
    assert "<bool>" not in r.output
    if path == ("fill-mask",):
        # options that take a value still show their type
        assert re.search(r"--top-k\s+-k\s+<int>", r.output) and re.search(r"--whole-word\s+Only whole words", r.output)


@pytest.mark.parametrize("path", [p for p in COMMANDS] + [()])
def test_usage_line_shows_no_placeholder_braces(path):
    """Typer writes a required argument as ``{samples}`` in the usage line; biaskit writes ``SAMPLES``."""
    r = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    usage = next(line for line in r.output.splitlines() if "Usage:" in line)
    assert "{" not in usage and "}" not in usage, usage
    cmd = COMMANDS.get(path)
    args = [p for p in (cmd.params if cmd is not None else []) if p.param_type_name == "argument"]
    for a in args:  # each argument by its upper-case name: SAMPLES, [OUT] when optional, TABLES... for several
        name = a.name.upper() if a.required else f"[{a.name.upper()}]"
        assert name + ("..." if a.nargs != 1 else "") in usage, usage


def test_annotate_push_help_has_a_parsing_example():
    r = runner.invoke(app, ["annotate", "push", "--help"], env={"COLUMNS": "200"})
    assert "Usage: biaskit annotate push [OPTIONS] SAMPLES" in r.output
    pushes = [a for where, a in EXAMPLES if where == "annotate push"]
    assert pushes and all(a[:2] == ["annotate", "push"] for a in pushes)
    assert ["annotate", "push", "r1/samples.parquet", "--url", "http://localhost:8080", "--annotators", "3"] in pushes
