"""Report section "The metric corrected by human labels": prediction-powered inference per group.

Made when the run holds an annotation round: a samples table (``annotate sample``), its human labels (an
annotations table, majority vote, or a labels table of ``annotate aggregate``) and the scored table the round was
drawn from (the metric's label column of the round's task, e.g. ``vader_label`` for sentiment, and ``group``).
Per group and label it shows the metric-only share next to the PPI++ share (see
:mod:`biaskit.evaluate.stats.ppi`). :func:`round_ppi_gaps` gives the ``gap_ppi`` rows for the headline.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from biaskit.evaluate.report.model import Finding, Section, SkipAnalysis, register_section, small_n_cautions, uncertainty_flags
from biaskit.evaluate.report.plots import finish_figure, new_figure
from biaskit.evaluate.stats.families import family_name, holm_list
from biaskit.evaluate.stats.inference import wald_p
from biaskit.evaluate.stats.ppi import PPIShare, ppi_table
from biaskit.evaluate.stats.ppiround import HUMAN_COLUMN, join_round

#: the metric label column a round's task type is compared with
TASK_COLUMNS = {"sentiment": "vader_label", "regard": "regard_label", "toxicity": "toxicity_label"}
GROUP = "group"


def _round_tables(loaded):
    """(samples, annotations or None, labels or None, scored name, scored frame, metric column) of the run's round
    (annotations win over labels when the run holds both)."""
    samples = next((d for d in loaded.values() if {"sample_id", "round", "task_type", "text"} <= set(d.columns)), None)
    if samples is None or not len(samples):
        raise SkipAnalysis("no annotation round in the run (a samples table of `annotate sample` with its annotations or labels)")
    ann = next((d for d in loaded.values() if {"sample_id", "annotator", "label"} <= set(d.columns)), None)
    labs = next((d for d in loaded.values() if {"sample_id", "label", "confidence"} <= set(d.columns) and "annotator" not in d.columns), None)
    if ann is None and labs is None:
        raise SkipAnalysis("the round has no human labels yet (no annotations or labels table)")
    task = str(samples["task_type"].dropna().iloc[0]) if samples["task_type"].notna().any() else ""
    col = TASK_COLUMNS.get(task)
    if col is None:
        raise SkipAnalysis(f"no metric label column is known for task type {task!r} (known: {', '.join(TASK_COLUMNS)})")
    for name, d in loaded.items():
        if d is not samples and {col, GROUP, "prompt_id"} <= set(d.columns) and "sample_id" not in d.columns:
            return samples, ann, labs, name, d, col
    raise SkipAnalysis(f"no scored table with columns {col}, {GROUP} and prompt_id to correct with the round's labels")


def round_ppi(loaded, *, level: float = 0.95):
    """(rows of :func:`~biaskit.evaluate.stats.ppi.ppi_table` for every label of the metric column, with a ``label``
    column first; scored table name; metric column; join info). Raises the report's skip exception without a round."""
    import pandas as pd

    samples, ann, labs, name, scored, col = _round_tables(loaded)
    joined, info = join_round(scored, samples, annotations=ann, labels=labs if ann is None else None)
    out = []
    for lab in sorted(set(joined[col].dropna().astype(str))):
        r = ppi_table(joined, PPIShare(metric_column=col, human_column=HUMAN_COLUMN, label=lab, by=GROUP), level=level)
        r.insert(0, "label", lab)
        out.append(r)
    return pd.concat(out, ignore_index=True), name, col, info


def round_ppi_gaps(loaded, *, level: float = 0.95):
    """The ``gap_ppi`` rows (label, group_a, group_b, estimate, ci_low, ci_high, se, ...) of the run's round, or None when
    the run holds no round: for the headline, which uses the PPI gap when a round exists."""
    try:
        rows, _, col, _ = round_ppi(loaded, level=level)
    except SkipAnalysis:
        return None
    g = rows[rows["measure"] == "gap_ppi"].reset_index(drop=True)
    g.insert(0, "metric_column", col)
    return g


#: the headline kind of the PPI gap (its verdict line is its own, next to the metric-only gaps')
PPI_GAP_KIND = "Largest group gap, corrected by human labels (PPI)"


