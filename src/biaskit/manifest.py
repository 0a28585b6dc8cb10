"""Run manifests: what produced an output, from what, with which versions and seed.

Written as ``<output>.manifest.json`` next to every table biaskit writes (and ``manifest.json`` in run
folders). Secrets never enter a manifest: keys that look like credentials are dropped and values that
equal a known secret from the environment are redacted (see :mod:`biaskit.secrets`).
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib.metadata as md
import platform
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from biaskit import __version__, hashing
from biaskit.secrets import scrub

LIBRARIES = (
    "pyarrow",
    "datasets",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "torch",
    "transformers",
    "accelerate",
    "tokenizers",
    "spacy",
    "mwparserfromhell",
    "requests",
    "vaderSentiment",
    "gensim",
    "simplemma",
    "scikit-learn",
    "huggingface-hub",
    "label-studio-sdk",
    "krippendorff",
    "matplotlib",
    "Unidecode",
    "openpyxl",
)


def library_versions(names: Iterable[str] = LIBRARIES) -> dict[str, str]:
    """The installed versions of ``names`` (those not installed left out), looked up once per process: each lookup
    reads the installed packages' metadata again (about 17 ms for the ~25 libraries a manifest records), and the
    installed packages do not change while biaskit runs. A fresh copy each call, so a caller may edit it."""
    return dict(_installed_versions(tuple(names)))


@functools.cache
def _installed_versions(names: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for n in names:
        try:
            out[n] = md.version(n)
        except md.PackageNotFoundError:
            continue
    return out


def utcnow() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def new_manifest(
    command: str,
    *,
    config: Mapping[str, Any] | None = None,
    seed: int | None = None,
    inputs: Iterable[str | Path] = (),
    stage: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Start a manifest for an output. ``inputs`` are files whose sha256 is recorded."""

    ins = []
    for i in inputs:
        p = Path(i)
        ins.append({"path": str(i), "sha256": hashing.sha256_file(p) if p.exists() else None})
    m: dict[str, Any] = {
        "biaskit_version": __version__,
        "command": command,
        "stage": stage,
        "config": scrub(dict(config or {})),
        "seed": seed,
        "inputs": ins,
        "created_at": utcnow(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "libraries": library_versions(),
    }
    if extra:
        m.update(scrub(dict(extra)))
    return m


def finish_manifest(manifest: dict[str, Any], output: Path, table: Any | None = None) -> dict[str, Any]:
    m = dict(manifest)
    out: dict[str, Any] = {"path": output.name}
    if output.exists():
        out["sha256"] = hashing.sha256_file(output)
    if table is not None:
        out["rows"] = table.num_rows
        out["columns"] = list(table.column_names)
    m["output"] = out
    m["finished_at"] = utcnow()
    return scrub(m)


def metric_description(manifest, metric: str) -> dict | None:
    """The ``describe()`` dict of ``metric`` recorded in a scores manifest: ``config.metrics[metric]`` (the demo)
    or an entry of ``metrics`` (``biaskit score``); None when the manifest records none."""
    if not isinstance(manifest, dict):
        return None
    conf = manifest.get("config")
    mets = conf.get("metrics") if isinstance(conf, dict) else None
    if isinstance(mets, dict) and isinstance(mets.get(metric), dict):
        return mets[metric]
    for m in manifest.get("metrics") or []:
        if isinstance(m, dict) and m.get("name") == metric:
            return m
    return None
