"""Round planning (annotate plan), sample --plan --prefer uncertain, and the whole chain through the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.annotate.agreement import agreement_row, rows_to_table
from biaskit.annotate.metriccols import MetricColumns
from biaskit.annotate.planning import plan_round, uncertainty
from biaskit.annotate.sampling import sample_round
from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.io import read_table, write_table

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:crowdkit.*")


def _val(groups):
    """A validation table with per-group rows: {group: (n, accuracy, n_negative, miss_rate_negative)}."""
    rows = []
    for g, (n, acc, n_neg, miss) in groups.items():
        rows.append(agreement_row("r1", "sentiment", "group_accuracy", acc, metric="vader", group_by="group", group=g, n_items=n))
        rows.append(agreement_row("r1", "sentiment", "group_miss_rate_negative", miss, metric="vader", group_by="group", group=g, n_items=n_neg))
    return rows_to_table(rows)


def test_plan_counts_follow_the_normal_approximation():
    p = plan_round(_val({"A": (100, 0.8, 40, 0.3), "B": (50, 0.5, 10, 0.0)}), target=0.05)
    # A: 1.96^2 * 0.8 * 0.2 / 0.05^2 = 245.86 -> 246 items, 146 more
    a = p["groups"]["A"]
    assert (a["rate_items_needed"], a["n_more"]) == (246, 146)
    assert a["half_width_now"] == pytest.approx(1.959964 * math.sqrt(0.16 / 100), rel=1e-6)
    # B: 0.5 -> 1.96^2 * 0.25 / 0.0025 = 384.15 -> 385 items, 335 more
    assert p["groups"]["B"]["n_more"] == 335 and p["total_more"] == 146 + 335
    # miss rate of negative: A has 40% negatives; 1.96^2 * .3 * .7 / .0025 = 322.7 -> 323 negatives -> 808 items
    m = plan_round(_val({"A": (100, 0.8, 40, 0.3), "B": (50, 0.5, 10, 0.0)}), target=0.05, rate="miss_rate_negative")
    assert m["groups"]["A"]["n_needed"] == math.ceil(323 / 0.4) and m["groups"]["A"]["n_more"] == 808 - 100
    # B's observed miss rate is 0 on 10 items: Agresti-Coull (0 + 2) / (10 + 4)
    assert m["groups"]["B"]["rate_used"] == pytest.approx(2 / 14)


@pytest.mark.parametrize("p,share,n_now", [(0.8, 1.0, 100), (0.35, 0.4, 60), (0.1, 0.3, 200)])
def test_predicted_half_widths_are_within_20_percent_of_simulated_rounds(p, share, n_now):
    """Simulate 4,000 rounds of the planned size: items of the rate's class ~ Binomial(n, share), misses ~
    Binomial(items, p); the simulated half-width is half the 2.5-97.5% spread of the observed rate."""
    rows = [
        agreement_row("r1", "s", "group_accuracy", 0.5, metric="m", group_by="group", group="A", n_items=n_now),
        agreement_row("r1", "s", "group_miss_rate_x", p, metric="m", group_by="group", group="A", n_items=int(round(share * n_now))),
    ]
    plan = plan_round(rows_to_table(rows), target=0.05, rate="miss_rate_x")
    e = plan["groups"]["A"]
    n_total = e["n_now"] + e["n_more"]
    rng = np.random.default_rng(0)
    m = rng.binomial(n_total, e["share"], size=4000)
    rate = rng.binomial(m, p) / m
    lo, hi = np.quantile(rate, [0.025, 0.975])
    sim = (hi - lo) / 2
    assert abs(e["half_width_planned"] - sim) / sim < 0.2
    assert e["half_width_planned"] <= 0.05 + 1e-9


def test_bad_plan_input_is_coded():
    with pytest.raises(BiaskitError, match=r"\[E256\].*per-group"):
        plan_round(rows_to_table([agreement_row("r1", "s", "accuracy", 0.5, metric="m")]))
    with pytest.raises(BiaskitError, match=r"\[E256\].*unknown rate"):
        plan_round(_val({"A": (100, 0.8, 40, 0.3)}), rate="recall")
    with pytest.raises(BiaskitError, match=r"\[E256\].*between 0 and 0.5"):
        plan_round(_val({"A": (100, 0.8, 40, 0.3)}), target=0)


def test_uncertainty_prefers_disagreement_then_scores_near_the_boundary():
    rows = [
        {"vader_label": "positive", "s": 0.9, "other_label": "positive"},
        {"vader_label": "positive", "s": 0.06, "other_label": "positive"},  # near the neutral/positive cut
        {"vader_label": "negative", "s": -0.9, "other_label": "positive"},  # disagreement
        {"vader_label": "neutral", "s": 0.0, "other_label": "neutral"},
        {"vader_label": "negative", "s": -0.5, "other_label": "negative"},
    ]
    u = uncertainty(rows, MetricColumns("vader", "vader_label", "s"), ["negative", "neutral", "positive"], ["other_label"])
    assert list(np.argsort(-u))[:2] == [2, 1]


def test_sample_with_a_plan_draws_the_planned_counts_preferring_uncertain_items(scores_factory):
    scores = scores_factory(n_groups=3, per_group=60)
    first, _ = sample_round(scores, round="r1", task="sentiment", n=30, bins=3, seed=0)
    used = set(first.column("sample_id").to_pylist())
    quota = {"g0": 10, "g1": 5, "g2": 0}
    nxt, rep = sample_round(scores, round="r2", task="sentiment", quota=quota, quota_by="group", prefer="uncertain", exclude=used, seed=1)
    got = nxt.column("group").to_pylist()
    assert {g: got.count(g) for g in quota} == quota
    assert not used & set(nxt.column("sample_id").to_pylist())
    # uncertain first: the chosen g0 items are the 10 unlabelled ones with the compound closest to a VADER cut
    # (the cuts estimated from the whole table: midway between neighbouring labels, about -0.05 and +0.05)
    from biaskit.annotate.sampling import make_sample_id

    def dist(r):
        return min(abs(r["vader_compound"] - 0.05), abs(r["vader_compound"] + 0.05))

    pool = [
        r
        for r in scores.to_pylist()
        if r["group"] == "g0" and make_sample_id(r["prompt_id"], r["model"], r["kind"], r["sample_index"], r["text"] + r["continuation"]) not in used
    ]
    chosen = sorted(dist(r) for r in nxt.to_pylist() if r["group"] == "g0")
    assert len(pool) == 60 - sum(r["group"] == "g0" for r in first.to_pylist())
    assert max(chosen) <= sorted(dist(r) for r in pool)[9] + 0.01


def _simulated_annotations(samples, seed=0):
    """3 annotators label each item: the truth is the metric's label except in group g1 where the metric is often wrong."""
    rng = np.random.default_rng(seed)
    labs = ["negative", "neutral", "positive"]
    rows = []
    for r in samples.to_pylist():
        truth = r["vader_label"]
        if r["group"] == "g1" and rng.random() < 0.6:
            truth = labs[(labs.index(truth) + 1) % 3]
        for a in ("ann1", "ann2", "ann3"):
            lab = truth if rng.random() < 0.85 else labs[rng.integers(3)]
            rows.append({"sample_id": r["sample_id"], "round": r["round"], "annotator": a, "label": lab, "task_type": "sentiment"})
    return pa.Table.from_pylist(rows)


