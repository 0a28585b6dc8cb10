"""HolisticBias: descriptor x noun x sentence-template expansion (Smith et al. 2022).

The dataset (bundled as package data, CC BY-SA 4.0, ``biaskit/data/holistic_bias/v1.0|v1.1``) is four
files: ``descriptors.json`` ``{axis: {bucket: [descriptor | {descriptor, preference?, gender?, article?}]}}``,
``nouns.json`` ``{female|male|neutral: [[singular, plural], ...]}``, ``standalone_noun_phrases.json``
``{axis: [phrase | {noun_phrase, plural_noun_phrase?, preference?}]}`` and ``sentence_templates.json``
``{template: {first_turn_only?, must_be_noun?}}``.

Noun phrases come in five types (``noun_phrase_type``):

* ``noun``: every noun without a descriptor ("a woman" / "women");
* ``descriptor``: the descriptor alone ("Deaf");
* ``descriptor_noun``: "a Deaf woman" / "Deaf women" (gendered descriptors only with nouns of that gender);
* ``noun_descriptor``: standalone phrases with ``{noun}``, filled with every noun
  ("a woman who uses a wheelchair");
* ``fixed_phrase``: standalone phrases without ``{noun}`` ("a wheelchair user").

Each noun phrase goes into every template (``{noun_phrase}`` takes the singular phrase with its article,
``{plural_noun_phrase}`` the plural), except that phrases without a noun skip ``must_be_noun`` templates.
v1.0 gives 472,991 rows (469,786 distinct texts), v1.1 566,625 rows. Articles come from
:func:`biaskit.templates.articles.indefinite_article` (by sound) unless the descriptor has ``article``.

The expansion is vectorised: noun phrases (~20k) and templates (26) are built in Python, the
cross product is built with Arrow ``take`` and string joins (full v1.0 in about a second).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from biaskit.io import drop_stale_manifest, manifest_path, table_format, write_json_atomic, write_table
from biaskit.output import atomic_path
from biaskit.schema import validate
from biaskit.templates.holistic_data import HolisticData
from biaskit.templates.holistic_plan import ExpansionStats, plan_holistic


def expand_holistic(data: HolisticData | str | Path = "v1.0", *, dedupe: bool = False, **options: Any) -> tuple[pa.Table, ExpansionStats]:
    """Expand HolisticBias into a prompts-stage table (in memory); see :func:`plan_holistic` for options.

    ``dedupe=True`` keeps the first row of each text and counts the rows merged into it in
    ``duplicates_merged`` (the stats say how many were merged). Returns ``(table, stats)``.
    """
    plan = plan_holistic(data, **options)
    stats = plan.stats
    table = plan.batch()
    stats.rows_before_dedupe = table.num_rows
    if dedupe:
        table = dedupe_texts(table, stats)
    stats.rows = table.num_rows
    return table, stats


def dedupe_texts(table: pa.Table, stats: ExpansionStats | None = None) -> pa.Table:
    """Keep the first row of each distinct ``text``; ``duplicates_merged`` counts the others."""
    table = table.append_column("_row", pa.array(np.arange(table.num_rows)))
    g = table.group_by("text", use_threads=False).aggregate([("_row", "min"), ("_row", "count")])
    g = g.take(pc.sort_indices(g, [("_row_min", "ascending")]))
    merged = pc.subtract(g.column("_row_count"), 1)
    out = table.take(g.column("_row_min")).drop_columns(["_row"]).append_column("duplicates_merged", merged)
    if stats is not None:
        stats.merged_duplicates = int(pc.sum(merged).as_py() or 0)
        stats.distinct_texts = out.num_rows
    return out


def write_holistic(
    out: str | Path,
    data: HolisticData | str | Path = "v1.0",
    *,
    dedupe: bool = False,
    manifest: dict | None = None,
    batch_rows: int = 65_536,
    **options: Any,
) -> ExpansionStats:
    """Expand and write to ``out`` atomically (with a manifest). Parquet output without ``dedupe`` is
    streamed in row groups, so memory stays small whatever the size; other formats go through
    :func:`biaskit.io.write_table`."""
    out = Path(out)
    if dedupe or table_format(out) != "parquet":
        table, stats = expand_holistic(data, dedupe=dedupe, **options)
        write_table(table, out, stage="prompts", manifest=_with_stats(manifest, stats))
        return stats
    plan = plan_holistic(data, **options)
    stats = plan.stats

    from biaskit.manifest import finish_manifest

    columns: list[str] = []
    drop_stale_manifest(out)
    with atomic_path(out) as tmp:
        writer = None
        try:
            for b in plan.batches(batch_rows):
                if writer is None:
                    validate(b, "prompts", where=str(out))
                    columns = b.column_names
                    # min/max statistics only for the categorical columns (on the long text columns they
                    # cost a quarter of the write time and help no reader)
                    stats_cols = [
                        c
                        for c in (
                            "axis",
                            "bucket",
                            "noun_gender",
                            "noun_phrase_type",
                            "descriptor_preference",
                            "first_turn_only",
                            "must_be_noun",
                            "template_id",
                            "dataset_version",
                        )
                        if c in columns
                    ]
                    writer = pq.ParquetWriter(tmp, b.schema, write_statistics=stats_cols)
                writer.write_table(b)
        finally:
            if writer is not None:
                writer.close()
    stats.rows_before_dedupe = stats.rows = plan.n_rows
    if manifest is not None:
        info = type("_T", (), {"num_rows": plan.n_rows, "column_names": columns})()
        with_stats = _with_stats(manifest, stats)
        assert with_stats is not None  # made from a manifest
        write_json_atomic(manifest_path(out), finish_manifest(with_stats, out, info))
    return stats


def _with_stats(manifest: dict | None, stats: ExpansionStats) -> dict | None:
    if manifest is None:
        return None
    m = dict(manifest)
    m["expansion"] = stats.as_dict()
    return m


def count_distinct_texts(table: pa.Table) -> int:
    return int(pc.count_distinct(table.column("text")).as_py())
