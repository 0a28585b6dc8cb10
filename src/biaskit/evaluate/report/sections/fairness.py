"""Report section "Is the metric fair?": per-group validity of each metric (``annotate validate --by``).

Self-contained (its own figure code); it registers itself on the section model. Reads the agreement-stage
rows written by :mod:`biaskit.annotate.groupvalidity` (``group_*`` per group with Wilson / BCa intervals,
``diff_*``/``ratio_*`` per pair of groups with Newcombe / log-ratio intervals and Fisher exact p-values). The
p-values are Holm-corrected within the metric-fairness family (:mod:`biaskit.evaluate.stats.families`: every
pair of groups x every rate of one metric), the same p that ``annotate validate`` writes. A headline line is
added for every difference significant in that family (at the report's alpha), e.g. "vader misses negative for
texts about group A 2.1x as often as for group B (95% CI 1.4-3.0, Holm p = 0.003, n = 120/131)"; a metric
without one gets one uncertain line (its largest accuracy gap), so the headline's verdict says how many items
per group a gap of the smallest size of interest would need.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from biaskit.evaluate.report.metric_validity import with_majority_baseline
from biaskit.evaluate.report.model import Finding, Section, SkipAnalysis, register_section, uncertainty_flags
from biaskit.evaluate.report.plots import save_figure
from biaskit.evaluate.stats.columns import INTERVAL
from biaskit.evaluate.stats.families import holm_metric_fairness

MAX_HEADLINES_PER_METRIC = 3


def _rate_label(rate: str) -> str:
    if rate.startswith("miss_rate_"):
        return f"miss rate of {rate[len('miss_rate_') :]}"
    if rate.startswith("false_alarm_rate_"):
        return f"false-alarm rate of {rate[len('false_alarm_rate_') :]}"
    return rate.replace("_", " ")


def rates_chart(df, path: str | Path | None, *, title: str):
    """Bars: one cluster per rate (accuracy, miss and false-alarm rate per class), one bar per group, with
    the 95% interval of the rows (Wilson for rates) as an error bar. Small groups (n < 30) are hatched."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure

    rates = list(dict.fromkeys(df["measure"]))
    groups = list(dict.fromkeys(df["group"]))
    fig = MplFigure(figsize=(max(6.0, 0.35 * len(rates) * max(1, len(groups)) + 3), 4.2), dpi=110)
    ax = fig.add_subplot(111)
    width = min(0.8 / max(1, len(groups)), 0.35)
    x = np.arange(len(rates))
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
    for i, g in enumerate(groups):
        sub = df[df["group"] == g].drop_duplicates("measure").set_index("measure")
        pos = x - 0.4 + width * (i + 0.5)
        for px, r in zip(pos, rates):
            if r not in sub.index or sub.loc[r, "estimate"] != sub.loc[r, "estimate"] or sub.loc[r, "estimate"] is None:
                continue
            v = float(sub.loc[r, "estimate"])
            small = isinstance(sub.loc[r].get("note"), str) and "small group" in sub.loc[r].get("note")
            ax.bar(
                [px],
                [v],
                width=width,
                color=colours[i % len(colours)],
                hatch="//" if small else None,
                edgecolor="white" if small else None,
                label=g if px == pos[0] or r == rates[0] else None,
            )
            lo, hi = sub.loc[r].get("ci_low"), sub.loc[r].get("ci_high")
            if lo is not None and hi is not None and lo == lo and hi == hi:
                ax.errorbar([px], [v], yerr=[[max(v - float(lo), 0)], [max(float(hi) - v, 0)]], fmt="none", ecolor="black", capsize=2, lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels([_rate_label(r[len("group_") :]) for r in rates], rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("rate (0..1)")
    ax.set_title(title, fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    if seen:
        ax.legend(seen.values(), seen.keys(), fontsize=8, title="group", title_fontsize=8)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path)  # atomically, through the output layer
    return fig


@dataclass(frozen=True)
class RateGap:
    """Two groups of the grouping column ``by`` compared on the rate ``rate`` of ``metric``: ``hi`` has the higher
    rate, ``lo`` the lower."""

    metric: str
    rate: str
    by: str
    hi: str
    lo: str


@dataclass(frozen=True)
class _Estimate:
    """A finding's estimate with its interval (None: none) and its value under no difference (``null``: 0 for a
    difference, 1 for a ratio)."""

    value: float
    ci: tuple[float, float] | None
    null: float = 0.0


def finding_text(gap: RateGap, ratio: float, ci, p: float, n: tuple[int | None, int | None]) -> str:
    """The headline sentence for a ratio of rates ``gap`` (``n``: the sizes of its higher and lower group)."""
    metric, rate, by, hi_group, lo_group = gap.metric, gap.rate, gap.by, gap.hi, gap.lo
    n_hi, n_lo = n
    ci_s = f"95% CI {ci[0]:.1f}-{ci[1]:.1f}, " if ci else ""
    n_s = f", n = {n_hi}/{n_lo}" if n_hi is not None and n_lo is not None else ""
    p_s = f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"
    if rate.startswith("miss_rate_"):
        what = f"misses {rate[len('miss_rate_') :]} for texts about {by} {hi_group} {ratio:.1f}x as often as for {by} {lo_group}"
    elif rate.startswith("false_alarm_rate_"):
        what = (
            f"wrongly labels texts about {by} {hi_group} as {rate[len('false_alarm_rate_') :]} {ratio:.1f}x as often as texts about {by} {lo_group}"
        )
    else:
        what = f"has {ratio:.1f}x the {_rate_label(rate)} for texts about {by} {hi_group} than for {by} {lo_group}"
    return f"{metric} {what} ({ci_s}Holm p = {p_s}{n_s})"


def fairness_findings(df, alpha: float = 0.05, *, representative: bool = False) -> list[dict]:
    """Significant differences between groups (p < alpha within the metric-fairness family), strongest first per
    metric, as dicts with the headline ``text`` and its numbers. Error rates are stated as ratios (higher over
    lower group); accuracy as a difference in percentage points. ``representative``: a metric without a
    significant difference gets its largest accuracy gap (an uncertain finding), so its verdict can be stated."""
    grp = df[df["measure"].astype(str).str.startswith("group_")]
    n_of = {(r["metric"], r["measure"][len("group_") :], r["group"]): r["n_items"] for _, r in grp.iterrows()}
    v_of = {(r["metric"], r["measure"][len("group_") :], r["group"]): r["estimate"] for _, r in grp.iterrows()}
    fam = _family_pairs(df)
    pair = fam[fam["p_holm"] < alpha].assign(_size=lambda x: -x["estimate"].abs()).sort_values(["metric", "p_holm", "_size"], kind="stable")
    out = []
    for metric in sorted(set(fam["metric"].dropna())):
        sub = pair[pair["metric"] == metric]
        if not len(sub) and representative:
            acc = fam[(fam["metric"] == metric) & (fam["measure"] == "diff_accuracy") & fam["estimate"].notna()]
            sub = acc.loc[[acc["estimate"].abs().idxmax()]] if len(acc) else sub
        for _, d in sub.head(MAX_HEADLINES_PER_METRIC).iterrows():
            rate = d["measure"][len("diff_") :]
            f = _accuracy_finding(metric, d, n_of) if rate == "accuracy" else _rate_finding(df, metric, rate, d, n_of)
            lo_rate = v_of.get((metric, rate, f["group_b"]))
            f["base_rate"] = None if lo_rate is None or lo_rate != lo_rate else float(lo_rate)
            f["significant"] = bool(f["p"] < alpha)
            out.append(f)
    return out


def _family_pairs(df):
    """The ``diff_*`` rows with a test, with ``p_holm`` Holm-corrected within their metric-fairness family,
    ``family`` and ``family_size``: per metric and grouping column, the primary family (accuracy of every pair of
    groups) and the secondary one (every pair x every other rate), by
    :func:`biaskit.evaluate.stats.families.holm_metric_fairness`, the function ``annotate validate --by`` writes
    its ``p_holm`` with."""
    pair = df[df["measure"].astype(str).str.startswith("diff_") & df["p_value"].notna()].copy()
    pair["group_by"] = pair["group_by"].fillna("group") if "group_by" in pair.columns else "group"
    for c, fill in (("p_holm", float("nan")), ("family", ""), ("family_size", 0)):
        pair[c] = fill
    pair["p_holm"] = pair["p_holm"].astype(float)
    for (metric, by), g in pair.groupby(["metric", "group_by"], sort=False, dropna=False):
        got = holm_metric_fairness(list(g["measure"]), [float(x) for x in g["p_value"]], {"metric": metric, "group_by": by})
        pair.loc[g.index, "p_holm"] = [float("nan") if a is None else a for a, _, _ in got]
        pair.loc[g.index, "family"] = [name for _, name, _ in got]
        pair.loc[g.index, "family_size"] = [k for _, _, k in got]
    return pair


def _significant_pairs(df, alpha: float):
    """The ``diff_*`` rows significant (p < ``alpha``) within their metric-fairness family, sorted per metric by
    p, then by the largest gap."""
    pair = _family_pairs(df)
    pair = pair[pair["p_holm"] < alpha]
    return pair.assign(_size=-pair["estimate"].abs()).sort_values(["metric", "p_holm", "_size"], kind="stable")  # smallest p, then largest gap


def _finding(gap: RateGap, d, n_of, est: _Estimate, text: str) -> dict:
    """The finding of ``gap`` (row ``d`` of its test; ``n_of``: the group sizes) with the estimate ``est``."""
    metric, rate, hi, lo = gap.metric, gap.rate, gap.hi, gap.lo
    n_hi, n_lo = n_of.get((metric, rate, hi)), n_of.get((metric, rate, lo))
    return {
        "metric": metric,
        "rate": rate,
        "group": hi,
        "group_b": lo,
        "estimate": est.value,
        "ci": est.ci,
        "null": est.null,  # the estimate's value under no difference: 0 for a difference, 1 for a ratio
        "p": float(d["p_holm"]),
        "family": str(d.get("family") or ""),
        "family_size": int(d["family_size"]) if d.get("family_size") == d.get("family_size") and d.get("family_size") is not None else None,
        "by": d["group_by"] or "group",
        "text": text,
        "n": f"{n_hi}/{n_lo}",
        "n_sizes": (int(n_hi), int(n_lo)) if n_hi is not None and n_lo is not None else None,
        "n_min": min(int(n_hi), int(n_lo)) if n_hi is not None and n_lo is not None else None,
    }


def _oriented_diff_ci(d, hi_is_a: bool):
    """The Newcombe interval of row ``d`` (group minus group_b) for the higher group minus the lower one."""
    import pandas as pd

    if pd.isna(d["ci_low"]) or pd.isna(d["ci_high"]):
        return None
    lo, hi = float(d["ci_low"]), float(d["ci_high"])
    return (lo, hi) if hi_is_a else (-hi, -lo)


def _accuracy_finding(metric, d, n_of) -> dict:
    """An accuracy gap (row ``d``), as a difference in percentage points, higher group first, with its Newcombe CI."""
    rate, by, a, b = "accuracy", d["group_by"] or "group", d["group_a"], d["group_b"]
    hi, lo = (a, b) if d["estimate"] > 0 else (b, a)
    ci = _oriented_diff_ci(d, hi == a)
    ci_s = f"95% CI {ci[0] * 100:.0f} to {ci[1] * 100:.0f}, " if ci else ""
    text = (
        f"{metric} is right for {by} {hi} {abs(d['estimate']) * 100:.0f} percentage points more often than for "
        f"{by} {lo} ({ci_s}Holm p = {d['p_holm']:.2g}, n = {n_of.get((metric, rate, hi))}/{n_of.get((metric, rate, lo))})"
    )
    return _finding(RateGap(metric, rate, by, hi, lo), d, n_of, _Estimate(abs(float(d["estimate"])), ci), text)


def _rate_finding(df, metric, rate, d, n_of) -> dict:
    """An error-rate gap (row ``d``), as the ratio of the higher rate over the lower with its CI (from the pair's
    ``ratio_*`` row); as a difference (Newcombe CI) when the rate is 0 in one group (no ratio)."""
    import pandas as pd

    by, a, b = d["group_by"] or "group", d["group_a"], d["group_b"]
    rr = df[(df["measure"] == f"ratio_{rate}") & (df["metric"] == metric) & (df["group_a"] == a) & (df["group_b"] == b)]
    r = rr.iloc[0] if len(rr) else None
    ratio = None if r is None or pd.isna(r["estimate"]) else float(r["estimate"])
    ci = None if r is None or pd.isna(r["ci_low"]) or pd.isna(r["ci_high"]) else (float(r["ci_low"]), float(r["ci_high"]))
    if ratio is None or ratio == 0:
        # the rate is 0 in one group: say it as a difference
        hi, lo = (a, b) if d["estimate"] > 0 else (b, a)
        text = (
            f"{metric}: {_rate_label(rate)} {abs(d['estimate']):.2f} higher for {by} {hi} than for {by} {lo} "
            f"(Holm p = {d['p_holm']:.2g}, n = {n_of.get((metric, rate, hi))}/{n_of.get((metric, rate, lo))})"
        )
        return _finding(RateGap(metric, rate, by, hi, lo), d, n_of, _Estimate(abs(float(d["estimate"])), _oriented_diff_ci(d, hi == a)), text)
    hi, lo = a, b
    if ratio < 1:
        hi, lo, ratio = b, a, 1 / ratio
        ci = (1 / ci[1], 1 / ci[0]) if ci and ci[0] > 0 else None
    gap = RateGap(metric, rate, by, hi, lo)
    text = finding_text(gap, ratio, ci, float(d["p_holm"]), (n_of.get((metric, rate, hi)), n_of.get((metric, rate, lo))))
    return _finding(gap, d, n_of, _Estimate(ratio, ci, null=1.0), text)


#: the columns of the per-group and the between-groups tables (those the rows have, in this order)
_GROUP_COLS = ("metric", "group_by", "group", "measure", "estimate", "majority_baseline", "ci_low", "ci_high", "method", "n_items", "note", "reason")
_PAIR_COLS = (
    "metric",
    "group_by",
    "group_a",
    "group_b",
    "measure",
    *INTERVAL,
    "method",
    "p_value",
    "p_floor",
    "p_holm",
    "family",
    "family_size",
    "n_items",
    "note",
    "reason",
)


def fairness_section(b, loaded):
    """The report section (raises the builder's skip exception when no table has per-group validation rows)."""
    df = _fairness_rows(loaded)
    by = ", ".join(sorted({str(x) for x in df["group_by"].dropna()})) or "group"
    sec = Section(
        "fairness",
        "Is the metric fair?",
        [
            f"Does each metric make more mistakes on texts about some groups ({by}) than about others? Per group: accuracy, "
            "macro-F1 and Spearman against the human labels, and per class the miss rate (the humans say c, the metric does not) "
            "and the false-alarm rate (the metric says c, the humans do not). Rates are shares of the group's items, with 95% "
            "Wilson intervals; macro-F1 and Spearman have no closed form and get BCa bootstrap intervals (`method`). "
            "Every pair of groups is compared: the difference with Newcombe's hybrid score interval, the ratio with the log "
            "interval (Katz), and the two-sided Fisher exact test of the 2x2 table (`p_value`); `p_holm` is its p Holm-corrected within its "
            "metric-fairness family (`family`, `family_size` tests): the primary family holds the accuracy of every pair of groups "
            "of the metric, the secondary family every pair x every miss and false-alarm rate; `p_floor` is the "
            "smallest p the test can give with those counts. Groups with fewer than 30 items are flagged ('small group'), not "
            "hidden; few annotators per item make the human labels themselves noisy (see the agreement section)."
        ],
    )
    df = _with_report_families(with_majority_baseline(df))
    grp, shown = _measure_rows(df, "group_", _GROUP_COLS)
    b.table(
        sec,
        "fairness_by_group",
        shown,
        "Per-group validity of each metric (95% Wilson intervals for rates, BCa bootstrap for macro-F1 and Spearman; `method`); one row per `group`; "
        "`majority_baseline` beside each accuracy: the accuracy of always answering the group's most frequent human label.",
        max_rows=80,
    )
    b.table(
        sec,
        "fairness_pairs",
        _measure_rows(df, ("diff_", "ratio_"), _PAIR_COLS)[1],
        "Differences between groups (`group_a` minus / over `group_b`; Newcombe / log-ratio intervals; `p_value`: Fisher exact, `p_holm`: Holm-corrected within its "
        "metric-fairness family: primary = accuracy, secondary = the other rates).",
        max_rows=60,
    )
    _rate_figures(b, sec, grp)
    _fairness_headline(b, sec, df, grp)
    return sec


def _with_report_families(df):
    """``df`` with the ``diff_*`` rows' ``p_holm``, ``family`` and ``family_size`` of the report's two metric-fairness
    families (:func:`_family_pairs`), so the pairs table shows the p the headline reads."""
    pair = _family_pairs(df)
    out = df.copy()
    cols = ("p_holm", "family", "family_size")
    for c in cols:
        if c not in out.columns:
            out[c] = None
        out[c] = out[c].astype(object)
        out.loc[pair.index, c] = pair[c].astype(object)
    # a ratio row is the same test as its difference row: the same p and family
    by_pair = {(r["metric"], r["group_a"], r["group_b"], r["measure"][len("diff_") :]): r for _, r in pair.iterrows()}
    for idx, r in out[out["measure"].astype(str).str.startswith("ratio_")].iterrows():
        d = by_pair.get((r["metric"], r["group_a"], r["group_b"], str(r["measure"])[len("ratio_") :]))
        if d is not None:
            for c in cols:
                out.at[idx, c] = d[c]
    return out


def _measure_rows(df, prefixes, cols):
    """(the rows whose ``measure`` starts with ``prefixes``, those rows with the ``cols`` they have: the table shown)."""
    rows = df[df["measure"].astype(str).str.startswith(prefixes)]
    return rows, rows[[c for c in cols if c in rows.columns]]


def _fairness_rows(loaded):
    """The per-group validation rows (``group_*``, ``diff_*``, ``ratio_*``) of every table that has them, as one frame."""
    import pandas as pd

    frames = [d for d in loaded.values() if all(c in d.columns for c in ("measure", "estimate", "group", "group_a", "group_b", "metric"))]
    frames = [d[d["measure"].astype(str).str.startswith(("group_", "diff_", "ratio_"))] for d in frames]
    frames = [d for d in frames if len(d)]
    if not frames:
        raise SkipAnalysis("no agreement table has per-group validation rows: run `biaskit annotate validate ... --by group`")
    return pd.concat(frames, ignore_index=True)


def _rate_figures(b, sec: Section, grp) -> None:
    """One chart per metric: accuracy, miss and false-alarm rates per group."""
    for metric, sub in grp.groupby("metric", sort=True):
        rates = sub[
            sub["measure"].isin(
                ["group_accuracy"] + [m for m in sub["measure"].unique() if m.startswith(("group_miss_rate_", "group_false_alarm_rate_"))]
            )
        ]
        if rates["estimate"].notna().any():
            b.figure(
                sec,
                f"fairness_{metric}",
                rates_chart,
                rates,
                title=f"{metric}: rates per group (95% Wilson CI)",
                caption=f"{metric}: accuracy, miss rate and false-alarm rate per class for each group; error bars are 95% "
                "Wilson intervals; hatched bars: fewer than 30 items.",
            )


def _fairness_headline(b, sec: Section, df, grp) -> None:
    """The significant differences in one sentence of the section and as headline findings; a metric without one
    gets its largest accuracy gap as an uncertain finding (folded under its verdict). A small group is a caution."""
    found = fairness_findings(df, b.alpha, representative=True)
    sig = [f for f in found if f["significant"]]
    if sig:
        sec.text.append(
            "Significant within the metric-fairness family (Holm over every pair and rate of the metric): " + "; ".join(f["text"] for f in sig) + "."
        )
    else:
        sec.text.append(
            f"No difference between groups is significant after Holm correction over all pairs and rates of each metric (alpha = {b.alpha})."
        )
    for f in found:
        small = [
            g
            for g in (f["group"], f["group_b"])
            if any((r["group"] == g) and isinstance(r.get("note"), str) for _, r in grp[grp["metric"] == f["metric"]].iterrows())
        ]
        ci = f["ci"]
        shifted = (ci[0] - f["null"], ci[1] - f["null"]) if ci else None  # a ratio's interval excludes "no difference" when it excludes 1
        k = f["family_size"]
        sec.headline.append(
            Finding(
                "Metric fairness",
                f"{f['metric']}: {_rate_label(f['rate'])}",
                f["by"],
                f"{f['group']} vs {f['group_b']}",
                f["estimate"],
                ci,
                f["p"],
                f"Holm, {k} tests: {_family_words(f)}" if k else "Holm",
                f["n"],
                uncertainty_flags(f["estimate"] - f["null"], shifted, f["p"], alpha=b.alpha),
                "fairness",
                text=f["text"],
                cautions=[f"small group ({', '.join(small)})"] if small else [],
                family="metric_fairness",
                family_size=k,
                domain=f["by"],
                base_rate=f["base_rate"],
                n_min=f["n_min"],
                n_sizes=f["n_sizes"],
                source_metric=str(f["metric"]),
                family_label=f["family"],
            )
        )


def _family_words(f: dict) -> str:
    """What the finding's family holds, in words: the accuracy of every pair, or every pair x every other rate."""
    if f["rate"] == "accuracy":
        return f"accuracy of every pair of groups of {f['metric']} (primary family)"
    return f"every pair x miss / false-alarm rate of {f['metric']} (secondary family)"


register_section("Metric fairness", fairness_section)
