"""A small registry of named implementations, imported lazily.

Entries are ``"package.module:attribute"`` strings, so listing or registering never imports heavy
libraries; :meth:`Registry.get` imports on first use. Unknown names raise a coded error with
"did you mean" suggestions.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from pathlib import PurePath
from typing import Any

from biaskit.errors import BiaskitError


class Registry:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, str | Any] = {}
        self._loaded: dict[str, Any] = {}
        self._help: dict[str, str] = {}
        self._loaders: list[Callable[[], Any]] = []
        self._origin: dict[str, str] = {}

    def add_loader(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` (e.g. the plugin loader) on the first lookup, not now: plugins load on first use, so a
        broken or clashing plugin never breaks ``biaskit --help`` or a command that needs no registry."""
        self._loaders.append(fn)

    def _load(self) -> None:
        while self._loaders:
            fn = self._loaders.pop(0)  # (taken off first: the loader itself looks names up)
            try:
                fn()
            except BaseException:
                self._loaders.insert(0, fn)  # the same coded error again at the next lookup
                raise

    def register(self, name: str, target: str | Any | None = None, *, help: str = "", origin: str = "biaskit") -> Callable | Any:
        """Register ``target`` (an object or a lazy ``"module:attr"`` string) under ``name``; ``origin`` is the
        package it comes from (named by the clash error of :func:`load_entry_points`).

        Used as a decorator when ``target`` is omitted.
        """
        if not name or name != name.strip():
            raise ValueError(f"registry names must be non-empty without surrounding spaces, got {name!r}")

        def _do(obj: Any) -> Any:
            if name in self._entries and self._entries[name] is not obj and self._entries[name] != obj:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._entries[name] = obj
            self._help[name] = help
            self._origin[name] = origin
            if not isinstance(obj, str):
                self._loaded[name] = obj
            return obj

        if target is None:
            return _do
        return _do(target)

    def names(self) -> list[str]:
        self._load()
        return sorted(self._entries)

    def in_order(self) -> list[str]:
        """The names in the order they were registered (built-ins first, then plugins)."""
        self._load()
        return list(self._entries)

    def target(self, name: str) -> str | Any:
        """What ``name`` was registered with (a lazy ``"module:attr"`` string or the object)."""
        self._load()
        return self._entries[name]

    def origin(self, name: str) -> str:
        """The package ``name`` was registered by (``biaskit`` for a shipped one, else the plugin's distribution)."""
        self._load()
        return self._origin.get(name, "biaskit")

    def help(self, name: str) -> str:
        self._load()
        return self._help.get(name, "")

    def __contains__(self, name: str) -> bool:
        self._load()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(self.names())

    def suggest(self, name: str, n: int = 3) -> list[str]:
        self._load()
        lower = {k.lower(): k for k in self._entries}
        close = difflib.get_close_matches(name.lower(), list(lower), n=n, cutoff=0.5)
        return [lower[c] for c in close]

    def get(self, name: str) -> Any:
        self._load()
        if name not in self._entries:
            sugg = self.suggest(name)
            fix = f"did you mean {', '.join(repr(s) for s in sugg)}?" if sugg else f"choose one of the registered {self.kind}s"
            raise BiaskitError("E020", f"unknown {self.kind}", value=name, options=self.names(), fix=fix)
        if name not in self._loaded:
            target = self._entries[name]
            module_name, _, attr = target.partition(":")
            module = importlib.import_module(module_name)
            obj = module
            for part in attr.split(".") if attr else []:
                obj = getattr(obj, part)
            self._loaded[name] = obj
        return self._loaded[name]


def load_entry_points(reg: Registry, group: str) -> list[str]:
    """Register on ``reg`` what the installed packages declare in the entry-point group ``group`` (each as its
    lazy ``"module:attr"`` string: nothing is imported here); returns the names added. The same entry seen twice
    (one package on two paths) is no error; a name registered already to something else is E240 naming both
    packages, both targets and the fix."""
    added = []
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
        if ep.name in reg._entries:
            if reg._entries[ep.name] == ep.value:
                continue
            other = reg._origin.get(ep.name, "biaskit")
            raise BiaskitError(
                "E240",
                f"the {reg.kind} name {ep.name!r} of {dist} ({ep.value}) is registered already by {other} ({reg._entries[ep.name]})",
                value=ep.name,
                options=[dist, other],
                fix=f'rename the entry point in {dist}\'s [project.entry-points."{group}"], or uninstall one of {dist} and {other}',
            )
        reg.register(ep.name, ep.value, help=f"plugin from {dist}", origin=dist)
        added.append(ep.name)
    return added


def plugin_loader(reg: Registry, group: str) -> Callable[[], list[str]]:
    """A loader for :meth:`Registry.add_loader`: the entry points of ``group`` registered on first lookup."""
    return lambda: load_entry_points(reg, group)


#: registry of metric classes (see biaskit.evaluate.metrics); plugins: the ``biaskit.metrics`` entry points
metrics = Registry("metric")
#: registry of model backends (see biaskit.evaluate.runners); plugins: the ``biaskit.backends`` entry points
backends = Registry("model backend")
#: registry of scrape presets (shipped domain configs, see biaskit.scrape.config): name -> ``"package:file.yaml"``;
#: plugins: the ``biaskit.scrape_presets`` entry points
scrape_presets = Registry("scrape preset")


def is_path_spec(spec: str) -> bool:
    """Whether a command-line value names a file or folder rather than a shipped name (``bold``, ``demo``, ``cs``).

    A value is a path when it contains a path separator or has a suffix (``my.yaml``, ``./demo``, ``runs/x``).
    Shipped names never contain either, so a local folder called ``demo`` never shadows the shipped ``demo``
    config, and a shipped name never hides a file given as ``./demo`` or by an explicit ``--config-file``.
    """
    s = str(spec)
    return "/" in s or os.sep in s or (os.altsep is not None and os.altsep in s) or PurePath(s).suffix != ""
