"""Logging and progress bars (rich), with secret redaction and a global quiet/verbose switch."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from rich.console import Console
from rich.logging import RichHandler
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from biaskit.secrets import RedactingFilter, redact

T = TypeVar("T")
_state = {"quiet": False, "verbose": False, "configured": False}

logger = logging.getLogger("biaskit")


def configure(quiet: bool = False, verbose: bool = False) -> None:
    _state["quiet"], _state["verbose"] = quiet, verbose
    if quiet:  # also silence the Hugging Face libraries' own tqdm bars (read when they are first imported)
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    level = logging.WARNING if quiet else (logging.DEBUG if verbose else logging.INFO)
    logger.setLevel(level)
    if not _state["configured"]:
        handler = RichHandler(console=_console(), show_time=False, show_path=False, markup=False)
        handler.addFilter(RedactingFilter())
        logger.addHandler(handler)
        logger.propagate = False
        _state["configured"] = True


def _console():
    return Console(stderr=True)


def get_logger(name: str) -> logging.Logger:
    lg = logging.getLogger(name if name.startswith("biaskit") else f"biaskit.{name}")
    if not any(isinstance(f, RedactingFilter) for f in lg.filters):
        lg.addFilter(RedactingFilter())
    return lg


def quiet() -> bool:
    return bool(_state["quiet"])


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "working", disable: bool | None = None) -> Iterator[T]:
    """Iterate with a rich progress bar on stderr (hidden when quiet; plain lines every few seconds when stderr is not
    a terminal: :class:`PlainProgress`)."""
    if disable is None:
        disable = quiet()
    if disable:
        yield from items
        return

    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    if not _interactive():
        plain = PlainProgress(total, desc)
        for item in items:
            yield item
            plain.advance()
        plain.close()
        return
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


#: seconds between two progress lines when stderr is not a terminal (``BIASKIT_PROGRESS_SECONDS`` overrides)
PLAIN_PROGRESS_SECONDS = 5.0


def _plain_interval() -> float:
    try:
        return max(0.0, float(os.environ.get("BIASKIT_PROGRESS_SECONDS", PLAIN_PROGRESS_SECONDS)))
    except ValueError:
        return PLAIN_PROGRESS_SECONDS


def _fmt_seconds(s: float) -> str:
    s = int(round(s))
    return f"{s} s" if s < 90 else (f"{s // 60} min {s % 60:02d} s" if s < 5400 else f"{s / 3600:.1f} h")


class PlainProgress:
    """Progress for a stderr that is not a terminal (a log file, CI, a pipe), where a live bar shows nothing until
    the end: one line every :func:`_plain_interval` seconds (``generating (smol): 120/600 (20%), 45 s, about
    3 min 00 s left``), and a last line when the work ends, if any line was written. Work that ends within the
    first interval writes nothing."""

    def __init__(self, total: int | None, desc: str, *, interval: float | None = None, clock=None, stream=None) -> None:
        self.total, self.desc, self.done, self.lines = total, desc, 0, 0
        self.interval = _plain_interval() if interval is None else interval
        self.clock = clock or time.monotonic
        self.stream = stream
        self.t0 = self.last = self.clock()
        self._lock = threading.Lock()

    def _line(self, now: float, final: bool = False) -> str:
        el = now - self.t0
        head = f"{self.desc}: {self.done}" + (f"/{self.total}" if self.total else "")
        if self.total and not final:
            left = el / self.done * (self.total - self.done) if self.done else None
            pct = f" ({100 * self.done / self.total:.0f}%)"
            return head + pct + f", {_fmt_seconds(el)}" + (f", about {_fmt_seconds(left)} left" if left is not None else "")
        return head + (f" done in {_fmt_seconds(el)}" if final else f", {_fmt_seconds(el)}")

    def _write(self, text: str) -> None:
        stream = self.stream or sys.stderr
        stream.write(redact(text) + "\n")
        stream.flush()
        self.lines += 1

    def advance(self, n: int = 1) -> None:
        self.done += n
        self.tick()

    def tick(self) -> None:
        """A line when an interval has passed since the last one, whether or not work was done since (the heartbeat
        of :class:`ProgressBar` calls it while a long first batch runs: ``generating (smol): 0/32 (0%), 5 s``)."""
        with self._lock:
            now = self.clock()
            if now - self.last >= self.interval:
                self.last = now
                self._write(self._line(now))

    def close(self) -> None:
        with self._lock:
            if self.lines:
                self._write(self._line(self.clock(), final=True))


def _interactive() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class ProgressBar:
    """A manual progress bar for work advanced in uneven steps (``bar.advance(n)``): a live bar on a terminal,
    else :class:`PlainProgress` lines every few seconds. Off a terminal a heartbeat thread writes the line even
    while no step ends (a first batch of 16 generations that takes minutes): progress shows from the first batch."""

    def __init__(self, total: int | None, desc: str = "working", disable: bool | None = None) -> None:
        self.total, self.desc = total, desc
        self.disable = quiet() if disable is None else disable
        self._p: Any = None  # the rich Progress, on a terminal
        self._plain: PlainProgress | None = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def _heartbeat(self, plain: PlainProgress) -> None:
        while not self._stop.wait(min(1.0, max(plain.interval / 4, 0.01))):
            plain.tick()

    def __enter__(self) -> ProgressBar:
        if not self.disable and not _interactive():
            self._plain = PlainProgress(self.total, self.desc)
            if self._plain.interval > 0:
                self._beat = threading.Thread(target=self._heartbeat, args=(self._plain,), name="biaskit-progress", daemon=True)
                self._beat.start()
        elif not self.disable:
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
        if self._plain is not None:
            self._plain.advance(n)
        if self._p is not None:
            self._p.advance(self._task, n)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        if self._plain is not None and exc[0] is None:
            self._plain.close()
        if self._p is not None:
            self._p.__exit__(*exc)
