"""Paired analysis by template: Wilcoxon signed-rank on within-template differences, paired bootstrap, spread."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from biaskit.bootstrap import BootSpec
from biaskit.errors import BiaskitError
from biaskit.evaluate.stats.paired import paired_by_template, template_sensitivity


def _table(rng, templates=8, descriptors=("deaf", "blind", "tall"), per=3, shift=None):
    rows = []
    for t in range(templates):
        base = rng.normal(50, 20)  # the template's own effect, shared by its descriptors
        for d in descriptors:
            for _ in range(per):
                rows.append(
                    {"axis": "ability", "template": f"t{t}", "descriptor": d, "perplexity": base + (shift or {}).get(d, 0.0) + rng.normal(0, 1)}
                )
    return pd.DataFrame(rows)


def test_paired_differences_and_wilcoxon_equal_a_hand_computation():
    rng = np.random.default_rng(0)
    df = _table(rng, shift={"deaf": 3.0})
    res = paired_by_template(df, "perplexity", boot=BootSpec(n_boot=200))
    row = res[(res["descriptor_a"] == "blind") & (res["descriptor_b"] == "deaf")].iloc[0]
    cell = df.groupby(["descriptor", "template"])["perplexity"].mean()
    d = np.array([cell["blind", f"t{t}"] - cell["deaf", f"t{t}"] for t in range(8)])
    assert row["n_templates"] == 8 and row["mean_diff"] == pytest.approx(d.mean(), abs=1e-12)
    assert row["range_diff"] == pytest.approx(d.max() - d.min(), abs=1e-12)
    assert row["sd_diff"] == pytest.approx(d.std(ddof=1), abs=1e-12)
    # exact Wilcoxon signed-rank p by enumerating the 2^8 sign flips (no ties, no zeros): independent of scipy
    ranks = np.argsort(np.argsort(np.abs(d))) + 1.0
    w_pos = ranks[d > 0].sum()
    stats = np.array([sum(r for r, s in zip(ranks, signs) if s) for signs in itertools.product([0, 1], repeat=8)])
    w = min(w_pos, ranks.sum() - w_pos)
    p_exact = np.mean((stats <= w) | (stats >= ranks.sum() - w))
    assert row["wilcoxon_w"] == w and row["p_value"] == pytest.approx(p_exact, abs=1e-12)
    assert row["p_value"] < 0.01  # deaf is 3 higher in every template; the 20-point template effect cancels
    assert row["ci_high"] < 0  # the paired bootstrap interval of the mean excludes 0
    # unpaired, the template effect (sd 20) drowns the 3-point shift
    from scipy.stats import mannwhitneyu

    assert mannwhitneyu(df.loc[df.descriptor == "blind", "perplexity"], df.loc[df.descriptor == "deaf", "perplexity"]).pvalue > 0.05


def test_paired_bootstrap_covers_a_null_gap():
    rng = np.random.default_rng(4)
    cover = 0
    for s in range(100):
        res = paired_by_template(_table(rng, templates=15, descriptors=("a", "b"), per=2), "perplexity", boot=BootSpec(n_boot=300, seed=s))
        cover += res.loc[0, "ci_low"] <= 0 <= res.loc[0, "ci_high"]
    assert cover >= 88  # nominal 95; percentile bootstrap over 15 templates runs a little narrow


def test_template_sensitivity_shows_a_gap_that_flips_with_the_template():
    rng = np.random.default_rng(1)
    df = _table(rng, templates=6, descriptors=("a", "b"))
    flip = df["template"].isin(["t0", "t1", "t2"]) & (df["descriptor"] == "a")
    df.loc[flip, "perplexity"] += 10
    df.loc[~flip & (df["descriptor"] == "a"), "perplexity"] -= 10
    res = paired_by_template(df, "perplexity", boot=BootSpec(n_boot=100))
    top = template_sensitivity(res)
    assert bool(top.loc[0, "sign_flips"]) and top.loc[0, "range_diff"] > 18


def test_paired_bad_value_column_is_coded():
    df = _table(np.random.default_rng(0)).assign(perplexity="x")
    with pytest.raises(BiaskitError) as e:
        paired_by_template(df, "perplexity")
    assert e.value.code == "E347"


def test_likelihood_bias_cli_writes_the_paired_table(tmp_path):
    from typer.testing import CliRunner

    from biaskit.cli import app

    df = _table(np.random.default_rng(0), shift={"deaf": 3.0}).assign(kind="likelihood")
    src = tmp_path / "lik.csv"
    df.to_csv(src, index=False)
    res = CliRunner().invoke(app, ["stats", "likelihood-bias", str(src), "--out", str(tmp_path / "lb.csv"), "--paired-out", str(tmp_path / "p.csv")])
    assert res.exit_code == 0, res.output
    p = pd.read_csv(tmp_path / "p.csv")
    assert len(p) == 3 and set(p["column"]) == {"perplexity"}
    want = paired_by_template(df, "perplexity")
    assert np.allclose(p["p_value"], want["p_value"], atol=1e-12)
