"""The labelled data of ``biaskit train classifier``: labels parsed, texts and classes read from a table or an
annotation round, and the train/dev/test split (see :mod:`biaskit.train.classifier`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics.classifier import label_key
from biaskit.schema import check_columns
from biaskit.train.config import TrainConfig
from biaskit.train.presplit import check_split_values, missing_split_column, predefined_split
from biaskit.votes import VoteRule, labels_as_majority, majority_vote


def parse_labels(spec: str | Sequence[str] | None) -> tuple[list[str], dict[str, str]] | None:
    """``negative,neutral,positive`` or ``-1=negative,0=neutral,1=positive`` -> (class names in order,
    raw value -> class name). None -> None (classes = the sorted distinct labels)."""
    if spec is None:
        return None
    items = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else [str(s).strip() for s in spec]
    items = [s for s in items if s]
    if not items:
        return None
    names, raw = [], {}
    for it in items:
        if "=" in it[1:]:  # '-1=negative' (a leading '=' is not a mapping)
            k, _, v = it.rpartition("=") if it.count("=") > 1 else it.partition("=")
            k, v = k.strip(), v.strip()
        else:
            k = v = it
        if not v:
            raise BiaskitError("E172", "empty class name in --labels", value=it, fix="write NAME or RAW=NAME, e.g. -1=negative")
        if k in raw:
            raise BiaskitError("E172", "a label value is listed twice in --labels", value=k, fix="list each label value once")
        raw[k] = v
        if v not in names:
            names.append(v)
    return names, raw


def _raw_str(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


@dataclass
class LabelledData:
    texts: list[str]
    y: list[int]
    labels: list[str]
    ordinal: bool
    label_map: dict[str, str]
    dropped: dict[str, int]
    n_rows: int
    #: each used row's part (train/validation/test) from ``split_column`` (None: a stratified split is drawn)
    parts: list[str] | None = None
    split_column: str | None = None

    def counts(self) -> dict[str, int]:
        c = Counter(self.y)
        return {lab: int(c.get(i, 0)) for i, lab in enumerate(self.labels)}


def labelled_data(
    table: Any,
    *,
    text_column: str = "text",
    label_column: str = "label",
    labels: str | Sequence[str] | None = None,
    drop_labels: Sequence[str] = (),
    ordinal: bool | None = None,
    split_column: str | None = None,
) -> LabelledData:
    """Texts and class indices from any table. Label values not in ``labels`` (and not dropped) are E171.
    ``split_column``: the table's column holding each row's part of a released split (:mod:`biaskit.train.presplit`)."""
    t = to_arrow(table)
    if split_column is not None and split_column not in t.column_names:
        raise missing_split_column(split_column, t.column_names)
    split_values = t.column(split_column).to_pylist() if split_column is not None else [None] * t.num_rows
    fix = "pass --text-column / --label-column with the table's columns"
    check_columns(t.column_names, (text_column, label_column), "the labelled table lacks column(s)", fix=fix, code="E171")
    texts = t.column(text_column).to_pylist()
    raw = [_raw_str(v) for v in t.column(label_column).to_pylist()]
    drop = {_raw_str(d) for d in drop_labels if _raw_str(d) is not None}
    parsed = parse_labels(labels)
    dropped: Counter = Counter()
    if parsed is None:
        names = sorted({r for r in raw if r is not None and r not in drop})
        label_map = {n: n for n in names}
        ordinal = bool(ordinal)
    else:
        names, label_map = parsed
        ordinal = True if ordinal is None else ordinal
    unknown = sorted({r for r in raw if r is not None and r not in drop and r not in label_map})
    if unknown:
        raise BiaskitError(
            "E171",
            f"label value(s) not in --labels: {', '.join(map(repr, unknown[:10]))}",
            value=unknown[:10],
            options=list(label_map),
            fix="add them to --labels (RAW=NAME) or drop them with --drop-label",
        )
    keys = [label_key(n) for n in names]
    if len(set(keys)) != len(keys) or not all(keys):
        raise BiaskitError(
            "E171",
            "class names must stay distinct and non-empty when lowercased (metric column names are made from them)",
            value=names,
            fix="name the classes, e.g. --labels -1=negative,0=neutral,1=positive",
        )
    idx = {n: i for i, n in enumerate(names)}
    X, y, kept_parts = [], [], []
    for tx, r, sv in zip(texts, raw, split_values):
        if r is None:
            dropped["null label"] += 1
        elif r in drop or label_map.get(r) in drop:
            dropped[f"label {r} dropped"] += 1
        elif not isinstance(tx, str) or not tx.strip():
            dropped["no text"] += 1
        else:
            X.append(tx)
            y.append(idx[label_map[r]])
            kept_parts.append(sv)
    if len(set(y)) < 2:
        raise BiaskitError(
            "E171",
            "training needs at least 2 classes with labelled texts",
            value=dict(Counter(names[i] for i in y)),
            fix="check --label-column, --labels and --drop-label",
        )
    parts = check_split_values(kept_parts, split_column) if split_column is not None else None
    return LabelledData(X, y, names, ordinal, label_map, dict(dropped), t.num_rows, parts, split_column)


def majority_labels(annotations: Any, samples: Any, *, text_column: str = "text", tie_policy: str = "drop", seed: int = 0, label_table: Any = None):
    """An annotation round as a labelled table: the human majority label per item (``annotate``'s
    majority vote; ties dropped by default) joined to the samples' text. Gold items are left out.
    ``label_table``: the labels of ``biaskit annotate aggregate`` (a label model) instead of the majority vote."""
    s = to_arrow(samples)
    fix = "pass the samples table of the round (--samples) and its text column"
    check_columns(s.column_names, ("sample_id", text_column), "the samples table lacks column(s)", fix=fix, code="E171")
    if label_table is not None:
        mv = labels_as_majority(label_table)
    else:
        mv = majority_vote(annotations, rule=VoteRule(tie_policy=tie_policy, seed=seed))
    gold = {r["sample_id"] for r in s.select([c for c in ("sample_id", "is_gold") if c in s.column_names]).to_pylist() if r.get("is_gold")}
    text = dict(zip(s.column("sample_id").to_pylist(), s.column(text_column).to_pylist()))
    rows = [
        {"sample_id": r["sample_id"], "text": text.get(r["sample_id"]), "label": r["label"]}
        for r in mv.to_pylist()
        if r["label"] is not None and r["sample_id"] not in gold
    ]
    return pa.Table.from_pylist(rows, schema=pa.schema([("sample_id", pa.string()), ("text", pa.string()), ("label", pa.string())]))


def parse_split(spec: str, n: int) -> tuple[int, int, int]:
    """``212/60/30`` (counts adding up to exactly n) or ``0.7/0.2/0.1`` (fractions summing to 1) -> (train, dev,
    test) counts. Fractions are rounded for dev and test; train takes the rest. Counts or fractions that leave
    labelled rows in no split are E172 (the card would otherwise count rows as used that no system saw)."""
    parts = [p.strip() for p in str(spec).split("/")]
    if len(parts) != 3:
        raise BiaskitError("E172", "the split needs three parts train/dev/test", value=spec, fix="write e.g. --split 212/60/30 or 0.7/0.2/0.1")
    try:
        if all(p.isdigit() for p in parts):
            tr, dv, te = (int(p) for p in parts)
            if tr + dv + te != n:
                what = "asks for" if tr + dv + te > n else "adds up to"
                raise BiaskitError(
                    "E172",
                    f"the split {what} {tr + dv + te} items but {n} are labelled"
                    + ("" if tr + dv + te > n else f" ({n - tr - dv - te} would be in no split)"),
                    value=spec,
                    fix=f"give counts that add up to {n} (e.g. {max(n - dv - te, 0)}/{dv}/{te}), use fractions "
                    "(e.g. 0.7/0.2/0.1), or drop rows from the table first",
                )
        else:
            f = [float(p) for p in parts]
            if any(not math.isfinite(x) or x < 0 for x in f) or abs(sum(f) - 1) > 1e-6:
                raise ValueError
            dv, te = round(f[1] * n), round(f[2] * n)
            tr = n - dv - te
    except ValueError:
        raise BiaskitError(
            "E172",
            "malformed split",
            value=spec,
            fix="write counts adding up to the labelled total (212/60/30) or fractions summing to 1 (0.7/0.2/0.1)",
        ) from None
    if tr < 1 or dv < 1 or te < 1:
        raise BiaskitError("E172", "every part of the split needs at least one item", value=(tr, dv, te), fix="label more items or change --split")
    return tr, dv, te


def split_sizes(data: LabelledData, cfg: TrainConfig) -> tuple[int, int, int]:
    """(train, dev, test) counts: of ``--split`` (parse_split), or of the table's split column when the data has one."""
    if data.parts is None:
        return parse_split(cfg.split, len(data.y))
    if cfg.resplit:
        raise BiaskitError(
            "E172",
            "--resplit draws a new split per run, but --split-column fixes the split",
            value=data.split_column,
            fix="leave out --resplit (runs then differ in the model's seed) or --split-column",
        )

    return tuple(len(ix) for ix in predefined_split(data.parts, data.split_column or ""))  # type: ignore[return-value]