def test_cli_chain_aggregate_validate_by_group_plan_sample_rounds(tmp_path, scores_factory):
    scores = scores_factory(n_groups=3, per_group=80)
    write_table(scores, tmp_path / "scores.parquet")
    led = str(tmp_path / "rounds.jsonl")
    cli = CliRunner()

    def run(*args):
        r = cli.invoke(app, ["annotate", *map(str, args), *(["--ledger", led] if args[0] in ("sample", "validate", "rounds", "agreement") else [])])
        assert r.exit_code == 0, r.output
        return r.output

    run("sample", tmp_path / "scores.parquet", "--round", "r1", "--task", "sentiment", "--n", "90", "--bins", "3", "--out", tmp_path / "r1.parquet")
    s1 = read_table(tmp_path / "r1.parquet")
    write_table(_simulated_annotations(s1), tmp_path / "a1.parquet")
    out = run(
        "aggregate", tmp_path / "a1.parquet", "--samples", tmp_path / "r1.parquet", "--method", "dawid-skene", "--out", tmp_path / "labels.parquet"
    )
    assert "dawid-skene: 90 items labelled" in out
    lab = read_table(tmp_path / "labels.parquet")
    assert lab.num_rows == 90 and set(lab.column("method").to_pylist()) == {"dawid-skene"}
    assert read_table(tmp_path / "labels.annotators.parquet").num_rows == 3
    out = run(
        "validate",
        tmp_path / "a1.parquet",
        "--samples",
        tmp_path / "r1.parquet",
        "--metric",
        "vader",
        "--labels",
        tmp_path / "labels.parquet",
        "--bootstrap",
        "300",
        "--out",
        tmp_path / "v1.parquet",
    )
    v = read_table(tmp_path / "v1.parquet").to_pylist()
    assert {r["group"] for r in v if r["measure"] == "group_accuracy"} == {"g0", "g1", "g2"}  # --by defaults to group
    assert "group=g1" in out
    run(
        "agreement",
        tmp_path / "a1.parquet",
        "--samples",
        tmp_path / "r1.parquet",
        "--labels",
        tmp_path / "labels.parquet",
        "--bootstrap",
        "0",
        "--out",
        tmp_path / "ag.parquet",
    )
    ag = read_table(tmp_path / "ag.parquet").to_pylist()
    assert sum(r["measure"] == "annotator_labels_agreement" for r in ag) == 3
    run("plan", "--validation", tmp_path / "v1.parquet", "--target-ci", "0.15", "--out", tmp_path / "plan.json")
    plan = json.loads((tmp_path / "plan.json").read_text())
    quota = {g: e["n_more"] for g, e in plan["groups"].items()}
    assert plan["group_by"] == "group" and sum(quota.values()) > 0
    run(
        "sample",
        tmp_path / "scores.parquet",
        "--round",
        "r2",
        "--task",
        "sentiment",
        "--plan",
        tmp_path / "plan.json",
        "--prefer",
        "uncertain",
        "--out",
        tmp_path / "r2.parquet",
    )
    s2 = read_table(tmp_path / "r2.parquet")
    got = s2.column("group").to_pylist()
    left = {g: 80 - s1.column("group").to_pylist().count(g) for g in quota}  # unlabelled items per group
    assert {g: got.count(g) for g in quota} == {g: min(q, left[g]) for g, q in quota.items()}
    assert not set(s1.column("sample_id").to_pylist()) & set(s2.column("sample_id").to_pylist())
    out = run("rounds")
    assert "vader.accuracy_ci_width_by_group" in out
