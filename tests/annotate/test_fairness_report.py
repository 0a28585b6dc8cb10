"""Report section "Is the metric fair?" from per-group validation rows."""

from __future__ import annotations

import pytest

from biaskit.annotate.validation import validate_metric
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
    rows = {(r["measure"], r["group"], r["group_b"]): r for r in v.table.to_pylist()}
    # headline family = every pair and every rate of the metric; Holm by hand: sort raw p ascending, multiply the
    # i-th (0-based) by (m - i), running maximum, cap at 1. Strongest first: smallest p, then the largest gap
    diffs = [r for r in v.table.to_pylist() if r["measure"].startswith("diff_") and r["p_value_raw"] is not None]
    order = sorted(range(len(diffs)), key=lambda i: diffs[i]["p_value_raw"])
    run, fam = 0.0, {}
    for i, j in enumerate(order):
        run = max(run, min(1.0, (len(diffs) - i) * diffs[j]["p_value_raw"]))
        fam[j] = run
    sig = sorted((j for j in fam if fam[j] < 0.05), key=lambda j: (fam[j], -abs(diffs[j]["value"])))
    assert len(lines) == min(3, len(sig))
    top, want = lines[0], diffs[sig[0]]
    rate = want["measure"][len("diff_") :]
    assert top.p == pytest.approx(fam[sig[0]]) and top.comparison in ("A vs B", "B vs A")
    if rate.startswith("miss_rate_"):
        ratio = rows[("ratio_" + rate, "A", "B")]
        hi, lo = ("A", "B") if ratio["value"] >= 1 else ("B", "A")
        r = ratio["value"] if hi == "A" else 1 / ratio["value"]
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
        assert acc[0].text.startswith(f"vader is right for group A {d['value'] * 100:.0f} percentage points more often than for group B")
    # every ratio finding is oriented high over low
    for f in lines:
        if "as often as" in f.text:
            assert f.estimate >= 1 and "Holm p =" in f.text


def test_no_significant_difference_gives_no_headline_line(tmp_path):
    ann, samples = synthetic_round({"A": 0.8, "B": 0.8}, n=60, seed=1)
    v = validate_metric(ann, samples, metric="vader", by="group", n_boot=200, seed=0, calibrate=False)
    assert all(r["p_value"] >= 0.05 for r in v.table.to_pylist() if r["measure"] == "diff_accuracy")
    write_table(v.table, tmp_path / "run" / "validation.parquet", stage="agreement")
    res = build_report(tmp_path / "run", tmp_path / "report", n_boot=50)
    assert "fairness" in res.sections and not [f for f in res.headline if f.kind == "Metric fairness"]
    assert "No difference between groups is significant" in (tmp_path / "report" / "report.md").read_text()
