"""BOLD's figures (Dhamala et al., 2021) from a scored table.

The text source is the ``model`` column (``model == "wikipedia"`` for the Wikipedia baseline rows), the
group is ``group`` inside ``domain``. All functions return pandas DataFrames and count null labels.

- :func:`sentiment_proportions`, :func:`toxicity_proportions`, :func:`regard_proportions`: label shares
  per group and source with bootstrap CIs (Figs. 3-5 style).
- :func:`gender_polarity_table`: male count, female count and male/female ratio for unigram matching,
  Gender-Wavg and Gender-Max (Table 3 layout).
- :func:`male_minus_female`: male-minus-female share per profession (Fig. 2).
- :func:`class_proportion_differences`: VAD / BE5 class shares of group A minus group B (Tables 4/6).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from biaskit.bootstrap import BootSpec
from biaskit.errors import check_choice
from biaskit.evaluate.metrics.catalog import labels_of
from biaskit.evaluate.stats._common import as_list, fill_keys, groups_of, is_missing, lacking_columns, require_columns, require_groups, to_frame
from biaskit.evaluate.stats.aggregate import label_proportions
from biaskit.evaluate.stats.columns import GroupPair, corrected_p
from biaskit.evaluate.stats.significance import correct_pvalues, two_proportion_ztest

GENDER_METHODS = {"unigram": "gender_unigram_label", "wavg": "gender_wavg_label", "max": "gender_max_label"}


def _by_present(df, by: Sequence[str]) -> list[str]:
    return [c for c in by if c in df.columns]


def _proportions_of(metric: str, what: str, doc: str):
    """The label-shares function of one label metric: ``<metric>_label`` shares per group and source with
    bootstrap CIs, in the metric's declared label order (``what`` names the figure in errors)."""

    def proportions(
        table: Any,
        by: str | Sequence[str] = ("domain", "group", "model"),
        *,
        column: str = f"{metric}_label",
        boot: BootSpec = BootSpec(),
    ):
        df = to_frame(table)
        require_columns(df, [column], f"{what} proportions", f"score the table with the {metric} metric ({metric}_label)")
        return label_proportions(df, column, _by_present(df, as_list(by)), label_order=labels_of(metric), boot=boot)

    proportions.__name__ = proportions.__qualname__ = f"{what}_proportions"
    proportions.__doc__ = doc
    return proportions


sentiment_proportions = _proportions_of(
    "vader",
    "sentiment",
    """Positive / neutral / negative shares per group and source (``prop_positive`` ... with CIs).

    Grouping columns missing from the table are left out (e.g. no ``domain``).""",
)
toxicity_proportions = _proportions_of("toxicity", "toxicity", """Toxic share per group and source (``prop_toxic`` with CI, ``count_toxic``).""")
regard_proportions = _proportions_of(
    "regard",
    "regard",
    """Regard label shares per group and source: each group gets its own share of every label (the
    robbie loop-variable bug gave every group only the last label's share; a test guards this).""",
)


def gender_polarity_table(table: Any, by: str | Sequence[str] = ("model",)):
    """BOLD Table 3 layout: for each method present (unigram, wavg, max) the male count, female count and
    male/female ratio per group of ``by`` (default: per text source).

    Columns: ``by``, ``n``, then per method ``<m>_male``, ``<m>_female``, ``<m>_neutral``, ``<m>_null``,
    ``<m>_ratio`` (male / female; inf when female is 0 and male > 0, nan when both are 0).
    """
    import pandas as pd

    df = to_frame(table)
    methods = {m: c for m, c in GENDER_METHODS.items() if c in df.columns}
    if not methods:
        require_columns(
            df,
            list(GENDER_METHODS.values())[:1],
            "gender polarity table",
            "score the table with the gender metric (gender_unigram_label / gender_wavg_label / gender_max_label)",
        )
    by = _by_present(df, as_list(by))
    df = fill_keys(df, by)
    rows = []
    for key, g in groups_of(df, by):
        r = {**dict(zip(by, key)), "n": len(g)}
        for m, c in methods.items():
            miss = is_missing(g[c])
            vals = g.loc[~miss, c].astype(str).str.lower()
            male, female = int((vals == "male").sum()), int((vals == "female").sum())
            r[f"{m}_male"], r[f"{m}_female"] = male, female
            r[f"{m}_neutral"] = int((vals == "neutral").sum())
            r[f"{m}_null"] = int(miss.sum())
            r[f"{m}_ratio"] = male / female if female else (float("inf") if male else float("nan"))
        rows.append(r)
    return pd.DataFrame(rows)


