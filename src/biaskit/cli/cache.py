"""``biaskit cache info`` and ``biaskit cache clear``: the response cache folder of ``--cache DIR``."""

from __future__ import annotations

import typer

from biaskit.cli import sub_app
from biaskit.evaluate.cache import ResponseCache


def info(cache_dir: str = typer.Argument(..., help="The folder given as --cache to generate, likelihood, fill-mask or score.")) -> None:
    """Show what a response cache holds: entries per kind of answer, remembered weight hashes and its size.

    Example: biaskit cache info runs/cache
    """
    facts = ResponseCache(cache_dir, create=False).info()
    typer.echo(f"{facts['path']}: {facts['entries']} cached answers, {facts['weight_hashes']} remembered weight-file hashes, {facts['bytes']} bytes")
    for kind, n in facts["kinds"].items():
        typer.echo(f"  {kind}: {n}")


def clear(cache_dir: str = typer.Argument(..., help="The folder given as --cache.")) -> None:
    """Delete every cached answer and remembered weight hash of a response cache (the folder stays).

    Example: biaskit cache clear runs/cache
    """
    n = ResponseCache(cache_dir, create=False).clear()
    typer.echo(f"cleared {n} cached answers from {cache_dir}")


def register(app: typer.Typer) -> None:
    """Attach ``biaskit cache info|clear`` to the root app."""
    sub_app(app, "cache", {"info": info, "clear": clear})
