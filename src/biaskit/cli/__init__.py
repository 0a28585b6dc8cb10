"""The ``biaskit`` command line (typer).

Each command is a module-level function in its command module (importable and callable without typer) and a
thin wrapper over a library function; options shared by several commands are ``Annotated`` aliases in
:mod:`biaskit.cli.options`. A command module's ``register(app)`` only wires its functions to an app.

The command modules load lazily: ``biaskit --help`` and ``biaskit GROUP --help`` list the commands from the table
of :mod:`biaskit.cli.listing` without importing them, and a command module is imported (and its commands built)
only when one of its commands runs or shows its own help (:class:`biaskit.cli.group.LazyGroup`, :func:`biaskit.cli.group.command`). So a command module
may import its library at module level and ``biaskit --help`` stays fast; heavy libraries (torch, transformers,
spaCy, scipy, ...) stay inside command bodies, so a command's own ``--help`` stays fast too. User errors
(:class:`BiaskitError`) end in one line on stderr and exit status 1.
"""

from __future__ import annotations

import typer

from biaskit.cli import listing
from biaskit.cli.group import BiaskitGroup, no_bool_metavar, plain_usage_names

no_bool_metavar()
plain_usage_names()

app = typer.Typer(
    name="biaskit",
    cls=BiaskitGroup,
    help=(
        "Build, extend and validate social-bias evaluation datasets for language models.\n\n"
        "Stages: scrape (Wikipedia -> prompts), expand/templates, generate/fill-mask/likelihood, score, "
        "report, annotate, hub.\n\n"
        "Example: biaskit demo --out runs/demo"
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only warnings and errors; no progress bars."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging."),
) -> None:
    from biaskit.log import configure

    configure(quiet=quiet, verbose=verbose)


def sub_app(parent: typer.Typer, name: str, commands: dict | None = None) -> typer.Typer:
    """The command group ``name`` attached to ``parent`` (used by the command modules' ``register``), with
    ``commands`` (command name -> function) attached to it in this order. Its help is in
    :data:`biaskit.cli.listing.GROUPS`, which ``biaskit name --help`` shows."""
    sub = typer.Typer(name=name, help=listing.GROUPS.get(name), no_args_is_help=True, add_completion=False, rich_markup_mode="rich")
    parent.add_typer(sub, name=name)
    for cmd_name, function in (commands or {}).items():
        sub.command(cmd_name)(function)
    return sub


def main() -> None:  # console-script entry point
    app(prog_name="biaskit")


if __name__ == "__main__":  # pragma: no cover
    main()
