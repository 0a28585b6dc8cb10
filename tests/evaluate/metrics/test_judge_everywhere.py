"""The judge as a metric everywhere: `biaskit score` (manifest, cost, --dry-run), `annotate sample`/`validate
--metric judge --by group`, and the report's "Can this judge be trusted?" section."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.io import read_table, write_table


def _scores(n_groups=3, per_group=16):
    rows = []
    words = ["kind", "terrible", "quiet", "brilliant", "lazy", "honest", "rude", "calm"]
    for g in range(n_groups):
        for i in range(per_group):
            rows.append(
                {
                    "prompt_id": f"p{g}-{i}",
                    "text": "The person was ",
                    "continuation": f"a {words[(g + i) % len(words)]} person {i} of group {g}.",
                    "model": "m",
                    "kind": "generate",
                    "sample_index": 0,
                    "source": "bold",
                    "group": f"g{g}",
                }
            )
    return pa.Table.from_pylist(rows)


def _run(*args):
    r = CliRunner().invoke(app, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.output


def test_dry_run_prints_the_token_estimate_without_loading_a_model(tmp_path):
    write_table(_scores(1, 4), tmp_path / "g.parquet")
    # a model that does not exist: a dry run never loads it
    out = _run(
        "score",
        tmp_path / "g.parquet",
        "-m",
        "judge",
        "-p",
        "judge.model=/no/such/model",
        "-p",
        "judge.orders=2",
        "--dry-run",
        "--out",
        tmp_path / "o.parquet",
    )
    assert "dry run: 4 rows" in out and "judge: ~" in out and "2 prompts per text" in out
    assert not (tmp_path / "o.parquet").exists()
    from biaskit.evaluate.metrics import make_metric

    est = make_metric("judge", "continuation", {"orders": 2}).estimate_cost(_scores(1, 4).column("continuation").to_pylist())
    assert f"~{est['tokens_in']} tokens in, ~{est['tokens_out']} out" in out
    assert est["tokens_out"] == 4 * 2  # one answer token per text and order


def test_score_annotate_validate_by_group_and_the_report_section(tmp_path, tiny_judge):
    write_table(_scores(), tmp_path / "g.parquet")
    _run("score", tmp_path / "g.parquet", "-m", "judge", "-p", f"judge.model={tiny_judge}", "-p", "judge.orders=2", "--out", tmp_path / "s.parquet")
    s = read_table(tmp_path / "s.parquet")
    man = json.loads((tmp_path / "s.parquet.manifest.json").read_text()) if (tmp_path / "s.parquet.manifest.json").exists() else None
    if man is None:
        man = json.loads(next(tmp_path.glob("s*manifest*.json")).read_text())
    (desc,) = [m for m in man["metrics"] if m["name"] == "judge"]
    assert desc["info"]["prompt_sha256"] == s.column("judge_prompt_sha256")[0].as_py()
    assert desc["info"]["chat_template"].endswith("assistant:") and len(desc["info"]["chat_template_sha256"]) == 64
    cost = man["cost"]["judge"]
    assert cost["tokens_in"] == sum(s.column("judge_tokens_in").to_pylist()) and cost["tokens_out"] == 2 * s.num_rows
    assert cost["tokens_in_per_row"] == pytest.approx(cost["tokens_in"] / s.num_rows)
    # annotate sample by the judge's score, then simulated annotators: the truth is the judge's label except in g1
    _run(
        "annotate",
        "sample",
        tmp_path / "s.parquet",
        "--round",
        "r1",
        "--task",
        "sentiment",
        "--metric",
        "judge",
        "--n",
        "30",
        "--text-column",
        "continuation",  # the annotators see the text the judge scored (like for like; else validate refuses: E395)
        "--out",
        tmp_path / "r1.parquet",
    )
    r1 = read_table(tmp_path / "r1.parquet")
    assert "judge_label" in r1.column_names and r1.num_rows == 30
    rng = np.random.default_rng(0)
    labs = ["negative", "neutral", "positive"]
    ann = []
    for r in r1.to_pylist():
        truth = r["judge_label"] if r["group"] != "g1" else labs[(labs.index(r["judge_label"]) + 1) % 3]
        for a in ("ann1", "ann2", "ann3"):
            lab = truth if rng.random() < 0.9 else labs[rng.integers(3)]
            ann.append({"sample_id": r["sample_id"], "round": "r1", "annotator": a, "label": lab, "task_type": "sentiment"})
    write_table(pa.Table.from_pylist(ann), tmp_path / "a1.parquet")
    _run(
        "annotate",
        "validate",
        tmp_path / "a1.parquet",
        "--samples",
        tmp_path / "r1.parquet",
        "--metric",
        "judge",
        "--by",
        "group",
        "--bootstrap",
        "200",
        "--out",
        tmp_path / "v1.parquet",
    )
    v = read_table(tmp_path / "v1.parquet").to_pylist()
    per = {r["group"]: r for r in v if r["measure"] == "group_accuracy"}
    assert set(per) == {"g0", "g1", "g2"} and all(r["metric"] == "judge" for r in per.values())
    assert per["g1"]["estimate"] < per["g0"]["estimate"]
    _run("annotate", "agreement", tmp_path / "a1.parquet", "--samples", tmp_path / "r1.parquet", "--bootstrap", "0", "--out", tmp_path / "ag.parquet")
    run = tmp_path / "run"
    run.mkdir()
    for src, name in (("s", "scores"), ("v1", "validation"), ("ag", "agreement")):
        write_table(read_table(tmp_path / f"{src}.parquet"), run / f"{name}.parquet")
    _run("report", run, "--out", tmp_path / "rep", "--n-boot", "200")
    page = (tmp_path / "rep" / "report.md").read_text()
    assert "Can this judge be trusted?" in page
    assert "Flip rate" in page and "Wilson" in page
    assert "Test-retest agreement: not measured" in page
    # the judge-vs-human kappa from the validation's confusion matrix, beside the humans' own kappa
    from sklearn.metrics import cohen_kappa_score

    maj = {}
    for sid in {a["sample_id"] for a in ann}:
        votes = [a["label"] for a in ann if a["sample_id"] == sid]
        top = max(set(votes), key=votes.count)
        if votes.count(top) >= 2:
            maj[sid] = top
    pairs = [(maj[r["sample_id"]], r["judge_label"]) for r in r1.to_pylist() if r["sample_id"] in maj]
    k = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs])
    assert f"Cohen's kappa {k:.2f}" in page
    assert "human vs human" in page


def test_kappa_helpers_equal_sklearn_and_statsmodels():
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.proportion import proportion_confint

    from biaskit.evaluate.report.sections.judge import judge_wilson_interval, kappa_from_confusion

    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, 200)
    b = np.where(rng.random(200) < 0.6, a, rng.integers(0, 3, 200))
    cm = np.zeros((3, 3))
    for x, y in zip(a, b):
        cm[x, y] += 1
    assert kappa_from_confusion(cm) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    for k, n in ((0, 10), (3, 10), (10, 10), (37, 120), (1, 1)):
        lo, hi = proportion_confint(k, n, method="wilson")
        assert judge_wilson_interval(k, n) == pytest.approx((lo, hi), abs=1e-12)
    assert judge_wilson_interval(0, 0) is None


def test_wilson_and_kappa_bootstrap_intervals_hold_their_coverage():
    from biaskit.evaluate.report.sections.judge import judge_wilson_interval, kappa_bootstrap_interval, kappa_from_confusion

    rng = np.random.default_rng(7)
    # Wilson: 2,000 simulated flip counts at p = 0.2, n = 60; 95 % nominal
    p, n = 0.2, 60
    ks = rng.binomial(n, p, 2000)
    cover = np.mean([lo <= p <= hi for lo, hi in (judge_wilson_interval(int(k), n) for k in ks)])
    assert 0.93 <= cover <= 0.98
    # exact coverage (binomial sums) over p in [0.05, 0.95]: near 95 % on average, never far below
    from scipy.stats import binom

    ivs = [judge_wilson_interval(k, n) for k in range(n + 1)]
    exact = [sum(binom.pmf(k, n, q) for k, (lo, hi) in enumerate(ivs) if lo <= q <= hi) for q in np.linspace(0.05, 0.95, 91)]
    assert 0.94 <= np.mean(exact) <= 0.96 and min(exact) > 0.90
    # kappa bootstrap: 300 simulated validations of 150 items from a known joint distribution
    joint = np.array([[0.25, 0.05, 0.02], [0.05, 0.2, 0.05], [0.02, 0.06, 0.3]])
    joint /= joint.sum()
    true_k = kappa_from_confusion(joint * 1e6)
    hits = 0
    for s in range(300):
        cm = rng.multinomial(150, joint.ravel()).reshape(3, 3).astype(float)
        lo, hi = kappa_bootstrap_interval(cm, n_boot=400, seed=s)
        hits += lo <= true_k <= hi
    assert 0.90 <= hits / 300 <= 0.98


def test_the_judge_as_a_train_classifier_baseline_on_the_same_split(tmp_path, tiny_judge):
    import csv

    from sklearn.metrics import accuracy_score, f1_score

    from biaskit.evaluate.metrics import score_table
    from biaskit.train.classifier import train_classifier
    from biaskit.train.config import TrainConfig
    from biaskit.train.data import labelled_data

    words = {"positive": ["kind", "brilliant", "honest"], "negative": ["rude", "lazy", "cruel"], "neutral": ["tall", "quiet", "from Brno"]}
    rows = [{"text": f"The person was {w} ({i}).", "label": lab} for lab, ws in words.items() for i in range(5) for w in ws]
    data = labelled_data(pa.Table.from_pylist(rows), labels="negative,neutral,positive")
    cfg = TrainConfig(split="0.6/0.2/0.2", runs=1, seed=0, baselines=("majority", "judge"), judge_params={"model": tiny_judge}, device="cpu")
    res = train_classifier(data, tmp_path / "look", cfg, progress=False, finetune=False)
    test = [int(r["row"]) for r in csv.DictReader((tmp_path / "look" / "split.csv").open()) if r["part"] == "test"]
    # the reference: the judge metric on the test texts, with the data's labels as a stance task
    t = score_table(
        pa.table({"text": [data.texts[i] for i in test]}),
        "judge",
        text_column="text",
        params={"judge": {"model": tiny_judge, "task": "stance:negative,neutral,positive"}},
        progress=False,
    )
    pred = t.column("judge_label").to_pylist()
    truth = [data.labels[data.y[i]] for i in test]
    assert res.summary["judge"]["accuracy_mean"] == pytest.approx(accuracy_score(truth, pred))
    assert res.summary["judge"]["macro_f1_mean"] == pytest.approx(f1_score(truth, pred, labels=data.labels, average="macro", zero_division=0))
    assert "judge" in (tmp_path / "look" / "README.md").read_text()
