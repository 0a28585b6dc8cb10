"""Loading template/data files (JSON or YAML) with coded errors that name the file and the entry."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from importlib import resources
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.inputs import MAX_DEPTH, depth_ok, load_yaml
from biaskit.io import read_text_utf8


def data_dir(*parts: str) -> Path:
    """Folder of biaskit's bundled data (``src/biaskit/data/...``)."""
    return Path(str(resources.files("biaskit").joinpath("data", *parts)))


def load_file(path: str | Path) -> Any:
    """Parse a ``.json``, ``.yaml`` or ``.yml`` file; errors are E040 naming the file and line."""
    p = Path(path)
    if not p.is_file():
        raise BiaskitError("E040", f"template/data file not found: {p}", value=str(p), fix="check the path")

    text = read_text_utf8(p, "template/data file")
    suffix = p.suffix.lower()

    try:
        if suffix == ".json":
            obj = json.loads(text)
            if not depth_ok(obj):
                raise BiaskitError("E380", f"{p}: the document is nested more than {MAX_DEPTH} levels deep", value=str(p), fix="check the file")
            return obj
        if suffix in (".yaml", ".yml"):
            return load_yaml(text, source=str(p), code="E040", fix="fix the YAML syntax at that position")
    except RecursionError:
        raise BiaskitError("E380", f"{p}: the document is nested more than {MAX_DEPTH} levels deep", value=str(p), fix="check the file") from None
    except BiaskitError:
        raise
    except json.JSONDecodeError as exc:
        raise BiaskitError(
            "E040", f"{p}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})", fix="fix the JSON syntax at that position"
        ) from exc
    except Exception as exc:  # yaml.YAMLError
        raise BiaskitError("E040", f"{p}: not valid YAML ({exc})".replace("\n", " "), fix="fix the YAML syntax at that position") from exc
    raise BiaskitError("E040", f"{p}: unsupported file type", value=p.suffix, options=[".json", ".yaml", ".yml"], fix="save the file as JSON or YAML")


def short_hash(*fields: Any, size: int = 6) -> str:
    """Deterministic hex digest of ``fields`` (str/int/None; ``size`` bytes) used for content-derived ids.

    The digest is over ``repr(fields)``, which is stable across runs and Python versions for these types.
    """
    return hashlib.blake2b(repr(fields).encode("utf-8"), digest_size=size).hexdigest()


def check_text(value: Any, *, file: str, entry: str, what: str) -> str:
    """A non-empty string without stray whitespace, else E040 naming file, entry and value."""
    if not isinstance(value, str):
        raise BiaskitError(
            "E040", f"{file}: {entry}: {what} must be a string, not {type(value).__name__}", value=value, fix=f"write the {what} as a quoted string"
        )
    if not value.strip():
        raise BiaskitError("E040", f"{file}: {entry}: empty {what}", value=value, fix=f"remove the entry or give a {what}")
    bad = [c for c in value if unicodedata.category(c) in ("Cc", "Zl", "Zp") and c not in "\t\n"]
    if bad:  # a NUL byte (or another control character) would be copied into every prompt built from this entry
        raise BiaskitError(
            "E040",
            f"{file}: {entry}: control character {bad[0]!r} in {what}",
            value=value,
            fix=f"remove it: {''.join(c for c in value if c not in bad)!r}",
        )
    if value != value.strip() or "  " in value or "\t" in value or "\n" in value:
        raise BiaskitError(
            "E040",
            f"{file}: {entry}: stray whitespace in {what}",
            value=value,
            fix=f"use {' '.join(value.split())!r} (no leading/trailing/double spaces)",
        )
    return value
