"""The output layer: every byte biaskit writes or prints passes through here.

Three guarantees, each given once for every command, old or new:

- **Redaction.** :func:`clean` removes every known secret (the environment's tokens, the key named by
  ``--api-key-env``, passwords and query values met in URLs: :func:`biaskit.secrets.known_secrets`), each in full
  and longest first, then every run of 8 or more of its leading characters, then URL credentials
  (``user:password@``) and secret-named query values (``?token=``, ``&api_key=``, ``&sig=``). Text files
  (:func:`write_text`, :func:`write_json`, :func:`write_frame_csv`), tables (:func:`clean_table`, used by every table
  writer of :mod:`biaskit.io`) and the command line's stdout and stderr (:func:`redacting_streams`, installed by the
  root command) all use it.
- **Folder ownership.** :mod:`biaskit.ownership`: a folder (or a side file) is biaskit's only when a well-formed
  marker written by biaskit lists it with its sha256; anything else is the user's and is never replaced or deleted.
- **Atomic writes.** Every file goes to a temporary sibling and is renamed into place (:func:`atomic_path`).
"""

from __future__ import annotations

import io as _io
import json
import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from biaskit.secrets import MIN_SECRET_PREFIX, known_secrets, redact, redact_data


@contextmanager
def atomic_path(path: str | os.PathLike, *, is_dir: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling path; on success rename it onto ``path``; on failure remove it."""
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        yield tmp
        if is_dir:
            if final.exists():
                old = final.parent / f".{final.name}.old-{uuid.uuid4().hex[:8]}"
                os.replace(final, old)
                os.replace(tmp, final)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, final)
        else:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, final)
    finally:
        if tmp.exists():
            if tmp.is_dir():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink()


def clean(text: str) -> str:
    """``text`` as biaskit may write or print it (see the module doc)."""
    return redact_data(text)


def clean_obj(obj: Any) -> Any:
    """A copy of a JSON-like object with every string (keys too) passed through :func:`clean`."""
    if isinstance(obj, dict):
        return {(clean(k) if isinstance(k, str) else k): clean_obj(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean_obj(v) for v in obj]
    if isinstance(obj, str):
        return clean(obj)
    return obj


def write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` (cleaned) atomically to ``path``."""
    with atomic_path(path) as tmp:
        tmp.write_text(clean(text), encoding=encoding)
    return Path(path)


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as indented UTF-8 JSON (every string cleaned, keys too), atomically."""
    return write_text(path, json.dumps(clean_obj(obj), ensure_ascii=False, indent=2, sort_keys=False, default=str) + "\n")


def write_frame_csv(path: str | os.PathLike, df: Any) -> Path:
    """Write a pandas frame as CSV (``index=False``), cleaned, atomically."""
    buf = _io.StringIO()
    df.to_csv(buf, index=False)
    return write_text(path, buf.getvalue())


def clean_table(t: Any) -> Any:
    """An Arrow table with every text column cleaned: error columns (``error``, ``*_error``) get the full
    redaction of :func:`biaskit.secrets.redact` (they quote what a server said), every other text column
    :func:`clean` (known secrets, their prefixes, URL credentials; other credential-shaped text stays data).
    Columns that hold no secret head and no URL are not copied."""
    import pyarrow.compute as pc

    secrets = known_secrets()
    heads = sorted({s[:MIN_SECRET_PREFIX] for s in secrets} | {"://"})
    for i, name in enumerate(t.column_names):
        col = t.column(i)
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) or col.null_count == len(col):
            continue
        is_error = name == "error" or name.endswith("_error")
        if not is_error and not any(pc.any(pc.match_substring(col, h)).as_py() for h in heads):
            continue  # (the common case: nothing to clean in this column, nothing to copy)
        vals = col.to_pylist()
        red = [(redact(v) if is_error else redact_data(v, secrets)) if isinstance(v, str) else v for v in vals]
        if red != vals:
            t = t.set_column(i, t.field(i), pa.array(red, type=col.type))
    return t


def write_parquet(t: Any, path: str | os.PathLike) -> Path:
    """Write an Arrow table (cleaned) as Parquet, atomically, without a manifest (files inside a folder
    biaskit owns, such as export data and hub shards)."""
    with atomic_path(path) as tmp:
        pq.write_table(clean_table(t), tmp)
    return Path(path)


# --------------------------------------------------------------------------- stdout and stderr


class RedactingStream:
    """A text stream that cleans every ``write`` before passing it on (everything else is the wrapped stream's).

    Bytes are refused (TypeError), so click treats it as the text stream it is and never goes around it."""

    _biaskit_redacting = True

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self._stream.write(clean(s))
        return len(s)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def redacting_streams() -> Iterator[None]:
    """Clean everything printed to ``sys.stdout`` and ``sys.stderr`` within the block (the root command runs
    in it, so every listing, warning, progress line and error message of every command is cleaned)."""
    old = sys.stdout, sys.stderr
    if not getattr(sys.stdout, "_biaskit_redacting", False):
        sys.stdout = RedactingStream(sys.stdout)
    if not getattr(sys.stderr, "_biaskit_redacting", False):
        sys.stderr = RedactingStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = old
