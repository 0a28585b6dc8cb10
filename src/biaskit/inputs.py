"""The input layer: every JSON, JSON Lines and YAML file biaskit reads, and the values taken from them.

What holds for every file read through this module (``docs/hardening.md``, "The input layer"):

* **Depth.** A document nested deeper than :data:`MAX_DEPTH` (100,000 ``[`` on a line) is error E380 naming the
  file and line, never a ``RecursionError``.
* **Size.** A JSON document larger than :data:`MAX_JSON_BYTES` is error E387 naming the file and its size,
  before it is read into memory.
* **Encoding.** Text must be UTF-8 (E150, :func:`biaskit.io.read_text_utf8`); a UTF-8 byte-order mark at the
  start of a JSON or JSON Lines file is accepted and dropped (spreadsheet and Windows tools write one).
* **Numbers.** ``NaN``, ``Infinity`` and ``-Infinity`` (JSON extensions Python accepts) are refused (E381) unless
  the caller asks for them (``nonfinite=True``: lm-eval writes ``-Infinity`` for an impossible continuation).
* **Declared records.** :func:`check_record` checks a JSON object against a declaration (:class:`Field` per key):
  a missing required key, an unknown key (E382), a value of the wrong type, a non-finite number or a negative
  count (E381) is a coded error naming the file, the key path, the value and the fix.
* **Path components.** :func:`path_component` turns a name taken from data into a file-name component of at most
  255 bytes (the limit of ext4, APFS, NTFS): a longer one keeps its head and gets a hash of the whole name, so two
  long names never collide and a 300-character domain no longer fails with ``OSError: File name too long``.
* **Names from data.** :func:`name_part` (a group, domain or model as part of a file or task name: lm-eval task
  names, report figures and tables) removes known secrets and URL credentials *before* it lower-cases the value,
  since a lower-cased secret is one the output layer's redaction can no longer find.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from biaskit.errors import BiaskitError
from biaskit.io import check_utf8, read_text_utf8
from biaskit.jsonread import MAX_DEPTH as MAX_DEPTH  # (re-exported: the limit of every document read here)
from biaskit.jsonread import MAX_JSON_BYTES, depth_ok, loads_json, too_deep, too_large
from biaskit.secrets import redact_data

#: the longest file-name component (bytes, UTF-8) biaskit writes
MAX_COMPONENT_BYTES = 255
_BOM = "\ufeff"


def read_json(path: str | Path, *, what: str = "JSON file", nonfinite: bool = False, code: str = "E381", fix: str = "") -> Any:
    """A JSON file (UTF-8, BOM accepted) through :func:`loads_json`; a missing file is E003."""
    p = Path(path)
    if not p.is_file():
        raise BiaskitError("E003", f"{what} not found", value=str(p), fix="check the path")
    if p.stat().st_size > MAX_JSON_BYTES:
        raise too_large(str(p), p.stat().st_size, fix or f"check that {p} is the {what} biaskit wrote")
    return loads_json(read_text_utf8(p, what, bom=True), source=str(p), nonfinite=nonfinite, code=code, fix=fix)


def iter_jsonl(
    path: str | Path, *, what: str = "JSON Lines file", nonfinite: bool = False, code: str = "E381", fix: str = ""
) -> Iterator[tuple[int, Any]]:
    """(line number, record) for every non-blank line of a JSON Lines file (a BOM on the first line accepted)."""
    p = Path(path)
    check_utf8(p, what)
    with open(p, encoding="utf-8-sig") as fh:
        for no, line in enumerate(fh, 1):
            if line.strip():
                yield no, loads_json(line, source=str(p), line=no, nonfinite=nonfinite, code=code, fix=fix)


def load_yaml(text: str, *, source: str, code: str = "E021", fix: str = "") -> Any:
    """``yaml.safe_load`` of ``source`` with too deep nesting as E380 (PyYAML's composer recurses)."""
    fix = fix or "check the file's YAML"
    try:
        obj = yaml.safe_load(text[1:] if text.startswith(_BOM) else text)
    except RecursionError:
        raise too_deep(source, None, fix) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise BiaskitError(code, f"{where}: not valid YAML ({getattr(exc, 'problem', None) or exc})", value=source, fix=fix) from None
    if not depth_ok(obj):
        raise too_deep(source, None, fix)
    return obj


# ---------------------------------------------------------------------------------------------- declared records


@dataclass(frozen=True)
class Field:
    """One key of a declared record: its type(s), whether it is required or may be null, and for numbers a
    lower bound (``minimum=0``: a count) and finiteness. ``kind``: ``"int"`` (a whole number; ``3.0`` is
    accepted, ``true`` is not), ``"number"``, ``"str"``, ``"bool"``, ``"object"``, ``"list"`` or ``"any"``."""

    kind: str
    required: bool = False
    nullable: bool = True
    minimum: float | None = None
    fix: str = ""


_KIND_NAMES = {"int": "a whole number", "number": "a number", "str": "a string", "bool": "true or false", "object": "a JSON object", "list": "a list"}


def _type_name(v: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "integer", float: "number"}.get(type(v), type(v).__name__)


def check_value(value: Any, spec: Field, *, source: str, key: str) -> Any:
    """``value`` checked against ``spec`` (E381 naming the file, key, value and fix); whole floats become ints."""

    def bad(why: str) -> BiaskitError:
        return BiaskitError("E381", f"{source}: {key} {why}", value=value, fix=spec.fix or f"give {key} as {_KIND_NAMES.get(spec.kind, spec.kind)}")

    if value is None:
        if spec.nullable:
            return None
        raise bad("must not be null")
    k = spec.kind
    if k == "any":
        return value
    if k in ("int", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad(f"must be {_KIND_NAMES[k]}, not {_type_name(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise bad("must be a finite number")
        if k == "int":
            if isinstance(value, float) and not value.is_integer():
                raise bad("must be a whole number")
            value = int(value)
        if spec.minimum is not None and value < spec.minimum:
            raise bad(f"must be >= {spec.minimum:g}")
        return value
    want = {"str": str, "bool": bool, "object": dict, "list": list}[k]
    if not isinstance(value, want):
        raise bad(f"must be {_KIND_NAMES[k]}, not {_type_name(value)}")
    return value


def check_record(obj: Any, fields: Mapping[str, Field], *, source: str, where: str = "", unknown: str = "refuse", fix: str = "") -> dict[str, Any]:
    """``obj`` (a JSON object) checked against its declaration: a non-object, a missing required key or a wrong
    value is E381, an unknown key E382 (``unknown="keep"`` lets undeclared keys through unchecked). Returns a
    copy with the checked values (whole-number floats of ``int`` keys as ints)."""
    label = where or "the document"
    if not isinstance(obj, dict):
        raise BiaskitError("E381", f"{source}: {label} must be a JSON object, not {_type_name(obj)}", value=obj, fix=fix or "see docs/schemas.md")
    extra = [k for k in obj if k not in fields]
    if extra and unknown == "refuse":
        raise BiaskitError(
            "E382",
            f"{source}: unknown key {extra[0]!r} in {label}",
            value=extra[0],
            options=list(fields),
            fix=fix or "remove the key or correct its spelling",
        )
    out = dict(obj)
    for name, spec in fields.items():
        key = f"{where}.{name}" if where else name
        if name not in obj:
            if spec.required:
                raise BiaskitError("E381", f"{source}: {label} lacks the key {name!r}", value=sorted(obj)[:12], fix=fix or f"add {name!r}")
            continue
        out[name] = check_value(obj[name], spec, source=source, key=key)
    return out


# ---------------------------------------------------------------------------------------------- names from data


def path_component(name: str, *, suffix: str = "", limit: int = MAX_COMPONENT_BYTES) -> str:
    """``name`` as a file-name component that fits ``limit`` bytes together with ``suffix`` (e.g. ``.parquet``).

    A name that fits is returned as it is; a longer one keeps as many leading characters as fit and ends with
    ``_`` and the first 12 hex digits of its sha256, so distinct long names stay distinct and the same name
    always maps to the same component."""
    room = limit - len(suffix.encode("utf-8"))
    if len(name.encode("utf-8")) <= room:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    head = name.encode("utf-8")[: max(1, room - len(digest) - 1)].decode("utf-8", "ignore")
    return f"{head}_{digest}"


def name_part(value: Any, *, limit: int = MAX_COMPONENT_BYTES) -> str:
    """A value from data (a group, a domain, a model name) as part of a file or task name: known secrets and URL
    credentials removed first (:func:`biaskit.secrets.redact_data`; lower case would hide a secret from it), then
    lower case, each run of characters other than ``a-z0-9`` as ``_``, ``x`` when nothing is left, and at most
    ``limit`` bytes (:func:`path_component`)."""
    s = re.sub(r"[^a-z0-9]+", "_", redact_data(str(value)).lower()).strip("_")
    return path_component(s or "x", limit=limit)
