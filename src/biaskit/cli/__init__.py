"""The ``biaskit`` command line (typer).

Each command is a module-level function in its command module (importable and callable without typer) and a
thin wrapper over a library function; options shared by several commands are ``Annotated`` aliases in
:mod:`biaskit.cli.options`. A command module's ``register(app)`` only wires its functions to the app. Heavy
libraries are imported only inside command bodies, so ``biaskit --help`` stays fast and never imports torch,
transformers or spaCy. User errors (:class:`BiaskitError`) end in
one line on stderr and exit status 1.
"""

from __future__ import annotations

import importlib

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
    "biaskit.cli.cache",
    "biaskit.cli.report",
    "biaskit.cli.annotate",
    "biaskit.cli.train",
    "biaskit.cli.interop",
)


#: command parameters that name what a command writes: each is locked for the whole command (E140)
OUTPUT_PARAMS = ("out",)


def _lock_outputs(callback, command: str):
    """Wrap a command callback so it holds the exclusive lock on its output (``--out``) while it runs."""
    import functools

    @functools.wraps(callback)
    def locked(*args, **kwargs):
        outs = [kwargs[k] for k in OUTPUT_PARAMS if kwargs.get(k) is not None]
        if not outs:
            return callback(*args, **kwargs)
        from contextlib import ExitStack

        from biaskit.io import output_lock

        with ExitStack() as stack:
            for o in outs:
                stack.enter_context(output_lock(o, command=command))
            return callback(*args, **kwargs)

    locked._biaskit_locked = True  # type: ignore[attr-defined]  # a mark on the wrapper function
    return locked


def _install_output_locks(cmd, path: str = "biaskit") -> None:
    for name, sub in getattr(cmd, "commands", {}).items():
        if getattr(sub, "commands", None) is not None:
            _install_output_locks(sub, f"{path} {name}")
        elif sub.callback is not None and not getattr(sub.callback, "_biaskit_locked", False):
            sub.callback = _lock_outputs(sub.callback, f"{path} {name}")


class BiaskitGroup(TyperGroup):
    """Root group: turns BiaskitError into one line + exit code 1 (also under typer's CliRunner).

    Every command that writes ``--out`` holds that output's lock while it runs (:func:`biaskit.io.output_lock`),
    so two commands never write the same output at once: the second stops with E140 naming the first.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _install_output_locks(self)

    def main(self, *args, **kwargs):
        """Run the command line with stdout and stderr cleaned of secrets (the output layer,
        :func:`biaskit.output.redacting_streams`): every listing and message of every command, old or new."""
        from biaskit.output import redacting_streams

        with redacting_streams():
            return super().main(*args, **kwargs)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BiaskitError as exc:
            from biaskit.secrets import redact

            typer.echo(f"error{redact(str(exc)).replace(chr(10), ' ')}" if str(exc).startswith("[") else f"error: {redact(str(exc))}", err=True)
            raise typer.Exit(1) from None
        except OSError as exc:  # the file system refused a named path (too long, not a folder, no permission, disk full)
            if exc.filename is None:
                raise
            err = _os_error(exc)
            from biaskit.secrets import redact

            typer.echo(f"error{redact(str(err)).replace(chr(10), ' ')}", err=True)
            raise typer.Exit(1) from None


def _os_error(exc: OSError) -> BiaskitError:
    """A coded one-line error for an OSError about a path (E154 name too long, E156 other file system errors)."""
    import errno

    name = str(exc.filename)
    if exc.errno == errno.ENAMETOOLONG:
        return BiaskitError(
            "E154",
            "file name too long (most file systems allow 255 bytes per file or folder name, "
            "and biaskit adds a few for its temporary and manifest files)",
            value=name,
            fix="use a shorter file or folder name (at most about 200 characters)",
        )
    what = exc.strerror or type(exc).__name__
    return BiaskitError(
        "E156",
        f"cannot use the path: {what}",
        value=name,
        fix="check that the path exists, that its parent is a folder you can write to, and that the disk has space",
    )


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

    display_type_rich._biaskit = True  # type: ignore[attr-defined]  # a mark on the patch, so it is applied once
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]  # patches typer's method


def _plain_usage_names() -> None:
    """Typer's usage line writes a required argument as ``{samples}``, which reads as a template placeholder to fill
    in (braces included). Write it as click does: ``SAMPLES``, ``[OUT]`` when optional, ``FILES...`` for several."""
    from typer.core import TyperArgument

    if getattr(getattr(TyperArgument, "_usage_display_name", None), "_biaskit", False):
        return

    def _usage_display_name(self) -> str:
        name = self.metavar if self.metavar is not None else str(self.name).upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    _usage_display_name._biaskit = True  # type: ignore[attr-defined]  # a mark on the patch, so it is applied once
    TyperArgument._usage_display_name = _usage_display_name  # type: ignore[method-assign]  # patches typer's method


_no_bool_metavar()
_plain_usage_names()

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


def sub_app(name: str, help: str, commands: dict | None = None) -> typer.Typer:
    """A command group attached to the root app (used by the command modules), with ``commands``
    (command name -> function) attached to it in this order."""
    sub = typer.Typer(name=name, help=help, no_args_is_help=True, add_completion=False, rich_markup_mode="rich")
    app.add_typer(sub, name=name)
    for command, function in (commands or {}).items():
        sub.command(command)(function)
    return sub


for _mod in COMMAND_MODULES:
    importlib.import_module(_mod).register(app)


def main() -> None:  # console-script entry point
    app(prog_name="biaskit")


if __name__ == "__main__":  # pragma: no cover
    main()
