"""The report section "The metric corrected by human labels" on a run folder holding a round."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def _run(tmp_path, rng):
    from biaskit.annotate.sampling import make_sample_id

    rows = []
    for g, recall in (("a", 0.9), ("b", 0.5)):  # the metric misses half of b's negative texts
        for i in range(300):
            neg = rng.random() < 0.3
            pred = (rng.random() < recall) if neg else (rng.random() < 0.05)
            rows.append(
                {
                    "prompt_id": f"{g}{i}",
                    "model": "m",
                    "group": g,
                    "vader_label": "negative" if pred else "positive",
                    "_truth": "negative" if neg else "positive",
                }
            )
    df = pd.DataFrame(rows)
    lab = df.groupby("group", group_keys=False).apply(lambda s: s.sample(80, random_state=1))
    samples = pd.DataFrame(
        {
            "sample_id": [make_sample_id(p) for p in lab["prompt_id"]],
            "round": "r1",
            "task_type": "sentiment",
            "text": "t",
            "prompt_id": lab["prompt_id"].to_numpy(),
            "model": "m",
        }
    )
    ann = pd.DataFrame(
        [{"sample_id": s, "round": "r1", "annotator": f"x{k}", "label": t} for s, t in zip(samples["sample_id"], lab["_truth"]) for k in range(3)]
    )
    df.drop(columns="_truth").to_parquet(tmp_path / "scores.parquet")
    samples.to_parquet(tmp_path / "samples.parquet")
    ann.to_parquet(tmp_path / "annotations.parquet")
    return df, lab


def test_ppi_section_shows_metric_next_to_ppi_share_and_exposes_the_gap_rows(tmp_path):
    from biaskit.evaluate.report import build_report
    from biaskit.evaluate.report.build import _load, discover_tables
    from biaskit.evaluate.report.sections.ppi import round_ppi_gaps
    from biaskit.evaluate.stats.ppi import PPIShare, ppi_table

    df, lab = _run(tmp_path, np.random.default_rng(3))
    res = build_report(tmp_path, tmp_path / "report", n_boot=50)
    assert "ppi" in res.sections
    shares = pd.read_csv(res.tables["ppi_shares"])
    direct = df.assign(human=None)
    direct.loc[lab.index, "human"] = lab["_truth"]
    want = ppi_table(direct, PPIShare(metric_column="vader_label", human_column="human", label="negative", by="group"))
    got = shares[(shares["label"] == "negative") & (shares["measure"] == "share_ppi")].set_index("group")["estimate"]
    exp = want[want["measure"] == "share_ppi"].set_index("group")["estimate"]
    assert np.allclose(got.sort_index(), exp.sort_index(), atol=1e-12)
    assert any(p.name == "ppi_shares.png" for p in res.figures)
    loaded, _ = _load(discover_tables(tmp_path))
    gaps = round_ppi_gaps(loaded)
    neg = gaps[gaps["label"] == "negative"].iloc[0]
    assert neg["group_a"] == "a" and neg["group_b"] == "b" and neg["ci_low"] <= 0 <= neg["ci_high"]
    metric_gap = pd.read_csv(res.tables["ppi_gaps"]).query("label == 'negative' and measure == 'gap_metric'").iloc[0]
    assert metric_gap["ci_low"] > 0  # the metric alone sees a gap that is not there
    assert round_ppi_gaps({"scores": df}) is None  # no round: no PPI rows for the headline


def test_with_a_round_the_headline_states_the_ppi_gap_with_its_wald_p_holm_corrected(tmp_path):
    """The metric misses half of group b's negative texts: its own gap excludes 0, the PPI gap (the headline's
    line for the round) covers the true gap. p: 2 P(Z > |gap| / se), computed here with scipy from the gap row."""
    from scipy import stats

    from biaskit.evaluate.report import build_report
    from biaskit.evaluate.report.sections.ppi import PPI_GAP_KIND, ppi_gap_finding

    _run(tmp_path, np.random.default_rng(3))
    res = build_report(tmp_path, tmp_path / "report", n_boot=50)
    gaps = pd.read_csv(res.tables["ppi_gaps"]).query("label == 'negative' and measure == 'gap_ppi'").iloc[0]
    found = [f for f in res.headline if f.kind == PPI_GAP_KIND]
    assert len(found) == 1
    f = found[0]
    assert f.comparison == "a vs b" and f.family == "group_gap" and f.family_size == 1
    assert f.estimate == pytest.approx(gaps["estimate"], abs=1e-12) and f.ci == pytest.approx((gaps["ci_low"], gaps["ci_high"]), abs=1e-12)
    assert f.p == pytest.approx(2 * stats.norm.sf(abs(gaps["estimate"]) / gaps["se"]), rel=1e-9)  # one pair: Holm leaves it
    assert "interval includes 0" in " ".join(f.flags) or f.ci[0] <= 0 <= f.ci[1]
    head = pd.read_csv(res.tables["headline"])
    assert (head["finding"] == PPI_GAP_KIND).sum() == 1
    # three groups: three pairs, Holm over them (hand: sorted raw p times 3, 2, 1, made monotone, capped at 1)
    rows = []
    for g, (v, se) in {"a": (0.30, 0.05), "b": (0.20, 0.05), "c": (0.05, 0.05)}.items():
        rows.append({"label": "negative", "measure": "share_ppi", "group": g, "group_b": None, "estimate": v, "se": se, "n_labelled": 40})
    for a, b_ in (("a", "b"), ("a", "c"), ("b", "c")):
        va, vb = {"a": 0.30, "b": 0.20, "c": 0.05}[a], {"a": 0.30, "b": 0.20, "c": 0.05}[b_]
        rows.append(
            {
                "label": "negative",
                "measure": "gap_ppi",
                "group_a": a,
                "group_b": b_,
                "estimate": va - vb,
                "se": 0.05 * 2**0.5,
                "ci_low": -1,
                "ci_high": 1,
            }
            | {"n_unlabelled": 100}
        )
    f3 = ppi_gap_finding(pd.DataFrame(rows), "vader_label", "negative", alpha=0.05)
    raw = sorted(2 * stats.norm.sf(abs(d) / (0.05 * 2**0.5)) for d in (0.10, 0.25, 0.15))
    holm = [min(1.0, max(raw[0] * 3, 0)), max(raw[0] * 3, raw[1] * 2), max(raw[0] * 3, raw[1] * 2, raw[2])]
    assert f3.comparison == "a vs c" and f3.family_size == 3 and f3.p == pytest.approx(holm[0], rel=1e-9)
