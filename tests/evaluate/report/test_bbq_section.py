"""The report's BBQ section: the scores of an answered BBQ table and the category x condition heat map."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biaskit.evaluate.stats.bbq import bbq_scores

FIX = Path(__file__).parents[2] / "fixtures" / "bbq" / "religion_expanded16.jsonl"


def test_report_has_the_bbq_table_equal_to_stats_bbq_and_a_heat_map(tmp_path):
    from biaskit.evaluate.report import build_report

    rows = [json.loads(x) for x in FIX.read_text(encoding="utf-8").splitlines()]
    df = pd.DataFrame(rows)
    df.to_parquet(tmp_path / "bbq_answered.parquet")
    res = build_report(tmp_path, tmp_path / "report", n_boot=50)
    assert "bbq" in res.sections
    key = "bbq_bbq_answered_prediction"
    got = pd.read_csv(res.tables[key])
    want = bbq_scores(df, "prediction", n_boot=50, seed=0)
    assert list(got["category"]) == list(want["category"]) == ["Religion", "Religion"]
    np.testing.assert_allclose(got["bias_score"].to_numpy(float), want["bias_score"].to_numpy(float))
    assert any(p.name.startswith(key) and p.suffix == ".png" for p in res.figures)


def test_report_without_a_bbq_table_has_no_bbq_section_and_lists_nothing(tmp_path):
    from biaskit.evaluate.report import build_report

    pd.DataFrame({"prompt_id": ["a", "b"], "text": ["x", "y"], "vader_label": ["positive", "negative"], "group": ["g", "h"]}).to_parquet(
        tmp_path / "scores.parquet"
    )
    res = build_report(tmp_path, tmp_path / "report", n_boot=20)
    assert "bbq" not in res.sections and not any("BBQ" in what for what, _ in res.skipped)


@pytest.mark.parametrize("values", [[10.0, -20.0], [float("nan"), 0.0]])
def test_heat_map_draws_negative_and_missing_scores(values):
    from biaskit.evaluate.report.sections.bbq import bias_heatmap

    s = pd.DataFrame({"category": ["Age", "Age"], "context_condition": ["ambig", "disambig"], "bias_score": values})
    fig = bias_heatmap(s, None, title="t")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == [("n/a" if v != v else f"{v:.1f}") for v in values]
