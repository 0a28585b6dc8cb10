"""The click groups of ``biaskit``: the lazy command groups (:class:`LazyGroup`, the root :class:`BiaskitGroup`),
the output locks of the commands that write ``--out``, one-line errors, and two fixes of typer's help.

``import biaskit.cli`` imports this module and ``biaskit --help`` runs it, so it imports nothing that loads a command
module or a heavy library: a command module is imported by :func:`module_commands` when one of its commands is
asked for.
"""

from __future__ import annotations

import difflib
import errno
import functools
import importlib
from contextlib import ExitStack

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from biaskit.cli import listing
from biaskit.errors import BiaskitError
from biaskit.output import redacting_streams
from biaskit.secrets import redact

#: command parameters that name what a command writes: each is locked for the whole command (E140)
OUTPUT_PARAMS = ("out",)


def lock_outputs(callback, command: str):
    """Wrap a command callback so it holds the exclusive lock on its output (``--out``) while it runs."""

    @functools.wraps(callback)
    def locked(*args, **kwargs):
        outs = [kwargs[k] for k in OUTPUT_PARAMS if kwargs.get(k) is not None]
        if not outs:
            return callback(*args, **kwargs)
        from biaskit.io import output_lock

        with ExitStack() as stack:
            for o in outs:
                stack.enter_context(output_lock(o, command=command))
            return callback(*args, **kwargs)

    locked._biaskit_locked = True  # type: ignore[attr-defined]  # a mark on the wrapper function
    return locked


def install_output_locks(cmd, path: str = "biaskit") -> None:
    for name, sub in getattr(cmd, "commands", {}).items():
        if getattr(sub, "commands", None) is not None:
            install_output_locks(sub, f"{path} {name}")
        elif sub.callback is not None and not getattr(sub.callback, "_biaskit_locked", False):
            sub.callback = lock_outputs(sub.callback, f"{path} {name}")


#: ``ctx.meta`` key set while a group formats its help: its listing reads the table, not the command modules
_LISTING = "biaskit.cli.listing"


