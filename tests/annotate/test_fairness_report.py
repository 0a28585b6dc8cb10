"""Report section "Is the metric fair?" from per-group validation rows."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from statsmodels.stats.multitest import multipletests

from biaskit.annotate.validation import validate_metric
from biaskit.bootstrap import BootSpec
from biaskit.evaluate.report.build import build_report
from biaskit.io import write_table

from .test_groupvalidity import synthetic_round


def test_report_has_the_fairness_section_a_figure_per_metric_and_a_headline_line(tmp_path):
    ann, samples = synthetic_round({"A": 0.9, "B": 0.6}, n=300, seed=4)
    v = validate_metric(ann, samples, metric="vader", by="group", n_boot=500, seed=0, calibrate=False)
    write_table(v.table, tmp_path / "run" / "validation.parquet", stage="agreement")
    res = build_report(tmp_path / "run", tmp_path / "report", n_boot=50)
    assert "fairness" in res.sections
    assert any(p.name.startswith("fairness_vader") for p in res.figures)
    lines = [f for f in res.headline if f.kind == "Metric fairness"]
    assert lines, res.headline
    rows = {(r["measure"], r["group_a"], r["group_b"]): r for r in v.table.to_pylist()}
    # headline families: the primary (accuracy of every pair) and the secondary (every pair x every other rate) of the
    # metric, Holm within each (statsmodels). Strongest first: smallest p, then the largest gap
    diffs = [r for r in v.table.to_pylist() if r["measure"].startswith("diff_") and r["p_value"] is not None]
    fam = {}
    for primary in (True, False):
        idx = [j for j, r in enumerate(diffs) if (r["measure"] == "diff_accuracy") == primary]
        fam |= dict(zip(idx, multipletests([diffs[j]["p_value"] for j in idx], method="holm")[1]))
    assert all(diffs[j]["p_holm"] == pytest.approx(fam[j], rel=1e-12) for j in fam)  # the table's p_holm is the report's
    sig = sorted((j for j in fam if fam[j] < 0.05), key=lambda j: (fam[j], -abs(diffs[j]["estimate"])))
    assert len(lines) == min(3, len(sig))
    top, want = lines[0], diffs[sig[0]]
    rate = want["measure"][len("diff_") :]
    assert top.p == pytest.approx(fam[sig[0]]) and top.comparison in ("A vs B", "B vs A")
    if rate.startswith("miss_rate_"):
        ratio = rows[("ratio_" + rate, "A", "B")]
        hi, lo = ("A", "B") if ratio["estimate"] >= 1 else ("B", "A")
        r = ratio["estimate"] if hi == "A" else 1 / ratio["estimate"]
        assert top.text.startswith(
            f"vader misses {rate[len('miss_rate_') :]} for texts about group {hi} {r:.1f}x as often as for group {lo} (95% CI "
        )
        assert top.estimate == pytest.approx(r)
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Is the metric fair?" in md and top.text in md
    # the accuracy gap is among the findings, in percentage points
    d = rows[("diff_accuracy", "A", "B")]
    acc = [f for f in lines if f.metric == "vader: accuracy"]
    if acc:
        assert acc[0].text.startswith(f"vader is right for group A {d['estimate'] * 100:.0f} percentage points more often than for group B")
    # every ratio finding is oriented high over low
    for f in lines:
        if "as often as" in f.text:
            assert f.estimate >= 1 and "Holm p =" in f.text


def test_no_significant_difference_gives_one_uncertain_line_with_its_verdict(tmp_path):
    ann, samples = synthetic_round({"A": 0.8, "B": 0.8}, n=60, seed=1)
    v = validate_metric(ann, samples, metric="vader", by="group", n_boot=200, seed=0, calibrate=False)
    assert all(r["p_holm"] >= 0.05 for r in v.table.to_pylist() if r["measure"] == "diff_accuracy")
    write_table(v.table, tmp_path / "run" / "validation.parquet", stage="agreement")
    res = build_report(tmp_path / "run", tmp_path / "report", n_boot=50)
    lines = [f for f in res.headline if f.kind == "Metric fairness"]
    assert "fairness" in res.sections and len(lines) == 1 and lines[0].flags and lines[0].metric == "vader: accuracy"
    md = (tmp_path / "report" / "report.md").read_text()
    assert "No difference between groups is significant" in md
    # the verdict: no evidence, with the smallest gap from the lower group's accuracy that groups of these sizes see
    # with power 0.8 at the family's Bonferroni alpha (0.05 / family size); statsmodels' power at that gap is 0.8
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    f = lines[0]
    p0, (n_hi, n_lo) = f.base_rate, f.n_sizes
    m = re.search(r"no evidence at this size: at n = (\d+) / (\d+), gaps under ([0-9.]+) cannot be seen", md)
    assert m and (int(m[1]), int(m[2])) == (n_hi, n_lo), md
    gap = float(m[3])

    def power(g):
        return max(
            NormalIndPower().power(effect_size=abs(proportion_effectsize(p0 + s * g, p0)), nobs1=n_hi, ratio=n_lo / n_hi, alpha=0.05 / f.family_size)
            for s in (1, -1)
            if 0 <= p0 + s * g <= 1
        )

    assert power(gap) >= 0.8 > power(gap - 0.01)  # rounded up to whole percentage points: 0.01 less is below the planned power
    csv = pd.read_csv(tmp_path / "report" / "tables" / "headline.csv")
    row = csv[csv["finding"] == "Metric fairness"].iloc[0]
    assert row["verdict"].startswith("no evidence at this size") and row["family"] == "metric_fairness" and row["family_size"] == f.family_size


def _planted_round(acc: dict[str, float], n: int, seed: int):
    """A crowd round with binary sentiment: humans agree; the metric is right with probability acc[group]."""
    rng = np.random.default_rng(seed)
    samples, ann = [], []
    for g, a in acc.items():
        for i in range(n):
            sid = f"{g}-{i:04d}"
            t = ["negative", "positive"][rng.integers(2)]
            m = t if rng.random() < a else ("positive" if t == "negative" else "negative")
            samples.append({"sample_id": sid, "round": "r1", "task_type": "sentiment", "text": "x", "group": g, "vader_label": m, "is_gold": False})
            ann += [{"sample_id": sid, "round": "r1", "annotator": w, "label": t, "task_type": "sentiment"} for w in "abc"]
    return pa.Table.from_pylist(ann), pa.Table.from_pylist(samples)


@pytest.mark.parametrize("planted", [True, False])
def test_planted_group_is_significant_in_the_section_headline_and_headline_csv_and_a_a_is_not(tmp_path, planted):
    acc = {f"g{i}": 0.9 for i in range(7)}
    if planted:
        acc["g0"] = 0.6
    ann, samples = _planted_round(acc, 100, seed=21)
    v = validate_metric(ann, samples, metric="vader", by="group", n_boot=0, seed=0, calibrate=False)
    write_table(v.table, tmp_path / "run" / "validation.parquet", stage="agreement")
    res = build_report(tmp_path / "run", tmp_path / "report", n_boot=50)  # default settings: alpha 0.05, min gap 0.05
    lines = [f for f in res.headline if f.kind == "Metric fairness"]
    csv = pd.read_csv(tmp_path / "report" / "tables" / "headline.csv")
    fair = csv[csv["finding"] == "Metric fairness"]
    md = (tmp_path / "report" / "report.md").read_text()
    # the page's p of an accuracy gap is Holm within the primary family (the accuracy of every pair of groups), by hand
    diffs = {(r["measure"], r["group_a"], r["group_b"]): r for r in v.table.to_pylist() if r["measure"].startswith("diff_")}
    acc_raw = {k: r["p_value"] for k, r in diffs.items() if k[0] == "diff_accuracy" and r["p_value"] is not None}
    holm, run = {}, 0.0
    for i, k in enumerate(sorted(acc_raw, key=acc_raw.get)):
        run = max(run, min(1.0, (len(acc_raw) - i) * acc_raw[k]))
        holm[k] = run
    if planted:
        sig = [f for f in lines if not f.flags]
        assert sig and all("g0" in f.comparison for f in sig)
        assert (fair["verdict"] == "evidence of a gap").any() and all("g0" in c for c in fair[fair["verdict"] == "evidence of a gap"]["comparison"])
        assert "evidence of a gap" in md and "Significant within the metric-fairness family" in md
        for f in sig:
            a, b = f.comparison.split(" vs ")
            rate = {"vader: accuracy": "accuracy"}.get(f.metric)
            if rate:
                k = ("diff_accuracy", a, b) if ("diff_accuracy", a, b) in holm else ("diff_accuracy", b, a)
                assert f.p == pytest.approx(holm[k], rel=1e-12) and f.family_size == len(acc_raw) == 21
    else:
        assert all(f.flags for f in lines) and not (fair["verdict"] == "evidence of a gap").any()
        assert "No difference between groups is significant" in md


def _simulated_rows(rng, acc: dict[str, float], n: int) -> pd.DataFrame:
    """Per-group validation rows (:func:`biaskit.annotate.groupvalidity.group_rows`) of one simulated round: binary
    labels, the metric right with probability ``acc[group]``."""
    from biaskit.annotate.groupvalidity import GroupedItems, RowKey, group_rows

    yt, yp, gr = [], [], []
    lab = np.array(["negative", "positive"])
    for g, a in acc.items():
        t = rng.integers(0, 2, n)
        p = np.where(rng.random(n) < a, t, 1 - t)
        yt += list(lab[t])
        yp += list(lab[p])
        gr += [g] * n
    return pd.DataFrame(group_rows(GroupedItems(yt, yp, gr), list(lab), key=RowKey("r", "sentiment", "m", "group"), boot=BootSpec(n_boot=0, seed=0)))


def test_primary_accuracy_family_finds_a_planted_30_point_gap_at_40_per_group_with_few_false_gaps():
    from biaskit.evaluate.report.sections.fairness import fairness_findings

    rng = np.random.default_rng(2026)
    rounds, groups = 150, [f"g{i}" for i in range(7)]
    found = 0
    for _ in range(rounds):
        sig = [f for f in fairness_findings(_simulated_rows(rng, {g: 0.6 if g == "g0" else 0.9 for g in groups}, 40)) if f["significant"]]
        found += any(f["rate"] == "accuracy" and "g0" in (f["group"], f["group_b"]) for f in sig)
    false_gaps = sum(any(f["significant"] for f in fairness_findings(_simulated_rows(rng, dict.fromkeys(groups, 0.9), 40))) for _ in range(rounds))
    # power >= 0.70 (one family over all 147 pair x rate tests found it 49-61% of the time); family-wise false gaps over
    # both families <= 5%
    assert found / rounds >= 0.70, found
    assert false_gaps / rounds <= 0.05, false_gaps
