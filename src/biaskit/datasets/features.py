"""Explicit ``datasets.Features`` for biaskit tables, with ClassLabel where the label set is fixed.

A column becomes a :class:`datasets.ClassLabel` only when its label set is fixed by a contract (see
``docs/CONTRACTS.md``) *and* every non-null value in the data belongs to it; otherwise it stays a string,
so staging never changes or drops a value. :func:`decode` turns the label ids back into the strings the
biaskit stages use, so a staged table loads back into the same table.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from biaskit.arrow import to_arrow
from biaskit.evaluate.metrics.catalog import vocabulary

#: Fixed label sets of the prompt and template columns (order = ClassLabel ids).
FIXED_LABELS: dict[str, tuple[str, ...]] = {
    "kind": ("generate", "fill_mask", "likelihood"),
    "noun_gender": ("female", "male", "neutral"),
    "descriptor_preference": ("reviewed", "dispreferred", "polarizing", "no_data"),
}
#: Metric label columns stored as ClassLabel, by name or name pattern (e.g. every ``norms_<dim>_class``): their
#: label set is the metric's declared vocabulary (:func:`biaskit.evaluate.metrics.catalog.vocabulary`), sorted
#: for the ClassLabel ids.
METRIC_LABEL_COLUMNS = ("vader_label", "toxicity_label", "regard_label", "gender_unigram_label", "gender_wavg_label", "gender_max_label")
METRIC_LABEL_PATTERNS: tuple[re.Pattern, ...] = (re.compile(r"^norms_[a-z_]+_class$"),)


def fixed_labels(column: str) -> tuple[str, ...] | None:
    if column in FIXED_LABELS:
        return FIXED_LABELS[column]
    if column in METRIC_LABEL_COLUMNS or any(pat.match(column) for pat in METRIC_LABEL_PATTERNS):
        labels = vocabulary(column)
        return tuple(sorted(labels)) if labels else None
    return None


@dataclass(frozen=True)
class LabelColumn:
    name: str
    names: tuple[str, ...]


def class_label_columns(table: pa.Table, *, enabled: bool = True) -> list[LabelColumn]:
    """The string columns of ``table`` that can be stored as ClassLabel without losing a value."""
    if not enabled:
        return []
    out = []
    for field in table.schema:
        names = fixed_labels(field.name)
        if names is None or not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            continue
        values = {v for v in table.column(field.name).unique().to_pylist() if v is not None}
        if values <= set(names):
            out.append(LabelColumn(field.name, names))
    return out


def encode(table: pa.Table, *, class_labels: bool = True):
    """``table`` as a ``datasets.Dataset`` with explicit Features (ClassLabel for fixed label sets)."""
    import datasets as hf_datasets

    labels = class_label_columns(table, enabled=class_labels)
    features = hf_datasets.Features.from_arrow_schema(table.schema)
    for lc in labels:
        index = {n: i for i, n in enumerate(lc.names)}
        ids = pa.array([None if v is None else index[v] for v in table.column(lc.name).to_pylist()], type=pa.int64())
        table = table.set_column(table.schema.get_field_index(lc.name), pa.field(lc.name, pa.int64()), ids)
        features[lc.name] = hf_datasets.ClassLabel(names=list(lc.names))
    table = table.replace_schema_metadata(None)
    return hf_datasets.Dataset(table, info=hf_datasets.DatasetInfo(features=features))


def decode(dataset) -> pa.Table:
    """A ``datasets.Dataset`` (e.g. from ``load_dataset``) as a biaskit Arrow table: ClassLabel ids -> strings."""
    import datasets as hf_datasets

    t = to_arrow(dataset)
    features = getattr(dataset, "features", None) or {}
    for name, feat in features.items():
        if isinstance(feat, hf_datasets.ClassLabel):
            names = feat.names
            vals = [None if v is None or v < 0 else names[v] for v in t.column(name).to_pylist()]
            t = t.set_column(t.schema.get_field_index(name), pa.field(name, pa.string()), pa.array(vals, type=pa.string()))
    return t.replace_schema_metadata(None)


def label_summary(features: Mapping) -> dict[str, list[str]]:
    """``{column: label names}`` of the ClassLabel columns in ``features``."""
    import datasets as hf_datasets

    return {k: list(v.names) for k, v in features.items() if isinstance(v, hf_datasets.ClassLabel)}
