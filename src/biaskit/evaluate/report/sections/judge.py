"""Report section "Can this judge be trusted?": the consistency and validity of an LLM judge (``judge`` metric).

From a scores table with ``judge_*`` columns: the flip rate over option orders (``judge_flip``), the change
with the instruction's wording (``judge_prompt_flip``) and test-retest agreement (``judge_retest``), each a
share of rows with a 95 % Wilson score interval, overall and per group. From agreement-stage tables (``biaskit
annotate agreement`` / ``annotate validate --metric judge [--by GROUP]``): the judge-vs-human Cohen's kappa
(from the validation's confusion matrix, with a percentile bootstrap interval over items) beside the
human-vs-human kappa (mean pairwise Cohen's kappa, and Fleiss' kappa, of the agreement module), and the
per-group validity rows. When the judge agrees with the humans less than they agree with each other, or
hardly above chance, the section says so in words.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from biaskit.evaluate.report.metric_validity import confusion_of, kappa_from_confusion, metric_validity
from biaskit.evaluate.report.model import Finding, Section, SkipAnalysis, find_table, register_section
from biaskit.evaluate.stats.inference import proportion_interval


def judge_wilson_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float] | None:
    """The statistics layer's Wilson interval of the share ``k / n``
    (:func:`biaskit.evaluate.stats.inference.proportion_interval`); None for n = 0."""
    return None if n <= 0 else proportion_interval(k, n, level=level)


def kappa_bootstrap_interval(cm: np.ndarray, *, n_boot: int = 2000, seed: int = 0, level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of Cohen's kappa over items. The items enter kappa only through the
    confusion matrix, so resampling n items with replacement is a multinomial draw of n from its cells."""
    n = int(cm.sum())
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, (cm / n).ravel(), size=n_boot).reshape(n_boot, *cm.shape)
    po = np.trace(draws, axis1=1, axis2=2) / n
    pe = (draws.sum(axis=1) * draws.sum(axis=2)).sum(axis=1) / (n * n)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = (po - pe) / (1 - pe)
    k = k[np.isfinite(k)]
    if not len(k):
        return None
    a = (1 - level) / 2
    return float(np.quantile(k, a)), float(np.quantile(k, 1 - a))


