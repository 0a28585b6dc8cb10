"""The ``biaskit`` command line (typer).

Each command is a thin wrapper over a library function. Command modules register themselves through a
``register(app)`` function and import heavy libraries only inside command bodies, so ``biaskit --help``
stays fast and never imports torch, transformers or spaCy. User errors (:class:`BiaskitError`) end in
one line on stderr and exit status 1.
"""

from __future__ import annotations

import importlib
import sys

import typer
from typer.core import TyperGroup

from biaskit.errors import BiaskitError

COMMAND_MODULES = (
    "biaskit.cli.core",
    "biaskit.cli.scrape",
    "biaskit.cli.templates",
    "biaskit.cli.hub",
    "biaskit.cli.models",
    "biaskit.cli.metrics",
    "biaskit.cli.report",
    "biaskit.cli.annotate",
)


class BiaskitGroup(TyperGroup):
    """Root group: turns BiaskitError into one line + exit code 1 (also under typer's CliRunner)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BiaskitError as exc:
            from biaskit.secrets import redact

            typer.echo(f"error{redact(str(exc)).replace(chr(10), ' ')}" if str(exc).startswith("[") else f"error: {redact(str(exc))}", err=True)
            raise typer.Exit(1) from None


def _no_bool_metavar() -> None:
    """Typer's rich help prints the value type after every option, ``<bool>`` even after a flag that takes no
    value (``--overwrite <bool>``). Show no type for flags."""
    from typer.core import TyperOption

    if getattr(TyperOption.display_type_rich, "_biaskit", False):
        return
    orig = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None
        return orig(self, ctx)

    display_type_rich._biaskit = True
    TyperOption.display_type_rich = display_type_rich


_no_bool_metavar()

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


def sub_app(name: str, help: str) -> typer.Typer:
    """A command group attached to the root app (used by the command modules)."""
    sub = typer.Typer(name=name, help=help, no_args_is_help=True, add_completion=False, rich_markup_mode="rich")
    app.add_typer(sub, name=name)
    return sub


for _mod in COMMAND_MODULES:
    importlib.import_module(_mod).register(app)


def main() -> None:  # console-script entry point
    app(prog_name="biaskit")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