def draw_split(data: LabelledData, sizes: tuple[int, int, int], seed: int) -> tuple[list[int], list[int], list[int]]:
    """The run's split: the table's own (split column) or a stratified one of ``sizes`` seeded by ``seed``."""
    if data.parts is not None:
        return predefined_split(data.parts, data.split_column or "")
    return stratified_split(data.y, sizes, seed)


def split_record(data: LabelledData, cfg: TrainConfig, sizes: tuple[int, int, int]) -> dict[str, Any]:
    """metrics.json's ``split``: how the split was made and its sizes."""
    rec: dict[str, Any] = {"spec": cfg.split, "train": sizes[0], "dev": sizes[1], "test": sizes[2]}
    if data.parts is not None:
        return {**rec, "spec": f"column {data.split_column}", "predefined_column": data.split_column, "stratified": False}
    return {**rec, "stratified": True, "same_split_every_run": not cfg.resplit, "seed": cfg.seed}


def stratified_split(y: Sequence[int], sizes: tuple[int, int, int], seed: int) -> tuple[list[int], list[int], list[int]]:
    """Row indices (train, dev, test): scikit-learn ``train_test_split(stratify=...)``, test first, then dev."""
    from sklearn.model_selection import train_test_split

    tr, dv, te = sizes
    idx = list(range(len(y)))
    try:
        rest, test = train_test_split(idx, test_size=te, train_size=tr + dv, stratify=list(y), random_state=seed)
        train, dev = train_test_split(rest, test_size=dv, train_size=tr, stratify=[y[i] for i in rest], random_state=seed)
    except ValueError as exc:
        raise BiaskitError(
            "E171",
            f"cannot make a stratified split: {exc}",
            value={"sizes": sizes, "classes": dict(Counter(y))},
            fix="label more items of the rare classes, drop them (--drop-label), or make dev/test larger",
        ) from None
    return sorted(train), sorted(dev), sorted(test)
