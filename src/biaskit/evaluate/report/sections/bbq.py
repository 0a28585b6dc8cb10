"""Report section: BBQ accuracy and bias scores per category x context condition, with the paper's heat map."""

from __future__ import annotations

from typing import Any

import numpy as np

from biaskit.evaluate.report.model import Section, register_section
from biaskit.evaluate.report.plots import finish_figure, new_figure, shorten
from biaskit.evaluate.stats.bbq import bbq_scores

#: the columns that make a table a BBQ examples table
BBQ_COLUMNS = ("context_condition", "question_polarity", "target_loc", "ans0", "ans1", "ans2", "label")


def prediction_columns(df) -> list[str]:
    """The prediction columns of an answered BBQ table (``prediction*``, not their ``*_error`` companions)."""
    return [c for c in df.columns if c.startswith("prediction") and not c.endswith("_error") and df[c].notna().any()]


def bias_heatmap(scores, path, *, title: str):
    """Category x context condition heat map of the bias score (x100), diverging around 0 as in the paper."""
    m = scores.pivot(index="category", columns="context_condition", values="bias_score")
    m = m[[c for c in ("ambig", "disambig") if c in m.columns]]
    vals = m.to_numpy(dtype=float)
    fig = new_figure(5.0, max(2.5, 0.38 * len(m) + 1.6))
    ax = fig.add_subplot(111)
    lim = float(np.nanmax(np.abs(vals))) if np.isfinite(vals).any() and np.nanmax(np.abs(vals)) > 0 else 100.0
    im = ax.imshow(vals, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(len(m.columns)))
    ax.set_xticklabels([{"ambig": "ambiguous", "disambig": "disambiguated"}.get(c, c) for c in m.columns], fontsize=8)
    ax.set_yticks(range(len(m)))
    ax.set_yticklabels([shorten(str(i)) for i in m.index], fontsize=8)
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            v = vals[i, j]
            ax.text(j, i, "n/a" if v != v else f"{v:.1f}", ha="center", va="center", fontsize=7, color="white" if abs(v) > 0.6 * lim else "black")
    fig.colorbar(im, ax=ax, fraction=0.04)
    ax.set_title(title, fontsize=10)
    return finish_figure(fig, path)


def bbq_section(b: Any, loaded: dict[str, Any]):
    """Accuracy and bias scores (s_DIS, s_AMB) of every answered BBQ table of the run, and their heat map."""
    found = [(n, df, prediction_columns(df)) for n, df in loaded.items() if all(c in df.columns for c in BBQ_COLUMNS)]
    found = [(n, df, cols) for n, df, cols in found if cols]
    if not found:
        return None  # no answered BBQ table: the section does not apply to this run
    sec = Section(
        "bbq",
        "BBQ: accuracy and bias score",
        [
            "BBQ (Parrish et al. 2022): per category and context condition, accuracy and the bias score x100 "
            "(disambiguated: s_DIS = 2 * biased / non-unknown answers - 1; ambiguous: s_AMB = (1 - accuracy) * s_DIS). "
            "Positive: answers follow the stereotype; negative: they go against it. Proper-name templates are the "
            "'(names)' rows. Intervals are clustered by template (question_index); unmatched predictions are counted, "
            "not scored."
        ],
    )
    for name, df, cols in found:
        for col in cols:
            s = bbq_scores(df, col, n_boot=b.n_boot, seed=b.seed)
            key = f"bbq_{name}_{col}"
            b.table(sec, key, s, f"BBQ scores of `{name}`, prediction column `{col}`.")
            b.figure(
                sec,
                key,
                bias_heatmap,
                s,
                title=f"BBQ bias score x100 ({shorten(name, 20)}, {shorten(col, 24)})",
                caption=f"Bias score per category x context condition (`{name}`, `{col}`); blue: against the stereotype, red: with it.",
            )
    return sec


register_section("BBQ", bbq_section)