def male_minus_female(table: Any, by: str | Sequence[str] = ("group",), *, method: str = "wavg", within: str | Sequence[str] = ("model",)):
    """BOLD Fig. 2: per profession (``by``) and source (``within``), the share of texts labelled male minus
    the share labelled female, over texts with a gender label (nulls counted in ``n_null``)."""
    import pandas as pd

    check_choice("E080", "unknown gender polarity method", method, GENDER_METHODS, fix="use unigram, wavg or max")
    col = GENDER_METHODS[method]
    df = to_frame(table)
    by = as_list(by)
    require_columns(df, [col, *by], "male-minus-female shares", f"score with the gender metric ({col}) and keep the {by} columns")
    keys = [*_by_present(df, as_list(within)), *by]
    df = fill_keys(df, keys)
    rows = []
    for key, g in df.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        miss = is_missing(g[col])
        vals = g.loc[~miss, col].astype(str).str.lower()
        nv = int((~miss).sum())
        male, female = int((vals == "male").sum()), int((vals == "female").sum())
        pm = male / nv if nv else float("nan")
        pf = female / nv if nv else float("nan")
        rows.append(
            {
                **dict(zip(keys, key)),
                "n": len(g),
                "n_valid": nv,
                "n_null": int(miss.sum()),
                "male": male,
                "female": female,
                "prop_male": pm,
                "prop_female": pf,
                "male_minus_female": pm - pf,
            }
        )
    return pd.DataFrame(rows, columns=[*keys, "n", "n_valid", "n_null", "male", "female", "prop_male", "prop_female", "male_minus_female"])


def class_proportion_differences(
    table: Any, pair: GroupPair, *, columns: Sequence[str] | None = None, within: str | Sequence[str] = (), correction: str = "holm"
):
    """BOLD Tables 4/6: for each class column (default every ``norms_*_class``) and each class, the share
    in group ``pair.a`` minus the share in group ``pair.b`` (values of column ``pair.by``), with a two-proportion
    z-test and a corrected p-value (one family per value of ``within``)."""
    import pandas as pd

    group, a, b = pair.by, pair.a, pair.b
    df = to_frame(table)
    cols = list(columns) if columns else sorted(c for c in df.columns if c.startswith("norms_") and c.endswith("_class"))
    if not cols:
        raise lacking_columns(df, "no class columns to compare", "score with the norms metric (norms_<dim>_class) or pass columns=[...]")
    within = as_list(within)
    require_columns(df, [group, *cols, *within], "class proportion differences")
    df = fill_keys(df, [group, *within])
    require_groups(df, group, (a, b))
    rows = []
    for wkey, fam in groups_of(df, within):
        ga, gb = fam[fam[group] == a], fam[fam[group] == b]
        fam_rows = []
        for c in cols:
            ma, mb = is_missing(ga[c]), is_missing(gb[c])
            va, vb = ga.loc[~ma, c].astype(str), gb.loc[~mb, c].astype(str)
            for cls in sorted(set(va) | set(vb)):
                ca, cb = int((va == cls).sum()), int((vb == cls).sum())
                base = {
                    **dict(zip(within, wkey)),
                    "dimension": c.removeprefix("norms_").removesuffix("_class"),
                    "column": c,
                    "class": cls,
                    "n_a": len(va),
                    "n_b": len(vb),
                    "n_null_a": int(ma.sum()),
                    "n_null_b": int(mb.sum()),
                }
                if len(va) and len(vb):
                    t = two_proportion_ztest(ca, len(va), cb, len(vb))
                    fam_rows.append({**base, "prop_a": t["p_a"], "prop_b": t["p_b"], "diff": t["diff"], "z": t["z"], "p_value": t["p_value"]})
                else:
                    fam_rows.append(
                        {
                            **base,
                            "prop_a": ca / len(va) if len(va) else float("nan"),
                            "prop_b": cb / len(vb) if len(vb) else float("nan"),
                            "diff": float("nan"),
                            "z": float("nan"),
                            "p_value": float("nan"),
                        }
                    )
        col = corrected_p(correction)  # p_holm / p_bh (the vocabulary); none writes no corrected p
        for r, p in zip(fam_rows, correct_pvalues([r["p_value"] for r in fam_rows], correction)):
            if col is not None:
                r[col] = p
        rows += fam_rows
    out = pd.DataFrame(rows)
    out.insert(len(within), "group_a", a)
    out.insert(len(within) + 1, "group_b", b)
    return out
