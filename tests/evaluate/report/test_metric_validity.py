"""A metric whose validation failed cannot produce "evidence of a gap": its findings say "metric not valid here" with the
reason and a link to its validation, and every accuracy is shown beside its majority-class baseline."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from biaskit.evaluate.report.build import build_report
from biaskit.evaluate.report.headline import verdicts
from biaskit.evaluate.report.metric_validity import MAX_ORDER_FLIP, MIN_KAPPA, metric_validity
from biaskit.io import write_table

#: the shipped 135M judge on 50 of Sheng et al.'s sentences: it never answers "neutral"; rows: human label, columns: judge
#: label. Right: 10 + 0 + 5 = 15 of 50 = 0.30; the humans' most frequent label is negative (20 of 50 = 0.40)
CONFUSION = {("negative", "negative"): 10, ("negative", "positive"): 10, ("neutral", "negative"): 8, ("neutral", "positive"): 7}
CONFUSION |= {("positive", "negative"): 10, ("positive", "positive"): 5}


def _row(measure, value, **kw):
    base = {"round": "r1", "task_type": "regard", "metric": "judge", "group_by": None, "group": None, "group_a": None, "group_b": None}
    return {**base, "measure": measure, "estimate": value, **kw}


def _validation_rows(confusion=CONFUSION) -> list[dict]:
    n = sum(confusion.values())
    right = sum(v for (h, j), v in confusion.items() if h == j)
    rows = [_row("accuracy", right / n, n_items=n)]
    rows += [_row(f"confusion:{h}:{j}", float(v), n_items=n) for (h, j), v in confusion.items()]
    g = {"group_by": "gender"}
    # per group (gender none / male): the false-alarm rate of negative, and the one pair whose Fisher p is 0.049 (a family
    # of one test, so Holm leaves it at 0.049); ratio 0.36 / 0.10 = 3.6
    rows += [
        _row("group_accuracy", 0.28, n_items=25, group="none", **g),
        _row("group_accuracy", 0.32, n_items=25, group="male", **g),
        _row("group_miss_rate_negative", 0.5, n_items=10, group="none", **g),
        _row("group_miss_rate_negative", 0.5, n_items=10, group="male", **g),
        _row("group_false_alarm_rate_negative", 0.36, n_items=15, group="none", **g),
        _row("group_false_alarm_rate_negative", 0.10, n_items=15, group="male", **g),
        _row("diff_false_alarm_rate_negative", 0.26, group_a="none", group_b="male", ci_low=0.01, ci_high=0.5, p_value=0.049, **g),
        _row("ratio_false_alarm_rate_negative", 3.6, group_a="none", group_b="male", ci_low=1.02, ci_high=12.7, p_value=0.049, **g),
    ]
    return rows


def _run(tmp_path, confusion=CONFUSION, flips=48):
    run = tmp_path / "run"
    rows = _validation_rows(confusion)
    cols = sorted({k for r in rows for k in r})
    write_table(pa.Table.from_pylist([{c: r.get(c) for c in cols} for r in rows]), run / "validation.parquet", stage="agreement")
    scores = [{"text_id": f"t{i}", "group": "none" if i % 2 else "male", "judge_label": "negative", "judge_flip": i < flips} for i in range(50)]
    write_table(pa.Table.from_pylist(scores), run / "scores.parquet")
    return build_report(run, tmp_path / "report", n_boot=20)


def test_the_shipped_judges_false_alarm_gap_is_not_evidence_but_metric_not_valid_with_the_reason(tmp_path):
    res = _run(tmp_path)
    [f] = [f for f in res.headline if f.kind == "Metric fairness"]
    assert f.p == pytest.approx(0.049) and f.estimate == pytest.approx(3.6) and "3.6x" in f.text
    # kappa by hand: p_o = 0.30; row sums 20, 15, 15 and column sums 28 (negative), 0 (neutral), 22 (positive):
    # p_e = (20*28 + 15*0 + 15*22) / 50^2 = 0.356; kappa = (0.30 - 0.356) / (1 - 0.356) = -0.0870
    mv = metric_validity(
        {"v": pd.read_parquet(tmp_path / "run" / "validation.parquet"), "s": pd.read_parquet(tmp_path / "run" / "scores.parquet")}, "judge"
    )
    assert (mv.accuracy, mv.majority, mv.order_flip) == pytest.approx((0.30, 0.40, 0.96)) and mv.majority_label == "negative"
    assert mv.kappa == pytest.approx((0.30 - 0.356) / 0.644, abs=1e-12) and mv.valid is False
    assert f.invalid == mv.reason and f.invalid_anchor == "judge"
    assert "accuracy 0.30 is not above the majority-class baseline 0.40 (always answering 'negative', 50 items)" in f.invalid
    assert f"Cohen's kappa -0.09 < {MIN_KAPPA:g}" in f.invalid and f"for 96% of texts (> {MAX_ORDER_FLIP:.0%})" in f.invalid
    [line] = [v for v in verdicts(res.headline) if v.kind == "Metric fairness"]
    assert line.verdict == f"metric not valid here: {mv.reason}" and "evidence of a gap" not in line.verdict
    md, html = (tmp_path / "report" / "report.md").read_text(), res.html.read_text()
    assert f"**{line.title}**: metric not valid here: accuracy 0.30" in md and "([see the validation](#judge))" in md
    assert "<a href='#judge'>see the validation</a>" in html and "evidence of a gap" not in html.split("id='contents'")[0]
    csv = pd.read_csv(res.tables["headline"])
    assert csv.loc[csv["finding"] == "Metric fairness", "verdict"].str.startswith("metric not valid here: accuracy 0.30").all()


def test_a_valid_metric_keeps_its_evidence_and_every_accuracy_shows_its_majority_baseline(tmp_path):
    # the same counts with the judge right on the diagonal 40 of 50 (0.80 > baseline 0.40) and a stable order: valid
    good = {("negative", "negative"): 18, ("negative", "positive"): 2, ("neutral", "neutral"): 10, ("neutral", "positive"): 5}
    good |= {("positive", "positive"): 12, ("positive", "negative"): 3}
    res = _run(tmp_path, good, flips=2)
    [f] = [f for f in res.headline if f.kind == "Metric fairness"]
    assert not f.invalid and [v.verdict for v in verdicts(res.headline) if v.kind == "Metric fairness"] == ["evidence of a gap"]
    agree = pd.read_csv(res.tables["agreement"])
    acc = agree[(agree["measure"] == "accuracy") & agree["group"].isna()]
    assert acc["estimate"].tolist() == [pytest.approx(0.80)] and acc["majority_baseline"].tolist() == [pytest.approx(20 / 50)]
    per = pd.read_csv(res.tables["fairness_by_group"])
    # per group: the largest human-label count of the group (10 negative of 25 items) over the group's items
    assert per.loc[per["measure"] == "group_accuracy", "majority_baseline"].tolist() == [pytest.approx(10 / 25)] * 2
    text = (tmp_path / "report" / "report.md").read_text()
    assert "majority-class baseline 40.0%" in text and "`judge`: accuracy 0.80 against the majority-class baseline 0.40." in text
