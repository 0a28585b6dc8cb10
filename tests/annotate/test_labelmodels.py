"""Label models (annotate aggregate): simulated crowd with known truth, parity with crowd-kit, bad input."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from biaskit.annotate import labelmodels
from biaskit.annotate.labelmodels import METHODS, LabelModelWarning, aggregate
from biaskit.errors import BiaskitError, MissingDependencyError
from biaskit.votes import labels_as_majority

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:crowdkit.*")

LABELS = ["negative", "neutral", "positive"]


def simulated_crowd(seed: int = 0, n_items: int = 300):
    """Known truth; 10 annotators with known confusion matrices (7 decent, 1 weak, 1 spammer, 1 adversarial);
    each item labelled by 3-7 of them."""
    rng = np.random.default_rng(seed)
    k = len(LABELS)
    truth = rng.choice(k, size=n_items, p=[0.3, 0.4, 0.3])
    conf = []
    for acc in (0.85, 0.8, 0.8, 0.75, 0.75, 0.7, 0.7, 0.55):
        m = np.full((k, k), (1 - acc) / (k - 1))
        np.fill_diagonal(m, acc)
        conf.append(m)
    conf.append(np.tile([0.05, 0.9, 0.05], (k, 1)))  # spammer: "neutral" whatever the text
    adv = np.full((k, k), 0.05)
    adv[0, 2] = adv[2, 0] = adv[1, 0] = 0.9  # adversarial: flips the polarity
    np.fill_diagonal(adv, [0.05, 0.05, 0.05])
    adv = adv / adv.sum(axis=1, keepdims=True)
    conf.append(adv)
    rows = []
    for i in range(n_items):
        who = rng.choice(len(conf), size=int(rng.integers(3, 8)), replace=False)
        for w in who:
            rows.append(
                {
                    "sample_id": f"s{i:04d}",
                    "annotator": f"w{w}",
                    "label": LABELS[rng.choice(k, p=conf[w][truth[i]])],
                    "round": "r1",
                    "task_type": "sentiment",
                }
            )
    return pa.Table.from_pylist(rows), {f"s{i:04d}": LABELS[t] for i, t in enumerate(truth)}


def _acc(table, truth):
    return np.mean([truth[s] == lab for s, lab in zip(table.column("sample_id").to_pylist(), table.column("label").to_pylist())])


def test_dawid_skene_beats_majority_on_a_simulated_crowd_with_a_spammer_and_an_adversary():
    ann, truth = simulated_crowd()
    mv = aggregate(ann, method="majority").labels
    ds = aggregate(ann, method="dawid-skene").labels
    assert ds.num_rows == mv.num_rows == 300
    assert _acc(ds, truth) > _acc(mv, truth) + 0.03
    # Dawid-Skene finds the adversary (w9) and the spammer (w8) as the least skilled annotators
    at = aggregate(ann, method="dawid-skene").annotators.to_pylist()
    worst = sorted(at, key=lambda r: r["skill"])[:2]
    assert {r["annotator"] for r in worst} == {"w8", "w9"}


@pytest.mark.parametrize("method", METHODS)
def test_every_method_equals_crowd_kit_on_the_same_input(method):
    from crowdkit import aggregation as ag

    ann, _ = simulated_crowd(seed=1, n_items=60)
    df = pd.DataFrame(
        {"task": ann.column("sample_id").to_pylist(), "worker": ann.column("annotator").to_pylist(), "label": ann.column("label").to_pylist()}
    )
    model = {
        "majority": ag.MajorityVote(),
        "dawid-skene": ag.DawidSkene(n_iter=100),
        "glad": ag.GLAD(n_iter=100),
        "mace": ag.MACE(random_state=0),
        "wawa": ag.Wawa(),
    }[method]
    if method == "wawa":  # Wawa.predict needs sklearn tags crowd-kit 1.4.2 lacks: Wawa._apply's own two steps
        mv = ag.MajorityVote().fit(df, skills=model.fit(df).skills_)
        ref_labels, ref_probas = mv.labels_, mv.probas_
    else:
        ref_labels = model.fit_predict(df)
        ref_probas = model.probas_
    got = aggregate(ann, method=method, seed=0).labels.to_pylist()
    assert len(got) == len(ref_labels)
    for r in got:
        assert r["label"] == ref_labels[r["sample_id"]]
        assert r["confidence"] == pytest.approx(float(ref_probas.loc[r["sample_id"], r["label"]]))
        assert r["method"] == method


def test_gold_items_are_known_answers_and_never_scored_as_unknown():
    ann, truth = simulated_crowd(seed=2, n_items=100)
    gold_ids = [f"s{i:04d}" for i in range(10)]
    samples = pa.table(
        {
            "sample_id": list(truth),
            "task_type": ["sentiment"] * len(truth),
            "is_gold": [s in gold_ids for s in truth],
            "gold_label": [truth[s] if s in gold_ids else None for s in truth],
        }
    )
    res = aggregate(ann, method="dawid-skene", samples=samples)
    rows = {r["sample_id"]: r for r in res.labels.to_pylist()}
    for g in gold_ids:
        assert rows[g]["is_gold"] and rows[g]["label"] == truth[g] and rows[g]["confidence"] == 1.0
    assert sum(r["is_gold"] for r in rows.values()) == 10
    # the majority-shaped view used by validate leaves gold items out
    mv = labels_as_majority(res.labels).to_pylist()
    assert {r["sample_id"] for r in mv if not r["kept"]} >= set(gold_ids)
    # gold accuracy per annotator is computed on gold items only
    at = {r["annotator"]: r for r in res.annotators.to_pylist()}
    w = next(iter(at))
    hits = [
        truth[s] == lab for s, a, lab in zip(*(ann.column(c).to_pylist() for c in ("sample_id", "annotator", "label"))) if a == w and s in gold_ids
    ]
    assert at[w]["gold_accuracy"] == (pytest.approx(np.mean(hits)) if hits else None)


def _ann(rows):
    return pa.Table.from_pylist([{"sample_id": s, "annotator": a, "label": lab, "task_type": "sentiment"} for s, a, lab in rows])


def test_one_annotator_is_an_error_for_label_models_and_a_warning_for_majority():
    t = _ann([("s1", "a", "positive"), ("s2", "a", "negative")])
    with pytest.raises(BiaskitError, match=r"\[E252\].*two annotators"):
        aggregate(t, method="dawid-skene")
    with pytest.warns(LabelModelWarning, match="only one annotator"):
        res = aggregate(t, method="majority")
    assert res.labels.column("label").to_pylist() == ["positive", "negative"]


def test_no_overlap_is_an_error_for_label_models():
    t = _ann([("s1", "a", "positive"), ("s2", "b", "negative"), ("s3", "c", "neutral")])
    with pytest.raises(BiaskitError, match=r"\[E252\].*overlap"):
        aggregate(t, method="glad")


def test_one_label_everywhere_is_a_named_warning():
    t = _ann([("s1", "a", "positive"), ("s1", "b", "positive"), ("s2", "a", "positive"), ("s2", "b", "positive")])
    with pytest.warns(LabelModelWarning, match="same label"):
        res = aggregate(t, method="dawid-skene")
    assert res.labels.column("label").to_pylist() == ["positive", "positive"]


def test_labels_outside_the_task_set_are_a_coded_error():
    t = _ann([("s1", "a", "positive"), ("s1", "b", "great")])
    with pytest.raises(BiaskitError, match=r"\[E251\].*outside the sentiment"):
        aggregate(t, method="majority")


def test_unknown_method_and_empty_table():
    with pytest.raises(BiaskitError, match=r"\[E253\]"):
        aggregate(_ann([("s1", "a", "positive")]), method="em")
    with pytest.raises(BiaskitError, match=r"\[E250\]"):
        aggregate(
            pa.table({"sample_id": pa.array([], pa.string()), "annotator": pa.array([], pa.string()), "label": pa.array([], pa.string())}),
            method="majority",
        )


@pytest.mark.parametrize(
    "case,rows,expect",
    [
        ("one annotator", [("s1", "a", "positive"), ("s2", "a", "negative")], "only one annotator"),
        ("no overlap", [("s1", "a", "positive"), ("s2", "b", "negative")], "no overlap"),
        ("one label", [("s1", "a", "positive"), ("s1", "b", "positive"), ("s2", "a", "positive"), ("s2", "b", "positive")], "same label"),
        ("outside the set", [("s1", "a", "positive"), ("s1", "b", "great")], "E251"),
    ],
)
def test_cli_agreement_validate_aggregate_on_bad_annotations(tmp_path, case, rows, expect):
    """Each command ends in a coded one-line error or prints a named warning, never a traceback."""
    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.io import write_table

    ann = pa.Table.from_pylist([{"sample_id": s, "round": "r1", "annotator": a, "label": lab, "task_type": "sentiment"} for s, a, lab in rows])
    write_table(ann, tmp_path / "a.parquet")
    samples = pa.Table.from_pylist(
        [
            {
                "sample_id": s,
                "round": "r1",
                "task_type": "sentiment",
                "text": "x",
                "group": "g",
                "vader_label": "positive",
                "vader_compound": 0.5,
                "is_gold": False,
            }
            for s in sorted({r[0] for r in rows})
        ]
    )
    write_table(samples, tmp_path / "s.parquet")
    led = ["--ledger", str(tmp_path / "l.jsonl")]
    cmds = {
        "agreement": ["agreement", tmp_path / "a.parquet", "--bootstrap", "0", "--out", tmp_path / "ag.parquet", *led],
        "validate": [
            "validate",
            tmp_path / "a.parquet",
            "--samples",
            tmp_path / "s.parquet",
            "--metric",
            "vader",
            "--bootstrap",
            "0",
            "--out",
            tmp_path / "v.parquet",
            *led,
        ],
        "aggregate": ["aggregate", tmp_path / "a.parquet", "--method", "dawid-skene", "--out", tmp_path / "l.parquet"],
    }
    for name, args in cmds.items():
        r = CliRunner().invoke(app, ["annotate", *map(str, args)])
        assert "Traceback" not in r.output
        if expect == "E251":
            assert r.exit_code == 1 and "error[E251]" in r.output and "'great'" in r.output
        elif name == "aggregate" and expect != "same label":
            assert r.exit_code == 1 and "error[E252]" in r.output
        elif name == "aggregate":
            assert r.exit_code == 0 and "warning[LabelModelWarning]: every annotation has the same label" in r.output
        else:
            assert r.exit_code == 0 and "warning[CrowdWarning]: " in r.output and expect in r.output, r.output


def test_train_classifier_takes_the_label_models_labels():
    """train classifier --aggregated-labels: the labelled table holds the label model's labels, gold items left out."""
    from biaskit.train.data import majority_labels

    ann, truth = simulated_crowd(seed=3, n_items=40)
    gold_ids = ["s0000", "s0001"]
    samples = pa.table(
        {
            "sample_id": list(truth),
            "text": [f"text {s}" for s in truth],
            "task_type": ["sentiment"] * 40,
            "is_gold": [s in gold_ids for s in truth],
            "gold_label": [truth[s] if s in gold_ids else None for s in truth],
        }
    )
    res = aggregate(ann, method="dawid-skene", samples=samples)
    t = majority_labels(ann, samples, label_table=res.labels)
    want = {r["sample_id"]: r["label"] for r in res.labels.to_pylist() if not r["is_gold"]}
    assert {r["sample_id"]: r["label"] for r in t.to_pylist()} == want
    assert all(r["text"] == f"text {r['sample_id']}" for r in t.to_pylist())


def test_a_missing_crowd_kit_is_E011_naming_the_extra(monkeypatch):
    # sys.modules[name] = None makes `import crowdkit` raise ImportError, as on a machine without the package
    monkeypatch.setitem(sys.modules, "crowdkit", None)
    with pytest.raises(MissingDependencyError) as e:
        labelmodels._crowdkit()
    assert e.value.code == "E011" and "crowdkit" in str(e.value) and "pip install 'biaskit[annotate]'" in str(e.value)
