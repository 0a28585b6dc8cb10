"""Import HONEST templates (Nozza et al. 2021; MIT, bundled in ``biaskit/data/honest``) as prompts.

Each TSV has the columns ``template_masked`` (text with ``[M]``), ``raw`` (``[I]`` identity + ``[M]``),
``identity``, ``number``, ``category``, ``type`` (column order differs between files; read by name).
Several texts occur under more than one identity row; the ``honest`` package keys templates by text and
silently drops those (810 -> 724 English binary templates). We keep every row: ``prompt_id`` is derived
from the whole row plus its occurrence number, never from the text alone.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.io import check_utf8
from biaskit.schema import check_columns
from biaskit.templates.files import data_dir, short_hash
from biaskit.templates.mask import MASK

COLUMNS = ("template_masked", "raw", "identity", "number", "category", "type")
KINDS = ("binary", "queer_nonqueer")


def honest_files() -> dict[tuple[str, str], Path]:
    """Bundled HONEST files as ``{(kind, language): path}``."""
    out = {}
    for kind in KINDS:
        for p in sorted(data_dir("honest", kind).glob("*_template.tsv")):
            out[(kind, p.name.split("_")[0])] = p
    return out


def honest_path(language: str = "en", kind: str = "binary") -> Path:
    files = honest_files()
    if (kind, language) not in files:
        raise BiaskitError(
            "E040",
            f"no bundled HONEST templates for {kind}/{language}",
            value=f"{kind}/{language}",
            options=[f"{k}/{l}" for k, l in files],
            fix="pick one of the bundled sets or pass your own TSV file",
        )
    return files[(kind, language)]


def import_honest(path: str | Path | None = None, *, language: str = "en", kind: str = "binary") -> pa.Table:
    """Read one HONEST template TSV (bundled ``kind``/``language`` when ``path`` is None) into a
    prompts-stage table; ``[M]`` becomes :data:`MASK`, ``[I]`` in ``raw`` becomes ``{subject}``."""
    p = Path(path) if path is not None else honest_path(language, kind)
    if not p.is_file():
        raise BiaskitError("E040", "HONEST template file not found", value=str(p), fix="check the path")

    check_utf8(p, "HONEST template file")
    with open(p, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = reader.fieldnames or []
        fix = f"give a TSV with HONEST's columns ({', '.join(COLUMNS)})"
        check_columns(header, COLUMNS, f"{p}: not a HONEST template file; it lacks column(s)", fix=fix, code="E040")
        rows = []
        occ: dict[tuple, int] = {}
        for i, r in enumerate(reader, start=2):
            text = r["template_masked"]
            if text is None or text.count("[M]") != 1:
                raise BiaskitError(
                    "E040", f"{p}: line {i}: template_masked needs exactly one [M]", value=text, fix="fix the row or remove it from your copy"
                )
            key = tuple(r[c] for c in COLUMNS)
            k = occ.get(key, 0)
            occ[key] = k + 1
            rows.append(
                {
                    "prompt_id": f"honest-{language}-{short_hash(*key, k if k else None)}",
                    "text": text.replace("[M]", MASK),
                    "source": "honest",
                    "language": language,
                    "term": r["identity"],
                    "template": r["raw"].replace("[I]", "{subject}").replace("[M]", MASK),
                    "subject_category": r["category"],
                    "template_category": r["type"],
                    "template_id": f"honest-{kind}-{language}-{short_hash(r['raw'], size=4)}",
                    "masked": True,
                    "grammatical_number": r["number"],
                    "honest_set": kind,
                }
            )
    schema = pa.schema([(k, pa.bool_() if k == "masked" else pa.string()) for k in rows[0]]) if rows else None
    if not rows:
        raise BiaskitError("E040", f"{p}: no template rows", value=str(p), fix="give a non-empty HONEST file")
    return pa.Table.from_pylist(rows, schema=schema)
