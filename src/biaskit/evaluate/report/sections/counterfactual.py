"""Report section "Counterfactual pairs": how much the continuations change when only the group words of the
prompt change (see :mod:`biaskit.evaluate.stats.counterfactual`).

It uses the first table with ``pair_id``, ``variant`` and ``continuation`` (a pairs table of ``biaskit templates
counterfactual``, generated and scored). The signed measures (mean score difference, share difference of a label
metric) are headline findings of the ``counterfactual`` family (every variant x signed measure of one model, Holm);
their verdicts come from the shared headline rules. Distances and similarities (Wasserstein-1, cosine, ROUGE-L) are
shown with their intervals, untested.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics.catalog import label_outputs
from biaskit.evaluate.report.model import Figure, Finding, Section, SkipAnalysis, register_section, uncertainty_flags
from biaskit.evaluate.report.plots import finish_figure, new_figure, shorten
from biaskit.evaluate.stats.counterfactual import ORIGINAL, minilm_embedder, pair_metrics, summarise_pairs
from biaskit.evaluate.stats.families import family_name

FAMILY = "counterfactual"
_KINDS = {
    "_diff": "mean score, variant - original",
    "_w1": "Wasserstein-1 of the score distributions (strong form)",
    "_share_diff": "share of '{label}', variant - original (weak form)",
}
PLAIN = {"cosine": "cosine similarity of the continuations' embeddings (all-MiniLM-L6-v2)", "rouge_l": "ROUGE-L F1 of the continuations"}


def describe(metric: str) -> str:
    """The measure in words: ``vader_diff`` -> "Sentiment (VADER): mean score, variant - original"."""
    if metric in PLAIN:
        return PLAIN[metric]
    for lo in label_outputs().values():
        for suffix, words in _KINDS.items():
            if metric == lo.key + suffix:
                return f"{lo.display or lo.key}: {words.format(label=lo.test_label)}"
    return metric


def _find(loaded):
    """The pairs table with continuations holding the most label-metric columns (a scored one before its unscored
    generations)."""
    columns = {c for lo in label_outputs().values() for c in (lo.column, lo.score) if c}
    found = [
        (len(columns & set(df.columns)), -i, name, df)
        for i, (name, df) in enumerate(loaded.items())
        if all(c in df.columns for c in ("pair_id", "variant", "continuation")) and (df["variant"] == ORIGINAL).any()
    ]
    if found:
        _, _, name, df = max(found, key=lambda x: x[:2])
        return name, df
    raise SkipAnalysis(
        "no table has counterfactual pairs with continuations (pair_id, variant, continuation): build pairs with "
        "`biaskit templates counterfactual`, then generate and score them"
    )


def _embedder(sec: Section):
    """all-MiniLM-L6-v2 when it loads here; otherwise None and a sentence saying why cosine is missing."""
    try:
        return minilm_embedder()
    except (BiaskitError, ImportError, OSError) as exc:
        sec.text.append(f"Cosine similarity not computed: the sentence encoder all-MiniLM-L6-v2 could not be loaded ({exc}).")
        return None


def _plot(summary, path: Path, title: str):
    d = summary[summary["mean"].notna()].reset_index(drop=True)
    fig = new_figure(7, max(2.5, 0.32 * len(d) + 1.2))
    ax = fig.add_subplot(111)
    y = np.arange(len(d))[::-1]
    ok = d["ci_low"].notna().to_numpy()
    ax.hlines(y[ok], d["ci_low"][ok].astype(float), d["ci_high"][ok].astype(float), color="#2a9d8f", lw=2.5, label="95% CI (BCa over pairs)")
    ax.plot(d["mean"].astype(float), y, "o", color="black", ms=4, label="mean over pairs")
    ax.axvline(0, color="#666666", lw=0.8, ls="--")
    labels = [shorten(f"{r['model'] + ': ' if r['model'] else ''}{r['variant']} | {r['metric']}", 45) for _, r in d.iterrows()]
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="best")
    return finish_figure(fig, path)


def _findings(summary, where: str, alpha: float) -> list[Finding]:
    out = []
    for model, g in summary[summary["test"] != ""].groupby("model", sort=False):
        size = int(g["p_value"].notna().sum())
        fam = family_name(FAMILY, {"model": model} if model else {})
        for _, r in g.iterrows():
            ci = (float(r["ci_low"]), float(r["ci_high"])) if r["ci_low"] == r["ci_low"] and r["ci_low"] is not None else None
            p = float(r["p_holm"])
            out.append(
                Finding(
                    "Counterfactual pairs",
                    describe(r["metric"]),
                    where,
                    f"{r['variant']} vs original" + (f" ({model})" if model else ""),
                    float(r["mean"]),
                    ci,
                    p,
                    p_label=f"Holm over {size} tests ({fam})",
                    n=f"{int(r['n_pairs'])} pairs",
                    flags=uncertainty_flags(float(r["mean"]), ci, p, alpha=alpha),
                    anchor="counterfactual",
                    family=FAMILY,
                    family_size=size,
                    domain=where,
                    n_min=int(r["n_pairs"]),
                )
            )
    return out


def counterfactual_section(b, loaded):
    """The section (skipped when no table has counterfactual pairs with continuations)."""
    name, df = _find(loaded)
    sec = Section("counterfactual", "Counterfactual pairs")
    axis = ", ".join(sorted(str(a) for a in df["axis"].dropna().unique())) if "axis" in df.columns else "pairs"
    pm = pair_metrics(df, embed=_embedder(sec))
    summary = summarise_pairs(pm, n_boot=b.n_boot, seed=b.seed, level=1 - b.alpha)
    clustered = "clusters" in " ".join(summary["method"].astype(str))
    sec.text.insert(
        0,
        f"From table `{name}` (axis {axis}): {pm['pair_id'].nunique()} pairs. Each variant's continuations are compared with "
        "the original's: label metrics' mean score and share differences (variant - original), the Wasserstein-1 distance "
        "of their score distributions, the cosine similarity of sentence embeddings and ROUGE-L. Intervals are BCa "
        f"bootstraps over {'clusters of pairs (template or page)' if clustered else 'pairs'} at {1 - b.alpha:.0%}; the signed "
        "measures are tested with a Wilcoxon signed-rank test, Holm-corrected over the variants and signed measures of each "
        "model. A value that could not be computed is null with its reason in the pairs table's `error` column.",
    )
    summary.insert(3, "measure", [describe(m) for m in summary["metric"]])
    show = ["model", "variant", "measure", "n_pairs", "mean", "ci_low", "ci_high", "p_holm"]
    b.table(sec, "counterfactual_summary", summary, "Each measure's mean over pairs with its paired interval and test.", show=show)
    b.table(sec, "counterfactual_pairs", pm, "Every pair's measures (one row per pair, variant and measure).", max_rows=20)
    b.fig_dir.mkdir(parents=True, exist_ok=True)
    p = _plot(summary, b.fig_dir / "counterfactual_means.png", f"Counterfactual pairs ({axis}): means over pairs")
    b.figures.append(p)
    sec.figures.append(Figure(p, "Each measure's mean over pairs (dot) and its BCa interval (bar); 0 = no change for the signed measures."))
    sec.headline.extend(_findings(summary, axis, b.alpha))
    return sec


register_section("Counterfactual pairs", counterfactual_section)