class LazyGroup(TyperGroup):
    """A command group whose commands are the rows of :data:`biaskit.cli.listing.COMMANDS` for ``group`` (the
    root: group ``""`` and the groups of :data:`~biaskit.cli.listing.GROUPS`), plus any command attached to it
    directly. Its help lists the table's names and short helps without importing a command module; asking for a
    command (to run it or show its help) imports its module once (:func:`command`)."""

    def __init__(self, *args, group: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.group = group

    def list_commands(self, ctx) -> list[str]:
        names = listing_names(self.group)
        return [*names, *(n for n in self.commands if n not in names)]

    def get_command(self, ctx, cmd_name: str):
        if ctx is not None and ctx.meta.get(_LISTING):
            short = listing_short_help(self.group, cmd_name)
            if short is not None:  # a stand-in with the table's line: listing imports no command module
                return TyperCommand(name=cmd_name, short_help=short)
        if cmd_name not in self.commands:
            found = command(self.group, cmd_name)
            if found is None:
                return None
            self.commands[cmd_name] = found
        return self.commands[cmd_name]

    def format_help(self, ctx, formatter):
        ctx.meta[_LISTING] = True
        try:
            return super().format_help(ctx, formatter)
        finally:
            ctx.meta.pop(_LISTING, None)

    def resolve_command(self, ctx, args):
        try:
            return super().resolve_command(ctx, args)
        except Exception as e:  # typer's UsageError (of the click it vendors) suggests among built commands only
            message = getattr(e, "message", None)
            if args and isinstance(message, str) and message.startswith("No such command") and "Did you mean" not in message:
                close = difflib.get_close_matches(args[0], self.list_commands(ctx))
                if close:
                    e.message = f"{message.rstrip('.')}. Did you mean {', '.join(repr(m) for m in close)}?"
            raise


def listing_names(group: str) -> list[str]:
    """The commands of ``group`` in the table's order (the root: its commands, then the groups)."""
    names = [name for g, name, _, _ in listing.COMMANDS if g == group]
    return names + list(listing.GROUPS) if group == "" else names


def listing_short_help(group: str, name: str) -> str | None:
    """The table's one-line help of ``group name`` (a group's: the first sentence of its help); None: not listed."""
    if group == "" and name in listing.GROUPS:
        return listing.short_help(listing.GROUPS[name])
    return next((short for g, n, _, short in listing.COMMANDS if (g, n) == (group, name)), None)


def command(group: str, name: str):
    """The click command ``biaskit [group] name`` (a :class:`LazyGroup` for a group of the table), its module
    imported and its commands built on first use; None when the table has no such command."""
    if group == "" and name in listing.GROUPS:
        return LazyGroup(name=name, group=name, help=listing.GROUPS[name], no_args_is_help=True, rich_markup_mode="rich")
    module = next((m for g, n, m, _ in listing.COMMANDS if (g, n) == (group, name)), None)
    if module is None:
        return None
    built = module_commands(module)
    found = built.commands.get(group).commands.get(name) if group else built.commands.get(name)
    if found is None:
        raise LookupError(  # a row of the table that its module does not register: a bug, not a user error
            f"biaskit.cli.listing.COMMANDS names `{f'{group} {name}'.strip()}` in biaskit.cli.{module}, whose register() "
            "does not attach it: attach it there or correct the row"
        )
    return found


@functools.cache
def module_commands(module: str):
    """The click commands a command module's ``register(app)`` attaches (one root group holding its top-level
    commands and its groups), built once, each writing command holding its output lock."""
    app_ = typer.Typer(add_completion=False, rich_markup_mode="rich")
    app_.callback()(_no_options)  # a callback makes typer build a group even for a module with one command
    importlib.import_module(f"biaskit.cli.{module}").register(app_)
    built = typer.main.get_command(app_)
    install_output_locks(built)
    return built


def _no_options() -> None:
    """The callback of a command module's own app: none of its options; biaskit's are on the root."""


class BiaskitGroup(LazyGroup):
    """Root group: turns BiaskitError into one line + exit code 1 (also under typer's CliRunner).

    Every command that writes ``--out`` holds that output's lock while it runs (:func:`biaskit.io.output_lock`),
    so two commands never write the same output at once: the second stops with E140 naming the first.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        install_output_locks(self)

    def main(self, *args, **kwargs):
        """Run the command line with stdout and stderr cleaned of secrets (the output layer,
        :func:`biaskit.output.redacting_streams`): every listing and message of every command, old or new."""
        with redacting_streams():
            return super().main(*args, **kwargs)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BiaskitError as exc:
            typer.echo(f"error{redact(str(exc)).replace(chr(10), ' ')}" if str(exc).startswith("[") else f"error: {redact(str(exc))}", err=True)
            raise typer.Exit(1) from None
        except OSError as exc:  # the file system refused a named path (too long, not a folder, no permission, disk full)
            if exc.filename is None:
                raise
            err = os_error(exc)
            typer.echo(f"error{redact(str(err)).replace(chr(10), ' ')}", err=True)
            raise typer.Exit(1) from None


def os_error(exc: OSError) -> BiaskitError:
    """A coded one-line error for an OSError about a path (E154 name too long, E156 other file system errors)."""
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


def no_bool_metavar() -> None:
    """Typer's rich help prints the value type after every option, ``<bool>`` even after a flag that takes no
    value (``--overwrite <bool>``). Show no type for flags."""
    if getattr(TyperOption.display_type_rich, "_biaskit", False):
        return
    orig = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None
        return orig(self, ctx)

    display_type_rich._biaskit = True  # type: ignore[attr-defined]  # a mark on the patch, so it is applied once
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]  # patches typer's method


def plain_usage_names() -> None:
    """Typer's usage line writes a required argument as ``{samples}``, which reads as a template placeholder to fill
    in (braces included). Write it as click does: ``SAMPLES``, ``[OUT]`` when optional, ``FILES...`` for several."""
    if getattr(getattr(TyperArgument, "_usage_display_name", None), "_biaskit", False):
        return

    def _usage_display_name(self) -> str:
        name = self.metavar if self.metavar is not None else str(self.name).upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    _usage_display_name._biaskit = True  # type: ignore[attr-defined]  # a mark on the patch, so it is applied once
    TyperArgument._usage_display_name = _usage_display_name  # type: ignore[method-assign]  # patches typer's method


no_bool_metavar()
plain_usage_names()
