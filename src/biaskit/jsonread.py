"""The one JSON reader: every JSON document biaskit parses (an input file, a marker or manifest it reads back, a
cache entry, a lock file) goes through :func:`loads_json`, with a depth limit (:data:`MAX_DEPTH`, E380, never a
``RecursionError``: a marker nested 100,000 levels deep is a coded error) and a size limit (:data:`MAX_JSON_BYTES`,
E387, checked before a file is read into memory: :func:`read_back`). It sits at the floor (it imports only
``errors``) so that the table layer (:mod:`biaskit.io`) and the input layer (:mod:`biaskit.inputs`, which adds
encodings, JSON Lines, YAML and declared records on top) share it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError

_BOM = "\ufeff"

#: deepest nesting of arrays/objects accepted in an input document (biaskit's own files nest fewer than 10 deep)
MAX_DEPTH = 200
#: the largest JSON document biaskit reads (a marker, a manifest, a ledger, a cache entry, a plan): biaskit's own
#: are kilobytes; a larger one is refused (E387) before it is read into memory
MAX_JSON_BYTES = 64 * 1024 * 1024


def too_deep(source: str, line: int | None, fix: str) -> BiaskitError:
    where = f"{source}:{line}" if line else source
    return BiaskitError("E380", f"{where}: the document is nested more than {MAX_DEPTH} levels deep", value=source, fix=fix)


def too_large(source: str, size: int, fix: str) -> BiaskitError:
    return BiaskitError("E387", f"{source}: the document is {size:,} bytes, more than the {MAX_JSON_BYTES:,} biaskit reads", value=source, fix=fix)


def depth_ok(obj: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``obj`` nests at most ``limit`` containers deep (iterative: no recursion on hostile input)."""
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, dict):
            if d > limit:
                return False
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            if d > limit:
                return False
            stack.extend((v, d + 1) for v in o)
    return True


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def loads_json(text: str, *, source: str, line: int | None = None, nonfinite: bool = False, code: str = "E381", fix: str = "") -> Any:
    """Parse one JSON document of ``source`` (``line``: its line in a JSON Lines file).

    A leading BOM is dropped; too deep nesting is E380; ``NaN``/``Infinity`` are E381 unless ``nonfinite``; text that
    is not JSON is error ``code`` naming the file, the line and the parser's reason (with ``fix``).
    """
    if text.startswith(_BOM):
        text = text[1:]
    fix = fix or "check that the file is complete, valid JSON (no NaN or Infinity)"
    if len(text) > MAX_JSON_BYTES:
        raise too_large(source, len(text.encode("utf-8")), fix)
    try:
        obj = json.loads(text) if nonfinite else json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise too_deep(source, line, fix) from None
    except ValueError as exc:
        msg = getattr(exc, "msg", None) or str(exc)
        at = line if line is not None else getattr(exc, "lineno", None)
        where = f"{source}:{at}" if at else source
        if "not a number JSON allows" in msg:
            raise BiaskitError(
                "E381", f"{where}: {msg}", value=msg.split(" ", 1)[0], fix="write a finite number, or null for a missing value"
            ) from None
        raise BiaskitError(code, f"{where}: not valid JSON ({msg})", value=text[:80], fix=fix) from None
    if not depth_ok(obj):
        raise too_deep(source, line, fix)
    return obj


def read_back(path: str | Path, *, what: str = "JSON file", fix: str = "") -> Any:
    """A JSON file biaskit wrote (a marker, a manifest, a run record), read back through :func:`loads_json`:
    too large (E387, before reading), not UTF-8 or not JSON (E381), too deep (E380). A missing file is E003."""
    p = Path(path)
    if not p.is_file():
        raise BiaskitError("E003", f"{what} not found", value=str(p), fix="check the path")
    fix = fix or f"check that {p} is the {what} biaskit wrote (or remove it)"
    size = p.stat().st_size
    if size > MAX_JSON_BYTES:
        raise too_large(str(p), size, fix)
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise BiaskitError("E381", f"{p}: the {what} is not UTF-8 text", value=str(p), fix=fix) from None
    return loads_json(text, source=str(p), fix=fix)
