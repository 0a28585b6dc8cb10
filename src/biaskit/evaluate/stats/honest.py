"""HONEST summaries (Nozza et al., 2021) and the regard difference between two groups (Sheng et al., 2019).

HONEST: the share of completions that are hurtful (``honest_hurtful``) per identity / category /
subject category / language, and per HurtLex category the share of completions credited to that category
(``honest_categories``, comma-separated; with the metric's default, the published rule, one category per
hurtful completion, so the shares equal the honest package's per-category counts / (templates x K) when
every template has K rows). Null ``honest_hurtful`` rows are counted (``n_null``), not used. ``fill_procedure``
per group says how the fill-ins were made (from ``generation_config``; see
:func:`biaskit.evaluate.metrics.honest.fill_procedures`): anything but ``top_k`` is not HONEST as published.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics.catalog import labels_of
from biaskit.evaluate.metrics.honest import fill_procedures
from biaskit.evaluate.stats._common import (
    as_list,
    column_counts,
    error_column,
    fill_keys,
    groups_of,
    lacking_columns,
    require_columns,
    require_groups,
    to_frame,
)
from biaskit.evaluate.stats.aggregate import label_strings
from biaskit.evaluate.stats.columns import GroupPair

HONEST_BY = ("language", "subject_category", "template_category", "term", "descriptor")
#: columns of :func:`honest_summary` that are figures or facts, not group keys
SUMMARY_FIGURES = ("n", "n_valid", "n_null", "n_error", "hurtful", "honest_score", "fill_procedure")


def _split_categories(v) -> list[str]:
    if v is None or (isinstance(v, float) and v != v):
        return []
    return [c.strip() for c in str(v).split(",") if c.strip()]


def _hurtful(v):
    if v is None or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        if low == "":
            return None
        raise BiaskitError("E080", "honest_hurtful must be a boolean", value=v, fix="store true/false (the honest metric does)")
    return bool(v)


def honest_summary(table: Any, by: str | Sequence[str] = ("language", "subject_category")):
    """HONEST score and HurtLex category shares per group.

    Columns: ``by``, ``n``, ``n_valid``, ``n_null``, ``n_error``, ``hurtful``, ``honest_score`` (hurtful /
    n_valid), ``fill_procedure`` (``top_k`` = HONEST's own; ``whole_word``/``max_subwords=N``/``targets``: not HONEST
    as published; ``not recorded``), then ``cat_<category>`` = share of valid completions with a word of that category.
    """
    import pandas as pd

    df = to_frame(table)
    by = as_list(by)
    require_columns(df, ["honest_hurtful", *by], "HONEST summary", "score fill-ins with the honest metric (honest_hurtful)")
    df = fill_keys(df, by)
    df["_hurt"] = df["honest_hurtful"].map(_hurtful)
    has_cats = "honest_categories" in df.columns
    df["_cats"] = df["honest_categories"].map(_split_categories) if has_cats else [[] for _ in range(len(df))]
    all_cats = sorted({c for cs in df["_cats"] for c in cs})
    ec = error_column(df, "honest_hurtful")
    rows = []
    for key, g in groups_of(df, by):
        valid = g[g["_hurt"].notna()]
        nv = len(valid)
        hurt = int(valid["_hurt"].astype(bool).sum())
        r = {
            **dict(zip(by, key)),
            **column_counts(g, g["_hurt"].isna(), ec),
            "hurtful": hurt,
            "honest_score": hurt / nv if nv else float("nan"),
            "fill_procedure": fill_procedures(g["generation_config"].tolist() if "generation_config" in g.columns else [None])[0],
        }
        for c in all_cats:
            r[f"cat_{c}"] = (sum(c in cs for cs in valid["_cats"]) / nv) if nv else float("nan")
        rows.append(r)
    return pd.DataFrame(rows)


def honest_category_matrix(summary):
    """Groups x HurtLex categories matrix of shares from an :func:`honest_summary` result (for a heatmap)."""
    cats = [c for c in summary.columns if c.startswith("cat_")]
    key_cols = [c for c in summary.columns if c not in cats and c not in SUMMARY_FIGURES]
    m = summary.set_index(key_cols)[cats] if key_cols else summary[cats]
    m.columns = [c.removeprefix("cat_") for c in cats]
    return m


def regard_difference(
    table: Any, pair: GroupPair, *, within: str | Sequence[str] = ("model",), use_probabilities: bool = False, column: str = "regard_label"
):
    """Regard of group ``pair.a`` minus group ``pair.b`` (values of column ``pair.by``) per label: mean of the label
    indicator (the label share) or, with ``use_probabilities``, the mean of ``regard_<label>`` probabilities. One row
    per ``within`` value and label with ``mean_a``, ``mean_b``, ``diff`` and the counts used (nulls counted)."""
    import pandas as pd

    group, a, b = pair.by, pair.a, pair.b
    df = to_frame(table)
    within = [c for c in as_list(within) if c in df.columns]
    require_columns(df, [group, column], "regard difference", "score the table with the regard metric (regard_label)")
    df = fill_keys(df, [group, *within])
    require_groups(df, group, (a, b))
    df[column] = label_strings(df[column])

    seen = sorted(set(df[column].dropna()))
    regard = labels_of("regard")
    labels = [x for x in regard if x in seen or not use_probabilities] + [x for x in seen if x not in regard]
    if use_probabilities:
        labels = [x for x in labels if f"regard_{x}" in df.columns]
        if not labels:
            raise lacking_columns(df, "no regard_<label> probability columns", "use_probabilities=False to compare label shares")
    rows = []
    for wkey, fam in groups_of(df, within):
        ga, gb = fam[fam[group] == a], fam[fam[group] == b]
        for lab in labels:
            if use_probabilities:
                xa, xb = pd.to_numeric(ga[f"regard_{lab}"], errors="coerce"), pd.to_numeric(gb[f"regard_{lab}"], errors="coerce")
            else:
                xa = ga[column].map(lambda v, lab=lab: None if pd.isna(v) else float(v == lab)).astype(float)
                xb = gb[column].map(lambda v, lab=lab: None if pd.isna(v) else float(v == lab)).astype(float)
            ma, mb = xa.mean(), xb.mean()
            rows.append(
                {
                    **dict(zip(within, wkey)),
                    "label": lab,
                    "n_a": int(xa.notna().sum()),
                    "n_b": int(xb.notna().sum()),
                    "n_null_a": int(xa.isna().sum()),
                    "n_null_b": int(xb.isna().sum()),
                    "mean_a": ma,
                    "mean_b": mb,
                    "diff": ma - mb,
                }
            )
    out = pd.DataFrame(rows)
    out.insert(len(within), "group_a", a)
    out.insert(len(within) + 1, "group_b", b)
    return out
