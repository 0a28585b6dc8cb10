"""The "Counterfactual pairs" report section on a scored pairs table built in the test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import biaskit.evaluate.report.sections.counterfactual as cf_section
from biaskit.evaluate.report import build_report
from biaskit.evaluate.report.headline import EVIDENCE


def _scores(tmp_path, shift: float):
    rng = np.random.default_rng(0)
    rows = []
    for k in range(16):
        base = float(rng.uniform(-0.5, 0.5))
        for variant, score in (("original", base), ("female", base - shift)):
            rows.append(
                {
                    "prompt_id": f"cf-{k}-{variant}",
                    "pair_id": f"cf-{k}",
                    "variant": variant,
                    "axis": "gender",
                    "text": f"prompt {k}",
                    "model": "m",
                    "sample_index": 0,
                    "continuation": "she was kind" if variant == "female" else "he was kind",
                    "vader_compound": score,
                    "vader_label": "positive" if score > 0.05 else ("negative" if score < -0.05 else "neutral"),
                }
            )
    path = tmp_path / "cf_scores.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path, pd.DataFrame(rows)


@pytest.fixture
def fake_encoder(monkeypatch):
    # a stand-in encoder (the real all-MiniLM-L6-v2 is tested against sentence-transformers elsewhere)
    monkeypatch.setattr(cf_section, "minilm_embedder", lambda: lambda texts: np.array([[1.0, len(t)] for t in texts]))


def test_section_renders_with_means_intervals_and_a_headline_verdict(tmp_path, fake_encoder):
    path, df = _scores(tmp_path, shift=0.4)
    res = build_report(tmp_path, tmp_path / "rep", tables={"cf_scores": path}, n_boot=200, seed=0)
    html = res.html.read_text(encoding="utf-8")
    assert "Counterfactual pairs" in html
    summary = pd.read_csv(tmp_path / "rep" / "tables" / "counterfactual_summary.csv").set_index("metric")
    # every pair's female score is the original's minus 0.4: the mean difference is exactly -0.4
    assert summary.loc["vader_diff", "mean"] == pytest.approx(-0.4)
    assert summary.loc["vader_w1", "mean"] == pytest.approx(0.4)
    assert summary.loc["rouge_l", "mean"] == pytest.approx(2 / 3)  # "she was kind" vs "he was kind"
    # cos([1, 12], [1, 11]) with the stand-in encoder
    assert summary.loc["cosine", "mean"] == pytest.approx((1 + 132) / (np.hypot(1, 12) * np.hypot(1, 11)))
    head = pd.read_csv(tmp_path / "rep" / "tables" / "headline.csv")
    row = head[(head["finding"] == "Counterfactual pairs") & head["measure"].str.contains("mean score")].iloc[0]
    assert row["estimate"] == pytest.approx(-0.4) and row["verdict"] == EVIDENCE


def test_section_is_listed_as_not_made_without_a_pairs_table(tmp_path):
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"prompt_id": ["a"], "text": ["t"], "continuation": ["c"], "vader_compound": [0.1]}), path)
    res = build_report(tmp_path, tmp_path / "rep", tables={"scores": path}, n_boot=20, seed=0)
    assert any(w == "Counterfactual pairs" for w, _ in res.skipped)


def test_section_prefers_the_scored_pairs_table_over_its_generations(tmp_path, fake_encoder):
    path, df = _scores(tmp_path, shift=0.4)
    gens = tmp_path / "gens.parquet"
    pq.write_table(pa.Table.from_pandas(df.drop(columns=["vader_compound", "vader_label"])), gens)
    build_report(tmp_path, tmp_path / "rep", tables={"generations": gens, "scores": path}, n_boot=50, seed=0)
    summary = pd.read_csv(tmp_path / "rep" / "tables" / "counterfactual_summary.csv")
    assert "vader_diff" in set(summary["metric"])
