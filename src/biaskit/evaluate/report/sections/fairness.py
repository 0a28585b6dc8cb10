"""Report section "Is the metric fair?": per-group validity of each metric (``annotate validate --by``).

Self-contained (its own figure code); it registers itself on the section model. Reads the agreement-stage
rows written by :mod:`biaskit.annotate.groupvalidity` (``group_*`` per group, ``diff_*``/``ratio_*`` per pair
of groups with Holm-corrected permutation p-values). A headline line is added for every metric whose
difference between two groups is significant after the Holm correction over every pair of groups and every
rate of that metric (at the report's alpha; stricter than the table's per-rate correction), e.g.
"vader misses negative for texts about group A 2.1x as often as for group B (95% CI 1.4-3.0, Holm p = 0.003,
n = 120/131)".
"""

from __future__ import annotations

from pathlib import Path

from biaskit.evaluate.report.model import Finding, Section, _Skip, register_section

MAX_HEADLINES_PER_METRIC = 3


def _rate_label(rate: str) -> str:
    if rate.startswith("miss_rate_"):
        return f"miss rate of {rate[len('miss_rate_') :]}"
    if rate.startswith("false_alarm_rate_"):
        return f"false-alarm rate of {rate[len('false_alarm_rate_') :]}"
    return rate.replace("_", " ")


