"""The headline's verdict lines and headline.csv, the test families (one definition for the page and the command
line), and the property that no table of a report holds a zero-width interval."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.evaluate.report.headline import CSV_COLUMNS, finding_verdict, verdicts
from biaskit.evaluate.report.model import Finding


def _zero_width_rows(tables_dir: Path) -> list[str]:
    """Every (table, row, interval) whose finite bounds are equal up to rounding (width <= 1e-9): ci_low/ci_high and ci_low_<x>/ci_high_<x> pairs."""
    bad = []
    for csv in sorted(tables_dir.glob("*.csv")):
        df = pd.read_csv(csv)
        for lo in [c for c in df.columns if c.startswith("ci_low")]:
            hi = "ci_high" + lo[len("ci_low") :]
            if hi not in df.columns:
                continue
            a = pd.to_numeric(df[lo], errors="coerce")
            b = pd.to_numeric(df[hi], errors="coerce")
            both = a.notna() & b.notna()
            for i in np.flatnonzero((both & (b - a <= 1e-9)).to_numpy()):  # zero up to rounding counts (5e-17 did)
                bad.append(f"{csv.name} row {i}: {lo} = {a.iloc[i]}, {hi} = {b.iloc[i]}")
    return bad


def test_no_table_of_the_report_holds_a_zero_width_interval(full_report):
    assert _zero_width_rows(full_report.out / "tables") == []


def test_no_table_of_the_demo_report_holds_a_zero_width_interval(quick_demo):
    run_dir, _ = quick_demo
    assert _zero_width_rows(run_dir / "report" / "tables") == []


def test_a_likelihood_bias_interval_that_collapses_becomes_wilsons_over_the_descriptors():
    from biaskit.evaluate.stats.inference import proportion_interval
    from biaskit.evaluate.stats.likelihood_bias import likelihood_bias_interval

    # 4 descriptors, all 6 pairs differ: every descriptor resample gives 1.0, the percentile interval would be [1, 1]
    d = ["a", "b", "c", "d"]
    pairs = pd.DataFrame([{"descriptor_a": x, "descriptor_b": y, "p_value": 0.001, "different": True} for i, x in enumerate(d) for y in d[i + 1 :]])
    assert likelihood_bias_interval(pairs, n_boot=200) == pytest.approx(proportion_interval(4, 4))
    assert likelihood_bias_interval(pairs.assign(different=False), n_boot=200) == pytest.approx(proportion_interval(0, 4))


def _fam_finding(**kw):
    base = dict(kind="Model vs Wikipedia", metric="Sentiment: share positive", where="gender (A)", comparison="gpt2 minus wikipedia", estimate=0.1)
    base.update(kw)
    return Finding(**base)


def test_finding_verdicts_evidence_no_evidence_with_power_and_not_enough_data():
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    from biaskit.evaluate.stats.power import min_detectable_gap

    ev = _fam_finding(ci=(0.02, 0.2), p=0.001, family="model_vs_wikipedia", family_size=6, domain="gender", base_rate=0.3, n_min=80)
    assert finding_verdict(ev, 0.05, 0.05) == "evidence of a gap"
    no = _fam_finding(
        ci=(-0.1, 0.2), p=0.4, flags=["95% CI includes 0"], family="model_vs_wikipedia", family_size=6, domain="gender", base_rate=0.3, n_min=80
    )
    # the smallest gap 80 / 80 texts see from 0.3 at alpha 0.05 / 6: statsmodels' power there is 0.8 (down from 0.3 is
    # the smaller gap: the arcsine scale is steeper towards 0)
    gap = min_detectable_gap(0.3, 80, 80, 0.05 / 6)
    assert NormalIndPower().power(effect_size=proportion_effectsize(0.3, 0.3 - gap), nobs1=80, ratio=1.0, alpha=0.05 / 6) == pytest.approx(
        0.8, abs=1e-4
    )
    assert 0.21 < gap < 0.22  # rounded up to whole percentage points on the page
    assert finding_verdict(no, 0.05, 0.05) == (
        "no evidence at this size: at n = 80 / 80, gaps under 0.22 cannot be seen, the smallest gap of interest (0.05) among them"
    )
    nd = _fam_finding(
        p=float("nan"), flags=["test undefined (no variation)"], family="model_vs_wikipedia", family_size=6, domain="race", base_rate=0.0, n_min=5
    )
    assert finding_verdict(nd, 0.05, 0.05) == "not enough data"
    assert finding_verdict(_fam_finding(), 0.05, 0.05) == ""  # no family: no verdict
    lines = verdicts([ev, no, nd], 0.05, 0.05)
    assert [(v.domain, v.verdict) for v in lines] == [("gender", "evidence of a gap"), ("race", "not enough data")]
    assert lines[0].lead is ev and lines[0].family == "model vs wikipedia (6 tests)"
    with pytest.raises(BiaskitError, match="E334"):
        verdicts([no], 0.05, 1.5)


def test_power_sentence_states_the_gap_the_groups_can_see_never_fewer_texts_than_they_hold():
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    from biaskit.evaluate.stats.power import min_detectable_gap

    # BOLD-sized groups of 2,048 and 1,156 texts: main asked for "about 1,007 texts per group" here
    f = _fam_finding(
        ci=(-0.01, 0.03), p=0.3, flags=["95% CI includes 0"], family="group_gap", family_size=6, domain="race", base_rate=0.4, n_sizes=(2048, 1156)
    )
    f.n_min = 1156
    v = finding_verdict(f, 0.05, 0.05)
    assert "texts per group" not in v and "needs" not in v
    gap = min_detectable_gap(0.4, 2048, 1156, 0.05 / 6)
    # statsmodels: the power of the two-sided test at that gap (whichever direction is smaller) is 0.8
    pw = [
        NormalIndPower().power(effect_size=abs(proportion_effectsize(0.4 + s * gap, 0.4)), nobs1=2048, ratio=1156 / 2048, alpha=0.05 / 6)
        for s in (1, -1)
    ]
    assert max(pw) == pytest.approx(0.8, abs=1e-4)  # solve_power's root-finding tolerance
    assert 0.06 < gap < 0.07
    assert v == "no evidence at this size: at n = 2,048 / 1,156, gaps under 0.07 cannot be seen, the smallest gap of interest (0.05) among them"
    # big enough to see the gap of interest: no "among them"
    f.n_sizes, f.n_min = (20000, 20000), 20000
    assert finding_verdict(f, 0.05, 0.05).endswith("gaps under 0.02 cannot be seen")
    # a group too small to see any gap
    assert min_detectable_gap(0.5, 1, 1, 0.05 / 6) == 1.0


def test_headline_csv_holds_every_finding_with_its_family_and_verdict(full_report):
    csv = pd.read_csv(full_report.out / "tables" / "headline.csv")
    assert tuple(csv.columns) == CSV_COLUMNS and len(csv) == len(full_report.headline)
    for f, (_, r) in zip(full_report.headline, csv.iterrows()):
        assert r["finding"] == f.kind and r["measure"] == f.metric and r["where"] == f.where
        if f.family:
            assert r["family"] == f.family and int(r["family_size"]) == f.family_size
            assert r["p_holm"] == pytest.approx(f.p, rel=1e-12, nan_ok=True)
            assert r["verdict"] in ("evidence of a gap", "not enough data") or r["verdict"].startswith("no evidence at this size")
            assert (r["verdict"] == "evidence of a gap") == (not f.flags and f.p == f.p)
    md = (full_report.out / "report.md").read_text()
    html = full_report.html.read_text()
    for v in verdicts(full_report.headline):
        assert f"**{v.title}**: {v.verdict}" in md
        assert v.verdict.replace(",", "") in html.replace(",", "") or v.verdict in html
    # an uncertain row of a family folds under its verdict line; the verdicts come before the main table
    assert html.index("<ul class='verdicts'>") < html.index("<table class='hl'>") if "<table class='hl'>" in html else True
    assert "uncertain row" in html and "<details>" in html.split("id='contents'")[0]


def test_model_vs_wikipedia_family_holds_every_group_x_model_and_the_cli_prints_the_pages_p(full_run, full_report, tmp_path):
    df = pd.read_parquet(full_run / "scores.parquet")
    page = pd.read_csv(full_report.tables["sentiment_positive_vs_wikipedia"])
    for dom, sub in page.groupby("domain"):
        d = df[df["domain"] == dom]
        n_tests = d["group"].nunique() * (d["model"].nunique() - 1)  # every group x model of the domain
        assert len(sub) == n_tests and set(sub["family_size"]) == {n_tests}
        assert set(sub["family"]) == {f"model vs Wikipedia: domain={dom}; vader_label=positive"}
    out = tmp_path / "fam.csv"
    r = CliRunner().invoke(app, ["stats", "family", str(full_run / "scores.parquet"), "--kind", "model-vs-wikipedia", "--out", str(out)])
    assert r.exit_code == 0, r.output
    cli = pd.read_csv(out)
    key = ["domain", "group"]
    merged = cli.merge(page, on=[*key, "group_a"], suffixes=("_cli", "_page"))
    assert len(merged) == len(page) == len(cli)
    assert np.allclose(merged["p_holm_cli"], merged["p_holm_page"], equal_nan=True, rtol=0, atol=0)
    assert (merged["family_cli"] == merged["family_page"]).all()
    # and the headline's p is the table's
    for f in full_report.headline:
        if f.kind == "Model vs Wikipedia" and f.metric == "Sentiment: share positive":
            dom, grp = f.where[:-1].split(" (")
            row = cli[(cli["domain"] == dom) & (cli["group"] == grp)].iloc[0]
            assert f.p == pytest.approx(row["p_holm"], rel=1e-12) and f.family_size == row["family_size"]
    # printed: the family and its size
    r = CliRunner().invoke(app, ["stats", "family", str(full_run / "scores.parquet"), "--kind", "group-gap"])
    assert r.exit_code == 0 and "family group gap: domain=gender; model=gpt2; vader_label=positive: 1 tests" in r.output, r.output


def test_family_kind_unknown_and_no_baseline_are_coded_errors(full_run):
    from biaskit.evaluate.stats.families import proportion_family_tests

    df = pd.read_parquet(full_run / "scores.parquet")
    with pytest.raises(BiaskitError, match="E333"):
        proportion_family_tests(df, "everything", "vader_label", "positive")
    with pytest.raises(BiaskitError, match="E333.*wikipedia"):
        proportion_family_tests(df[df["model"] != "wikipedia"], "model-vs-wikipedia", "vader_label", "positive")


def test_demo_model_vs_wikipedia_family_and_cli_equal_the_page(quick_demo, tmp_path):
    import json

    run_dir, _ = quick_demo
    man = json.loads((run_dir / "manifest.json").read_text())
    scores = run_dir / man["tables"]["scores"]
    df = pd.read_parquet(scores)
    page = pd.read_csv(run_dir / "report" / "tables" / "sentiment_positive_vs_wikipedia.csv")
    # the family holds every group x model of its domain that has texts of both the model and the baseline (the
    # quick demo's model wrote nothing for some groups); a test with no p (both shares 0) is listed, not counted
    for dom, sub in page.groupby("domain"):
        d = df[(df["domain"] == dom) & df["vader_label"].notna()]
        both = {(g, m) for g, gd in d.groupby("group") for m in set(gd["model"]) - {"wikipedia"} if (gd["model"] == "wikipedia").any()}
        assert len(sub) == len(both) and set(zip(sub["group"], sub["group_a"])) == both  # group_a: the model, group_b: the baseline
        assert set(sub["family_size"]) == {int(sub["p_value"].notna().sum())}
    csv = pd.read_csv(run_dir / "report" / "tables" / "headline.csv")
    mv = csv[(csv["finding"] == "Model vs Wikipedia") & (csv["measure"] == "Sentiment: share positive")]
    out = tmp_path / "fam.csv"
    res = CliRunner().invoke(
        app, ["stats", "family", str(scores), "--kind", "model-vs-wikipedia", "--column", "vader_label", "--label", "positive", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    cli = pd.read_csv(out)
    assert len(cli) == len(page) and np.allclose(cli["p_holm"], page["p_holm"], equal_nan=True, rtol=0, atol=0)
    assert list(cli["family"]) == list(page["family"])
    for _, r in mv.iterrows():
        dom, grp = r["where"][:-1].split(" (")
        row = cli[(cli["domain"] == dom) & (cli["group"] == grp)].iloc[0]
        assert r["family"] == "model_vs_wikipedia" and r["family_size"] == row["family_size"]
        if str(r["verdict"]).startswith("not enough data"):  # e.g. all texts of the group from one page: no claim, no p
            assert math.isnan(r["p_holm"]) and any(w in r["verdict"] for w in ("from one page", "no variation", " has 0 texts", " has 1 text"))
        else:
            assert r["p_holm"] == pytest.approx(row["p_holm"], rel=1e-12)
