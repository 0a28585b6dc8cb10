"""Logging and progress bars (rich), with secret redaction and a global quiet/verbose switch."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from biaskit.secrets import RedactingFilter

T = TypeVar("T")
_state = {"quiet": False, "verbose": False, "configured": False}

logger = logging.getLogger("biaskit")


def configure(quiet: bool = False, verbose: bool = False) -> None:
    _state["quiet"], _state["verbose"] = quiet, verbose
    if quiet:  # also silence the Hugging Face libraries' own tqdm bars (read when they are first imported)
        import os

        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    level = logging.WARNING if quiet else (logging.DEBUG if verbose else logging.INFO)
    logger.setLevel(level)
    if not _state["configured"]:
        from rich.logging import RichHandler

        handler = RichHandler(console=_console(), show_time=False, show_path=False, markup=False)
        handler.addFilter(RedactingFilter())
        logger.addHandler(handler)
        logger.propagate = False
        _state["configured"] = True


def _console():
    from rich.console import Console

    return Console(stderr=True)


def get_logger(name: str) -> logging.Logger:
    lg = logging.getLogger(name if name.startswith("biaskit") else f"biaskit.{name}")
    if not any(isinstance(f, RedactingFilter) for f in lg.filters):
        lg.addFilter(RedactingFilter())
    return lg


def quiet() -> bool:
    return bool(_state["quiet"])


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "working", disable: bool | None = None) -> Iterator[T]:
    """Iterate with a rich progress bar on stderr (hidden when quiet or not a terminal-ish stream)."""
    if disable is None:
        disable = quiet()
    if disable:
        yield from items
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=_console(),
        transient=not sys.stderr.isatty(),
        disable=disable,
    ) as bar:
        task = bar.add_task(desc, total=total)
        for item in items:
            yield item
            bar.advance(task)


class ProgressBar:
    """A manual progress bar for work advanced in uneven steps (``bar.advance(n)``)."""

    def __init__(self, total: int | None, desc: str = "working", disable: bool | None = None) -> None:
        self.total, self.desc = total, desc
        self.disable = quiet() if disable is None else disable
        self._p = None

    def __enter__(self) -> ProgressBar:
        if not self.disable:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._p = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=_console(),
                transient=not sys.stderr.isatty(),
            )
            self._p.__enter__()
            self._task = self._p.add_task(self.desc, total=self.total)
        return self

    def advance(self, n: int = 1) -> None:
        if self._p is not None:
            self._p.advance(self._task, n)

    def __exit__(self, *exc) -> None:
        if self._p is not None:
            self._p.__exit__(*exc)
