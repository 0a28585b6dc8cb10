"""`annotate plan --ppi`: the labels per group the PPI++ interval needs, checked against simulated rounds."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from biaskit.annotate.ppiplan import plan_ppi, predicted_half_widths
from biaskit.errors import BiaskitError
from biaskit.evaluate.stats.ppi import PPIData, PPIShare, ppi_mean, ppi_mean_batch


def _population(rng, n_rows, p, recall, fpr=0.05):
    truth = rng.random(n_rows) < p
    pred = np.where(truth, rng.random(n_rows) < recall, rng.random(n_rows) < fpr)
    return truth.astype(float), pred.astype(float)


def test_prediction_at_no_extra_labels_is_the_pilot_interval():
    rng = np.random.default_rng(0)
    y, yh = _population(rng, 1000, 0.3, 0.8)
    half, _ = predicted_half_widths(PPIData(y[:80], yh[:80], yh[80:]), [0])
    r = ppi_mean(y[:80], yh[:80], yh[80:])
    assert half[0] == pytest.approx((r["ci_high"] - r["ci_low"]) / 2, rel=1e-12)


@pytest.mark.parametrize("p, recall, target", [(0.3, 0.9, 0.04), (0.2, 0.6, 0.05)])
def test_planned_labels_reach_the_target_half_width_in_simulated_rounds(p, recall, target):
    rng = np.random.default_rng(42)
    n_rows, n_pilot = 4000, 60
    y, yh = _population(rng, n_rows, p, recall)
    lab = np.zeros(n_rows, bool)
    lab[:n_pilot] = True
    df = pd.DataFrame({"group": "g", "metric": np.where(yh == 1, "neg", "pos"), "human": np.where(lab, np.where(y == 1, "neg", "pos"), None)})
    plan = plan_ppi(df, PPIShare(metric_column="metric", human_column="human", label="neg", by="group"), target=target)
    e = plan["groups"]["g"]
    assert e["n_more"] > 0 and e["half_width_planned"] <= target
    # simulate 300 rounds of the planned size from the same population: fresh labels at random
    n = n_pilot + e["n_more"]
    sims = 300
    idx = np.argsort(rng.random((sims, n_rows)), axis=1)
    yy, pp = y[idx], yh[idx]
    r = ppi_mean_batch(yy[:, :n], pp[:, :n], pp[:, n:])
    achieved = float(np.mean((r["ci_high"] - r["ci_low"]) / 2))
    assert abs(achieved - target) / target < 0.2, (achieved, target, e)


def test_the_plan_cli_writes_a_plan_that_sample_can_read(tmp_path):
    from typer.testing import CliRunner

    from biaskit.annotate.planning import quotas, read_plan
    from biaskit.cli import app

    rng = np.random.default_rng(1)
    rows = []
    for g in ("a", "b"):
        y, yh = _population(rng, 800, 0.3, 0.8)
        for i in range(800):
            rows.append(
                {"group": g, "vader_label": "negative" if yh[i] else "positive", "human": ("negative" if y[i] else "positive") if i < 50 else None}
            )
    src = tmp_path / "s.csv"
    pd.DataFrame(rows).to_csv(src, index=False)
    out = tmp_path / "plan.json"
    args = [
        "annotate",
        "plan",
        "--ppi",
        str(src),
        "--metric-column",
        "vader_label",
        "--label",
        "negative",
        "--human-column",
        "human",
        "--target-ci",
        "0.05",
        "--out",
        str(out),
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    plan = read_plan(out)
    assert plan["view"] == "ppi" and set(quotas(plan)) == {"a", "b"} and json.loads(out.read_text())["groups"]["a"]["n_more"] > 0
    res = CliRunner().invoke(app, ["annotate", "plan", "--out", str(out)])
    assert res.exit_code == 1 and "[E348]" in res.output
    with pytest.raises(BiaskitError) as exc:
        plan_ppi(pd.DataFrame(rows), PPIShare(metric_column="vader_label", human_column="human", label="negative", by="group"), target=0.7)
    assert exc.value.code == "E348"
