"""Report section: annotation agreement between annotators and validation of each metric against human labels."""

from __future__ import annotations

from biaskit.evaluate.report.metric_validity import metric_validity, with_majority_baseline
from biaskit.evaluate.report.model import MIN_GROUP_N, Finding, Section, find_table, register_section
from biaskit.evaluate.report.plots import agreement_chart, split_count_measures


def _agreement_section(b, loaded) -> Section:
    import pandas as pd

    name, df = find_table(loaded, ["round", "measure", "estimate"], "agreement")
    # agreement and validation figures may sit in several agreement-stage tables (e.g. agreement + validation)
    names = [n for n, d in loaded.items() if all(c in d.columns for c in ("round", "measure", "estimate"))]
    if len(names) > 1:
        df = pd.concat([loaded[n].assign(table=n) for n in names], ignore_index=True)
        name = "`, `".join(names)
    sec = Section("agreement", "Annotation agreement and metric validation", [f"From table(s) `{name}` ({len(df)} rows)."])
    if "metric" in df.columns:
        df = with_majority_baseline(df)
    b.table(
        sec,
        "agreement",
        df,
        "Agreement and validation figures; `majority_baseline` beside each accuracy: the accuracy of always answering the humans' most "
        "frequent label (a metric not above it has learnt nothing the label shares do not give).",
        max_rows=60,
    )
    _validity_text(sec, df, loaded)
    if "metric" in df.columns and df["metric"].notna().any():
        v = df[df["metric"].notna()]
        main = v[v["measure"].isin(SUMMARY_MEASURES)]
        v = main if len(main) else v
        b.figure(
            sec,
            "metric_vs_human",
            agreement_chart,
            v,
            title="Metric vs human labels",
            caption="Validation of each metric against the human majority label: "
            + ", ".join(dict.fromkeys(v["measure"]))
            + " (bootstrap CI where given; per-label precision/recall are in the table).",
        )
    else:
        b.skipped.append(("metric-vs-human agreement chart", f"table `{name}` has no validation rows (metric set)"))
    overall = df
    for c in ("metric", "annotator", "annotator_b"):
        if c in overall.columns:
            overall = overall[overall[c].isna()]
    if len(overall):
        lab = overall["task_type"] if "task_type" in overall.columns else overall["round"]
        ov = overall.assign(metric=[f"{r} ({t})" if t == t and t is not None else str(r) for r, t in zip(overall["round"], lab)])
        drawn, counts = split_count_measures(ov)
        left = f" Counts ({', '.join(counts)}) are not drawn on this scale; they are in the table above." if counts else ""
        if len(drawn):
            b.figure(
                sec,
                "inter_annotator_agreement",
                agreement_chart,
                drawn,
                title="Inter-annotator agreement",
                caption="Agreement coefficients between annotators per round (bootstrap CI where given)." + left,
            )
        for _, r in drawn[drawn["measure"].isin(("fleiss_kappa", "krippendorff_alpha_nominal"))].iterrows():
            n_items = None if pd.isna(r.get("n_items")) else int(r.get("n_items"))
            lo, hi = (r.get("ci_low"), r.get("ci_high"))
            ci = None if lo is None or hi is None or pd.isna(lo) or pd.isna(hi) else (float(lo), float(hi))
            value = None if pd.isna(r["estimate"]) else float(r["estimate"])
            cautions = [f"few items (n < {MIN_GROUP_N})"] if n_items is not None and n_items < MIN_GROUP_N else []
            sec.headline.append(
                Finding(
                    "Annotator agreement",
                    str(r["measure"]),
                    str(r["metric"]),
                    "",
                    value,
                    ci,
                    None,
                    "",
                    f"{n_items} items" if n_items is not None else "",
                    [],
                    "agreement",
                    cautions=cautions,
                )
            )
    return sec


def _validity_text(sec: Section, df, loaded) -> None:
    """One sentence per validated metric: valid here, or not valid here with the reasons (the same reading that
    marks its findings in the headline)."""
    if "metric" not in df.columns:
        return
    for m in sorted({str(x) for x in df["metric"].dropna()}):
        mv = metric_validity(loaded, m)
        if mv.valid is False:
            sec.text.append(f"`{m}`: metric not valid here: {mv.reason}. Its findings on this page are not evidence of a gap.")
        elif mv.valid and mv.accuracy is not None and mv.majority is not None:
            sec.text.append(f"`{m}`: accuracy {mv.accuracy:.2f} against the majority-class baseline {mv.majority:.2f}.")


SUMMARY_MEASURES = ("accuracy", "f1_weighted", "precision_weighted", "recall_weighted", "spearman_rho")


register_section("Agreement", _agreement_section)
