"""CrowS-Pairs (Nangia et al., EMNLP 2020) as a biaskit pairs table.

``crows_pairs_anonymized.csv`` has one row per minimal pair: ``sent_more`` (the more stereotyping sentence),
``sent_less``, ``stereo_antistereo`` (the direction of the pair), ``bias_type`` (one of 9), ``annotations``
(each of the 5 annotators' list of bias types, as a Python literal), ``anon_writer`` and ``anon_annotators``.
:func:`read_crows_pairs` turns it into a pairs table: one prompts row per sentence, two per pair, with

- ``pair_id`` (``crows-<the CSV's index>``) and ``variant`` (``more`` = ``sent_more``, ``less`` = ``sent_less``);
- ``prompt_id`` (``<pair_id>-more`` / ``<pair_id>-less``), ``text``, ``source = crows_pairs``, ``language = en``,
  ``license = CC BY-SA 4.0`` and ``source_row`` (the CSV's 1-based data row);
- the pair's ``bias_type`` and ``stereo_antistereo``, and the annotators' labels as JSON: ``annotations`` (a list
  per annotator), ``anon_annotators`` and ``anon_writer``.

A pair with an empty sentence cannot be compared; it is left out and counted (``filtered["empty_sentence"]``).
The file ships with biaskit (``src/biaskit/data/crows_pairs/``, CC BY-SA 4.0, see its LICENSE.md).
"""

from __future__ import annotations

import ast
import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.schema import PROMPTS
from biaskit.templates.files import data_dir

#: the columns a CrowS-Pairs CSV must have
CROWS_COLUMNS = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")
#: the variant names of a CrowS-Pairs pair, in the order the rows are written
VARIANTS = ("more", "less")
LICENSE = "CC BY-SA 4.0"


def bundled_crows_pairs() -> Path:
    """The CrowS-Pairs CSV that ships with biaskit."""
    return data_dir("crows_pairs", "crows_pairs_anonymized.csv")


def is_crows_header(header: str) -> bool:
    """Whether the first line of a CSV names the CrowS-Pairs columns."""
    cols = {c.strip().strip('"') for c in header.strip().split(",")}
    return {"sent_more", "sent_less"} <= cols


def _json_literal(value: str | None, where: str) -> str | None:
    """A Python-literal list of the CSV (``"[['race-color'], ...]"``) as JSON; None when empty."""
    if value is None or not value.strip():
        return None
    try:
        return json.dumps(ast.literal_eval(value), ensure_ascii=False)
    except (ValueError, SyntaxError) as exc:
        raise BiaskitError(
            "E430",
            f"{where}: not a list literal as CrowS-Pairs writes it ({type(exc).__name__})",
            value=value[:80],
            fix="give crows_pairs_anonymized.csv unchanged (annotations such as [['race-color'], ...])",
        ) from None


def _rows_of(path: Path) -> list[dict[str, str]]:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            fields = reader.fieldnames or []
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise BiaskitError("E430", f"{path} is not a readable UTF-8 CSV: {exc}", value=str(path), fix="give crows_pairs_anonymized.csv") from None
    missing = [c for c in CROWS_COLUMNS if c not in fields]
    if missing:
        raise BiaskitError(
            "E430",
            f"not a CrowS-Pairs CSV (lacks {', '.join(missing)})",
            value=sorted(fields),
            options=CROWS_COLUMNS,
            fix="give crows_pairs_anonymized.csv from nyu-mll/crows-pairs (data/)",
        )
    return rows


def read_crows_pairs(path: str | Path | None = None) -> tuple[pa.Table, Counter, dict[str, Any]]:
    """(pairs table, filtered counts, facts) of a CrowS-Pairs CSV (default: the bundled one); see the module docs."""
    p = Path(path) if path is not None else bundled_crows_pairs()
    rows = _rows_of(p)
    out: list[dict[str, Any]] = []
    filtered: Counter = Counter()
    for i, r in enumerate(rows):
        index = (r.get("") or "").strip() or str(i)
        texts = {"more": r.get("sent_more"), "less": r.get("sent_less")}
        if any(t is None or not t.strip() for t in texts.values()):
            filtered["empty_sentence"] += 1
            continue
        where = f"{p.name} row {i + 1}"
        carried = {
            "bias_type": (r.get("bias_type") or "").strip() or None,
            "stereo_antistereo": (r.get("stereo_antistereo") or "").strip() or None,
            "annotations": _json_literal(r.get("annotations"), where),
            "anon_writer": (r.get("anon_writer") or "").strip() or None,
            "anon_annotators": _json_literal(r.get("anon_annotators"), where),
        }
        pair_id = f"crows-{index}"
        for v in VARIANTS:
            out.append(
                {
                    "prompt_id": f"{pair_id}-{v}",
                    "pair_id": pair_id,
                    "variant": v,
                    "text": texts[v],
                    "source": "crows_pairs",
                    "language": "en",
                    "license": LICENSE,
                    "source_row": i + 1,
                    **carried,
                }
            )
    ids = [r["pair_id"] for r in out[::2]]
    if len(set(ids)) != len(ids):
        dup = next(x for x, n in Counter(ids).items() if n > 1)
        raise BiaskitError(
            "E430", "two CrowS-Pairs rows have the same index", value=dup, fix="give the CSV unchanged (its first column is a unique index)"
        )
    facts = {"pairs": len(ids), "bias_types": dict(sorted(Counter(r["bias_type"] for r in out[::2]).items()))}
    return PROMPTS.table_of(out, _TABLE_COLUMNS), filtered, facts


#: the columns of the pairs table, in this order (typed as the prompts stage declares them)
_TABLE_COLUMNS = (
    "prompt_id",
    "pair_id",
    "variant",
    "text",
    "source",
    "language",
    "license",
    "source_row",
    "bias_type",
    "stereo_antistereo",
    "annotations",
    "anon_writer",
    "anon_annotators",
)