def _rate_rows(df, col: str, by: str | None) -> list[dict[str, Any]]:
    rows = []
    parts = [("all", df)] + ([(str(g), d) for g, d in df.groupby(by, sort=True, dropna=False)] if by else [])
    for g, d in parts:
        v = d[col].dropna()
        n, k = int(len(v)), int(v.astype(bool).sum())
        ci = judge_wilson_interval(k, n)
        rows.append(
            {"group": g, "n": n, "count": k, "share": k / n if n else None, "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None}
        )
    return rows


CHECKS = (
    ("judge_flip", "flip rate", "the label changed when the options were listed in another order", "judge.orders=2"),
    ("judge_prompt_flip", "prompt sensitivity", "the label changed with a paraphrased instruction", "judge.instructions=a.yaml,b.yaml"),
    ("judge_retest", "test-retest agreement", "all sampled answers to the same prompt gave the same label", "judge.repeats=5"),
)


def _consistency(b, sec: Section, df, by: str | None) -> None:
    import pandas as pd

    out = []
    for col, what, meaning, how in CHECKS:
        if col not in df.columns or not df[col].notna().any():
            sec.text.append(f"{what.capitalize()}: not measured in this run (score with `-p {how}`).")
            continue
        for r in _rate_rows(df, col, by):
            out.append({"check": what, **r})
        top = out[-1] if not by else next(r for r in out if r["check"] == what and r["group"] == "all")
        lo, hi = top["ci_low"], top["ci_high"]
        sec.text.append(f"{what.capitalize()} ({meaning}): {top['share']:.1%} of {top['n']} texts (95 % Wilson CI {lo:.1%} to {hi:.1%}).")
        sec.headline.append(
            Finding("Judge consistency", what, "judge", "all texts", top["share"], (lo, hi), None, "", f"{top['n']} texts", [], "judge")
        )
    if out:
        b.table(sec, "judge_consistency", pd.DataFrame(out), "Judge consistency: share of texts per check, with 95 % Wilson score intervals.")


def _human_kappa(v) -> tuple[str, float, tuple[float, float] | None] | None:
    hh = v[v["metric"].isna()] if "metric" in v.columns else v
    for measure in ("cohen_kappa_mean", "fleiss_kappa"):
        r = hh[(hh["measure"] == measure) & hh["estimate"].notna()]
        if len(r):
            x = r.iloc[0]
            ci = (float(x["ci_low"]), float(x["ci_high"])) if x.get("ci_low") == x.get("ci_low") and x.get("ci_low") is not None else None
            return measure, float(x["estimate"]), ci
    return None


def _validity(b, sec: Section, loaded: dict[str, Any]) -> None:
    import pandas as pd

    names = [n for n, d in loaded.items() if {"measure", "estimate", "metric"} <= set(d.columns)]
    if not names:
        sec.text.append(
            "Validity against humans: no agreement-stage table was given (run `biaskit annotate agreement` and "
            "`biaskit annotate validate --metric judge --by group`, and pass their tables to the report)."
        )
        return
    v = pd.concat([loaded[n] for n in names], ignore_index=True)
    got = confusion_of(v, "judge")
    cm = got[0] if got is not None else None
    human = _human_kappa(v)
    rows = []
    if cm is not None:
        k, ci = kappa_from_confusion(cm), kappa_bootstrap_interval(cm)
        rows.append(
            {
                "pair": "judge vs human majority",
                "measure": "cohen_kappa",
                "estimate": k,
                "ci_low": ci[0] if ci else None,
                "ci_high": ci[1] if ci else None,
                "n_items": int(cm.sum()),
                "interval": "percentile bootstrap over items",
            }
        )
    if human is not None:
        rows.append(
            {
                "pair": "human vs human",
                "measure": human[0],
                "estimate": human[1],
                "ci_low": human[2][0] if human[2] else None,
                "ci_high": human[2][1] if human[2] else None,
                "n_items": None,
                "interval": "bootstrap (agreement module)" if human[2] else "",
            }
        )
    if rows:
        b.table(sec, "judge_kappa", pd.DataFrame(rows), "Judge-vs-human Cohen's kappa beside the humans' agreement with each other.")
    sec.text.append(_verdict(cm, human))
    mv = metric_validity(loaded, "judge")
    if mv.valid is False:
        sec.text.append(f"Metric not valid here: {mv.reason}. Its findings elsewhere on this page are therefore never evidence of a gap.")
    per = v[(v["metric"] == "judge") & v.get("group", pd.Series([None] * len(v))).notna()] if "group" in v.columns else v.iloc[0:0]
    if len(per):
        b.table(sec, "judge_group_validity", per, "Per-group validity of the judge (annotate validate --metric judge --by GROUP).", max_rows=60)
    else:
        sec.text.append("Per-group validity: no `annotate validate --metric judge --by GROUP` rows were given.")


def _verdict(cm: np.ndarray | None, human) -> str:
    """The plain-words verdict on the judge's agreement with humans."""
    if cm is None:
        return "Judge vs humans: no `annotate validate --metric judge` rows were given, so the judge's validity is unknown."
    k = kappa_from_confusion(cm)
    acc = float(np.trace(cm) / cm.sum()) if cm.sum() else float("nan")
    rows = cm.sum(axis=1)
    base = float(rows.max() / cm.sum()) if cm.sum() else float("nan")
    s = (
        f"Judge vs human majority: Cohen's kappa {k:.2f} (accuracy {acc:.1%} on {int(cm.sum())} items; majority-class baseline "
        f"{base:.1%}, the accuracy of always answering the humans' most frequent label)."
    )
    if not math.isfinite(k) or k < 0.2:
        s += " The judge agrees with the humans hardly better than chance: do not use its labels as a measure."
    if human is not None and math.isfinite(k) and k < human[1]:
        s += f" It agrees with the humans less than they agree with each other ({human[0]} {human[1]:.2f})."
    elif human is not None and math.isfinite(k):
        s += f" That is as high as the humans' agreement with each other ({human[0]} {human[1]:.2f}) or higher."
    return s


def judge_section(b: Any, loaded: dict[str, Any]) -> Section | None:
    """The section, or None when no table has judge columns (a run without a judge: the section is not listed)."""
    if not any("judge_label" in d.columns for d in loaded.values()):
        return None
    try:
        name, df = find_table(loaded, ["judge_label"], "scores")
    except SkipAnalysis as why:
        raise SkipAnalysis(f"{why} (score with `biaskit score -m judge`)") from None
    by = "group" if "group" in df.columns else None
    n_err = int(df["judge_error"].notna().sum()) if "judge_error" in df.columns else 0
    sec = Section(
        "judge",
        "Can this judge be trusted?",
        [
            f"From table `{name}` ({len(df)} rows, {n_err} with judge_error). The judge's label is the most probable of the label "
            "words in its next-token distribution; a judge that changes its label with the order of the options, the wording of "
            "the instruction or a second sample measures the prompt as much as the text."
        ],
    )
    _consistency(b, sec, df, by)
    _validity(b, sec, loaded)
    return sec


register_section("Can this judge be trusted?", judge_section)