def ppi_gap_finding(rows, col: str, label: str, *, alpha: float, stratified: bool = False) -> Finding | None:
    """The headline finding of a round: the largest |gap_ppi| of ``label`` between two groups, with its normal
    interval and its Wald p Holm-corrected over every pair of groups (the round's group-gap family; one measure).
    None when no pair has a PPI gap."""
    g = rows[(rows["label"] == label) & (rows["measure"] == "gap_ppi") & rows["estimate"].notna()].reset_index(drop=True)
    if not len(g):
        return None
    p_raw = [wald_p(v, se) for v, se in zip(g["estimate"], g["se"])]
    p_holm = holm_list(p_raw)
    k = sum(1 for p in p_raw if p == p)
    i = int(g["estimate"].abs().idxmax())
    r = g.loc[i]
    share = rows[(rows["label"] == label) & (rows["measure"] == "share_ppi")].set_index("group")
    n_lab = share["n_labelled"]
    na, nb = int(n_lab.get(r["group_a"], 0)), int(n_lab.get(r["group_b"], 0))
    est, ci = float(r["estimate"]) + 0.0, (float(r["ci_low"]), float(r["ci_high"]))
    p = float("nan") if (p_i := p_holm[i]) is None else float(p_i)
    cautions = small_n_cautions(na, nb) + (["the round was drawn in strata (score bins): PPI assumes a uniform sample"] if stratified else [])
    pair = share.reindex([r["group_a"], r["group_b"]])["estimate"]
    return Finding(
        PPI_GAP_KIND,
        f"{col}: share {label}",
        "the annotated round",
        f"{r['group_a']} vs {r['group_b']}",
        est,
        ci,
        p,
        f"Holm, {k} {'test' if k == 1 else 'tests'}: group pairs ({family_name('group_gap', {}, f'{col}={label}')})",
        f"{na} / {nb} labelled ({int(r['n_unlabelled'])} unlabelled)",
        uncertainty_flags(est, ci, p, alpha=alpha),
        "ppi",
        cautions=cautions,
        family="group_gap",
        family_size=k,
        domain="annotated round",
        base_rate=float(pair.mean()) if pair.notna().all() else None,
        n_min=min(na, nb),
    )


def ppi_plot(rows, label: str, path: Path | None, *, title: str):
    """Per group: the metric-only share and the PPI share of ``label`` with their 95% intervals."""
    sub = rows[(rows["label"] == label) & rows["measure"].isin(["share_metric", "share_ppi", "share_human"])]
    groups = sorted(sub["group"].unique(), key=str)
    fig = new_figure(max(5, 0.9 * len(groups) + 2), 3.8)
    ax = fig.add_subplot(111)
    x = np.arange(len(groups))
    for k, (m, colour) in enumerate((("share_metric", "#e76f51"), ("share_human", "#8d99ae"), ("share_ppi", "#2a9d8f"))):
        s = sub[sub["measure"] == m].set_index("group").reindex(groups)
        v, lo, hi = (s[c].to_numpy(dtype=float) for c in ("estimate", "ci_low", "ci_high"))
        ok = np.isfinite(v)
        ax.errorbar(
            x[ok] + (k - 1) * 0.2,
            v[ok],
            yerr=np.vstack([v[ok] - lo[ok], hi[ok] - v[ok]]),
            fmt="o",
            color=colour,
            capsize=3,
            label=m.replace("share_", ""),
        )
    ax.set_xticks(x, [str(g) for g in groups], rotation=30 if len(groups) > 4 else 0, ha="right" if len(groups) > 4 else "center", fontsize=8)
    ax.set_ylabel(f"share of {label}")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    return finish_figure(fig, path)


def ppi_section(b, loaded) -> Section:
    rows, name, col, info = round_ppi(loaded, level=1 - b.alpha)
    sec = Section(
        "ppi",
        "The metric corrected by human labels",
        [
            f"The metric `{col}` labels every text of `{name}`; the annotators labelled a sample ({info['matched']} texts "
            f"joined on {', '.join(info['keys'])}). Per group, prediction-powered inference (PPI++, Angelopoulos et al. "
            "2023) combines both: share_ppi = lambda * metric share on the unlabelled texts + the mean of (human - lambda * metric) "
            "on the labelled ones, lambda tuned for power. It is unbiased where the metric errs more for one group, and "
            "narrower than the human-only share. share_metric and share_human: Wilson intervals; gaps: Newcombe (metric, human) "
            "and a normal interval with SE = sqrt(se_a^2 + se_b^2) (PPI)."
        ],
    )
    if info["stratified"]:
        sec.text.append(
            "Caution: the round was drawn in strata (score bins), so the labelled texts are not a uniform random sample of "
            "each group, which PPI assumes; draw the round with `--bins 1` for an unbiased correction."
        )
    shares = rows[rows["measure"].str.startswith("share_")]
    b.table(sec, "ppi_shares", shares, "Per group and label: metric-only, human-only and PPI++ share with intervals.")
    b.table(sec, "ppi_gaps", rows[rows["measure"].str.startswith("gap_")], "Gaps between groups: metric-only, human-only and PPI.", max_rows=30)
    labels = list(dict.fromkeys(rows["label"]))
    focus = next((lab for lab in labels if lab == "negative"), labels[0])
    found = ppi_gap_finding(rows, col, focus, alpha=b.alpha, stratified=bool(info["stratified"]))
    if found is not None:  # when a round exists, the headline states the gap the human labels correct
        sec.headline.append(found)
    b.figure(
        sec,
        "ppi_shares",
        ppi_plot,
        rows,
        focus,
        title=f"Share of {focus} per group: metric vs human labels vs PPI++",
        caption=f"Share of {focus} per group ({int(100 * (1 - b.alpha))}% intervals): the metric alone, the annotated sample alone, and PPI++.",
    )
    return sec


register_section("The metric corrected by human labels", ppi_section)