def rates_chart(df, path: str | Path | None, *, title: str):
    """Bars: one cluster per rate (accuracy, miss and false-alarm rate per class), one bar per group, with
    the 95% bootstrap CI as an error bar. Small groups (n < 30) are hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np
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
            if r not in sub.index or sub.loc[r, "value"] != sub.loc[r, "value"] or sub.loc[r, "value"] is None:
                continue
            v = float(sub.loc[r, "value"])
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
        fig.savefig(path)
    return fig


def finding_text(
    metric: str, rate: str, by: str, hi_group: str, lo_group: str, ratio: float, ci, p: float, n_hi: int | None, n_lo: int | None
) -> str:
    """The headline sentence for a ratio of rates (``hi_group`` has the higher rate)."""
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


def fairness_findings(df, alpha: float = 0.05) -> list[dict]:
    """Significant (Holm p < alpha) differences between groups, strongest first per metric, as dicts with the
    headline ``text`` and its numbers. Error rates are stated as ratios (higher over lower group); accuracy
    as a difference in percentage points."""
    grp = df[df["measure"].astype(str).str.startswith("group_")]
    n_of = {(r["metric"], r["measure"][len("group_") :], r["group"]): r["n_items"] for _, r in grp.iterrows()}
    pair = _significant_pairs(df, alpha)
    out = []
    for metric, sub in pair.groupby("metric", sort=True):
        for _, d in sub.head(MAX_HEADLINES_PER_METRIC).iterrows():
            rate = d["measure"][len("diff_") :]
            if rate == "accuracy":
                out.append(_accuracy_finding(metric, d, n_of))
            else:
                out.append(_rate_finding(df, metric, rate, d, n_of))
    return out


def _significant_pairs(df, alpha: float):
    """The ``diff_*`` rows whose p, Holm-corrected over every pair AND every rate of their metric, is below
    ``alpha`` (in ``p_value``), sorted per metric by that p, then by the largest gap."""
    from biaskit.evaluate.stats.significance import holm

    pair = df[df["measure"].astype(str).str.startswith("diff_") & df["p_value_raw"].notna()].copy()
    # the headline family: every pair AND every rate of a metric (the table's p_value corrects over pairs only, per
    # rate; with 2k + 1 rates per metric that alone would let about one A/A comparison in four into the headline)
    pair["p_family"] = float("nan")
    for _metric, idx in pair.groupby("metric").groups.items():
        raw = pair.loc[idx, "p_value_raw"].astype(float).to_numpy()
        pair.loc[idx, "p_family"] = holm(raw) if len(raw) > 1 else raw
    pair["p_value"] = pair["p_family"]
    pair = pair[pair["p_value"] < alpha]
    return pair.assign(_size=-pair["value"].abs()).sort_values(["metric", "p_value", "_size"], kind="stable")  # smallest p, then largest gap


def _finding(metric, rate, d, n_of, *, hi, lo, estimate, ci, text) -> dict:
    return {
        "metric": metric,
        "rate": rate,
        "group": hi,
        "group_b": lo,
        "estimate": estimate,
        "ci": ci,
        "p": float(d["p_value"]),
        "by": d["group_by"] or "group",
        "text": text,
        "n": f"{n_of.get((metric, rate, hi))}/{n_of.get((metric, rate, lo))}",
    }


def _accuracy_finding(metric, d, n_of) -> dict:
    """An accuracy gap (row ``d``), as a difference in percentage points, higher group first."""
    import pandas as pd

    rate, by, a, b = "accuracy", d["group_by"] or "group", d["group"], d["group_b"]
    hi, lo = (a, b) if d["value"] > 0 else (b, a)
    text = (
        (
            f"{metric} is right for {by} {hi} {abs(d['value']) * 100:.0f} percentage points more often than for "
            f"{by} {lo} (95% CI {min(abs(d['ci_low']), abs(d['ci_high'])) * 100:.0f}-"
            f"{max(abs(d['ci_low']), abs(d['ci_high'])) * 100:.0f}, Holm p = {d['p_value']:.2g}, "
            f"n = {n_of.get((metric, rate, hi))}/{n_of.get((metric, rate, lo))})"
        )
        if pd.notna(d["ci_low"])
        else f"{metric} accuracy differs between {by} {a} and {b} by {d['value']:+.3f} (Holm p = {d['p_value']:.2g})"
    )
    return _finding(metric, rate, d, n_of, hi=hi, lo=lo, estimate=abs(float(d["value"])), ci=None, text=text)


def _rate_finding(df, metric, rate, d, n_of) -> dict:
    """An error-rate gap (row ``d``), as the ratio of the higher rate over the lower with its CI (from the pair's
    ``ratio_*`` row); as a difference when the rate is 0 in one group (no ratio)."""
    import pandas as pd

    by, a, b = d["group_by"] or "group", d["group"], d["group_b"]
    rr = df[(df["measure"] == f"ratio_{rate}") & (df["metric"] == metric) & (df["group"] == a) & (df["group_b"] == b)]
    r = rr.iloc[0] if len(rr) else None
    ratio = None if r is None or pd.isna(r["value"]) else float(r["value"])
    ci = None if r is None or pd.isna(r["ci_low"]) or pd.isna(r["ci_high"]) else (float(r["ci_low"]), float(r["ci_high"]))
    if ratio is None or ratio == 0:
        # the rate is 0 in one group: say it as a difference
        hi, lo = (a, b) if d["value"] > 0 else (b, a)
        text = (
            f"{metric}: {_rate_label(rate)} {abs(d['value']):.2f} higher for {by} {hi} than for {by} {lo} "
            f"(Holm p = {d['p_value']:.2g}, n = {n_of.get((metric, rate, hi))}/{n_of.get((metric, rate, lo))})"
        )
        return _finding(metric, rate, d, n_of, hi=hi, lo=lo, estimate=abs(float(d["value"])), ci=ci, text=text)
    hi, lo = a, b
    if ratio < 1:
        hi, lo, ratio = b, a, 1 / ratio
        ci = (1 / ci[1], 1 / ci[0]) if ci and ci[0] > 0 else None
    text = finding_text(metric, rate, by, hi, lo, ratio, ci, float(d["p_value"]), n_of.get((metric, rate, hi)), n_of.get((metric, rate, lo)))
    return _finding(metric, rate, d, n_of, hi=hi, lo=lo, estimate=ratio, ci=ci, text=text)


#: the columns of the per-group and the between-groups tables (those the rows have, in this order)
_GROUP_COLS = ("metric", "group_by", "group", "measure", "value", "ci_low", "ci_high", "n_items", "note", "error")
_PAIR_COLS = ("metric", "group_by", "group", "group_b", "measure", "value", "ci_low", "ci_high", "p_value_raw", "p_value", "n_items", "note", "error")


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
            "and the false-alarm rate (the metric says c, the humans do not), with 95% bootstrap CIs over the group's items. "
            "Every pair of groups is compared (difference and ratio with bootstrap CIs; two-sided permutation p-value over items, "
            f"Holm-corrected over the pairs). Groups with fewer than 30 items are flagged ('small group'), not hidden; few "
            "annotators per item make the human labels themselves noisy (see the agreement section)."
        ],
    )
    grp = df[df["measure"].astype(str).str.startswith("group_")]
    b.table(
        sec,
        "fairness_by_group",
        grp[[c for c in _GROUP_COLS if c in grp.columns]],
        "Per-group validity of each metric (95% bootstrap CIs).",
        max_rows=80,
    )
    pair = df[df["measure"].astype(str).str.startswith(("diff_", "ratio_"))]
    b.table(
        sec,
        "fairness_pairs",
        pair[[c for c in _PAIR_COLS if c in pair.columns]],
        "Differences between groups (p_value: Holm-corrected permutation p).",
        max_rows=60,
    )
    _rate_figures(b, sec, grp)
    _fairness_headline(b, sec, df, grp)
    return sec


def _fairness_rows(loaded):
    """The per-group validation rows (``group_*``, ``diff_*``, ``ratio_*``) of every table that has them, as one frame."""
    import pandas as pd

    frames = [d for d in loaded.values() if all(c in d.columns for c in ("measure", "value", "group", "group_b", "metric"))]
    frames = [d[d["measure"].astype(str).str.startswith(("group_", "diff_", "ratio_"))] for d in frames]
    frames = [d for d in frames if len(d)]
    if not frames:
        raise _Skip("no agreement table has per-group validation rows: run `biaskit annotate validate ... --by group`")
    return pd.concat(frames, ignore_index=True)


def _rate_figures(b, sec: Section, grp) -> None:
    """One chart per metric: accuracy, miss and false-alarm rates per group."""
    for metric, sub in grp.groupby("metric", sort=True):
        rates = sub[
            sub["measure"].isin(
                ["group_accuracy"] + [m for m in sub["measure"].unique() if m.startswith(("group_miss_rate_", "group_false_alarm_rate_"))]
            )
        ]
        if rates["value"].notna().any():
            b.figure(
                sec,
                f"fairness_{metric}",
                rates_chart,
                rates,
                title=f"{metric}: rates per group (95% bootstrap CI)",
                caption=f"{metric}: accuracy, miss rate and false-alarm rate per class for each group; error bars are 95% "
                "bootstrap CIs over the group's items; hatched bars: fewer than 30 items.",
            )


def _fairness_headline(b, sec: Section, df, grp) -> None:
    """The significant differences in one sentence of the section and as headline findings (a small group flagged)."""
    found = fairness_findings(df, b.alpha)
    if found:
        sec.text.append("Significant after Holm correction over all pairs and rates of the metric: " + "; ".join(f["text"] for f in found) + ".")
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
        sec.headline.append(
            Finding(
                "Metric fairness",
                f"{f['metric']}: {_rate_label(f['rate'])}",
                f["by"],
                f"{f['group']} vs {f['group_b']}",
                f["estimate"],
                f["ci"],
                f["p"],
                "Holm",
                f["n"],
                [f"small group ({', '.join(small)})"] if small else [],
                "fairness",
                text=f["text"],
            )
        )


register_section("Metric fairness", fairness_section)
