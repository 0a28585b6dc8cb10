"""A full round against a real Label Studio 1.23.2 server with three annotator accounts."""

import json
import socket

import krippendorff
import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import classification_report
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa
from typer.testing import CliRunner

from biaskit.annotate.agreement import agreement, careless_annotators, value
from biaskit.annotate.labelstudio import LabelStudio, pull, push, record_annotation
from biaskit.annotate.sampling import sample_round
from biaskit.annotate.tasks import get_task_type
from biaskit.annotate.validation import validate_metric
from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.io import read_table, write_table

pytestmark = pytest.mark.server
SENT = get_task_type("sentiment")
ORD = ["negative", "neutral", "positive"]


def _careless(i: int) -> str:
    return ORD[(i * 7) % 3]


def test_full_round_sample_push_three_annotators_pull_agreement_validation(ls_client, annotator_ids, annotator_clients, scores):
    a1, a2, a3 = annotator_ids
    samples, _ = sample_round(scores, round="full", task="sentiment", n=24, bins=3, seed=0)
    rep = push(samples, client=ls_client, annotators=3, batch_size=10)
    assert rep.created and rep.imported == 24 and rep.batches == 3 and rep.already_there == 0
    again = push(samples, client=ls_client, annotators=3, batch_size=10)  # idempotent rerun
    assert not again.created and again.imported == 0 and again.already_there == 24
    ids = ls_client.existing_sample_ids(rep.project_id)
    assert sorted(ids) == sorted(samples.column("sample_id").to_pylist())
    proj = ls_client.get_project(rep.title)
    assert proj.maximum_annotations == 3
    # the server keeps only masked text + ids: the original text never leaves
    t0 = ls_client.sdk.tasks.get(id=next(iter(ids.values())))
    assert set(t0.data) == {"text", "sample_id", "round"} and "XYZ" in t0.data["text"]

    # annotators: ann1 and ann2 read the text like VADER (ann2 differs on every 5th item), ann3 is careless
    rows = sorted(samples.to_pylist(), key=lambda r: r["sample_id"])
    truth = {}
    for i, r in enumerate(rows):
        tid = ids[r["sample_id"]]
        l1 = r["vader_label"]
        l2 = l1 if i % 5 else ORD[(ORD.index(l1) + 1) % 3]
        l3 = _careless(i)
        for user, lab in ((a1, l1), (a2, l2), (a3, l3)):
            # each annotator works with their own token: the server records them as the author
            record_annotation(annotator_clients[user], tid, None, lab, SENT, lead_time=2.0 + i)
        truth[r["sample_id"]] = (l1, l2, l3)
    # bad input the server accepts: a label outside the config, and ann1 annotating an item twice
    first = rows[0]["sample_id"]
    record_annotation(annotator_clients[a3], ids[first], None, "ecstatic", SENT)
    relabel = "negative" if truth[first][0] != "negative" else "positive"
    record_annotation(annotator_clients[a1], ids[first], None, relabel, SENT)
    truth[first] = (relabel, truth[first][1], truth[first][2])
    record_annotation(annotator_clients[a2], ids[rows[1]["sample_id"]], None, [], SENT)  # an empty result

    res = pull(samples, client=ls_client)
    assert res.report.received == 75 and res.report.kept == 72
    assert dict(res.report.dropped) == {"label_outside_config": 1, "duplicate_annotation": 1, "empty_result": 1}
    assert res.rejected.num_rows == 3  # nothing lost
    ann = res.annotations
    assert set(ann.column("annotator").to_pylist()) == {a1, a2, a3}
    got = {(r["sample_id"], r["annotator"]): r["label"] for r in ann.to_pylist()}
    for sid, (l1, l2, l3) in truth.items():
        assert (got[(sid, a1)], got[(sid, a2)], got[(sid, a3)]) == (l1, l2, l3)
    assert {r["lead_time"] for r in ann.to_pylist() if r["sample_id"] == rows[3]["sample_id"]} == {5.0}

    # agreement equals the independent implementations
    agr = agreement(ann, n_boot=100)
    codes = np.array([[ORD.index(x) for x in truth[sid]] for sid in sorted(truth)])
    assert value(agr, "fleiss_kappa") == pytest.approx(fleiss_kappa(aggregate_raters(codes)[0]), abs=1e-12)
    assert value(agr, "krippendorff_alpha_ordinal") == pytest.approx(
        krippendorff.alpha(reliability_data=codes.T.astype(float), level_of_measurement="ordinal", value_domain=[0, 1, 2]), abs=1e-12
    )
    assert careless_annotators(agr) == [a3]

    # validation table: human majority vs VADER
    val = validate_metric(ann, samples, metric="vader", n_boot=100)
    srows = {r["sample_id"]: r for r in samples.to_pylist()}
    maj = {}
    for sid, labs in truth.items():
        c = {lab: labs.count(lab) for lab in labs}
        top = max(c.values())
        tops = [k for k, v in c.items() if v == top]
        if len(tops) == 1:
            maj[sid] = tops[0]
    ok = sorted(maj)
    y_true = [maj[s] for s in ok]
    y_pred = [srows[s]["vader_label"] for s in ok]
    rep_sk = classification_report(y_true, y_pred, labels=["positive", "neutral", "negative"], output_dict=True, zero_division=0)
    assert value(val.table, "accuracy") == pytest.approx(rep_sk["accuracy"])
    assert value(val.table, "f1_weighted") == pytest.approx(rep_sk["weighted avg"]["f1-score"])
    rho = spearmanr([ORD.index(maj[s]) for s in ok], [srows[s]["vader_compound"] for s in ok]).statistic
    assert value(val.table, "spearman_rho") == pytest.approx(rho, abs=1e-12)
    assert rho > 0.8


def test_pre_annotations_are_off_by_default_and_opt_in(ls_client, scores):
    s1, _ = sample_round(scores, round="pre-off", task="sentiment", n=3, seed=1)
    s2, _ = sample_round(scores, round="pre-on", task="sentiment", n=3, seed=1)
    r1 = push(s1, client=ls_client)
    r2 = push(s2, client=ls_client, pre_annotate="vader")
    assert r1.pre_annotations == 0 and r2.pre_annotations == 3
    ids = {v: k for k, v in ls_client.existing_sample_ids(r2.project_id).items()}
    labels = {r["sample_id"]: r["vader_label"] for r in s2.to_pylist()}
    preds = ls_client.sdk.predictions.list(project=r2.project_id)
    assert len(preds) == 3
    for p in preds:
        assert p.model_version == "vader" and p.result[0]["value"]["choices"] == [labels[ids[p.task]]]
    assert ls_client.sdk.predictions.list(project=r1.project_id) == []


def test_project_title_is_matched_exactly_and_duplicates_are_an_error(ls_client, scores):
    s, _ = sample_round(scores, round="exact", task="sentiment", n=2, seed=0)
    push(s, client=ls_client, project="Round exact")
    # a project whose title only contains the name (and differs in case) is not a match
    ls_client.sdk.projects.create(title="round EXACT copy", label_config=SENT.label_config())
    assert ls_client.find_project("Round exact").title == "Round exact"
    ls_client.sdk.projects.create(title="Round exact", label_config=SENT.label_config())
    with pytest.raises(BiaskitError) as e:
        push(s, client=ls_client, project="Round exact")
    assert e.value.code == "E092" and "2 projects" in str(e.value)


def test_existing_project_with_other_labels_is_refused(ls_client, scores):
    s, _ = sample_round(scores, round="clash", task="sentiment", n=2, seed=0)
    ls_client.sdk.projects.create(title="biaskit clash (sentiment)", label_config=get_task_type("toxicity").label_config())
    with pytest.raises(BiaskitError) as e:
        push(s, client=ls_client)
    assert e.value.code == "E092" and "toxic" in str(e.value)


def test_wrong_token_unknown_project_and_server_down_are_clear(ls_server, scores, capsys):
    s, _ = sample_round(scores, round="errs", task="sentiment", n=2, seed=0)
    fake = "fake-token-do-not-print-987654"
    with pytest.raises(BiaskitError) as e:
        push(s, url=ls_server.url, token=fake)
    assert e.value.code == "E090" and "rejected the token" in str(e.value) and fake not in str(e.value)
    with pytest.raises(BiaskitError) as e:
        pull(s, url=ls_server.url, token=ls_server.token, project="no such round")
    assert e.value.code == "E092" and "no such round" in str(e.value)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(BiaskitError) as e:
        push(s, url=f"http://127.0.0.1:{port}", token=fake)
    assert e.value.code == "E090" and "cannot reach" in str(e.value) and fake not in str(e.value)
    with pytest.raises(BiaskitError) as e:
        LabelStudio("localhost:8080", fake)
    assert "http://" in str(e.value)


def test_cli_push_pull_never_prints_the_token(ls_server, ls_client, annotator_ids, scores, tmp_path, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server.token)
    monkeypatch.setenv("LABEL_STUDIO_URL", ls_server.url)
    sc = tmp_path / "scores.parquet"
    write_table(scores, sc)
    led = tmp_path / "ledger.jsonl"
    samples = tmp_path / "samples.parquet"
    runner = CliRunner()
    r = runner.invoke(app, ["annotate", "sample", str(sc), "--round", "cli", "--n", "5", "--out", str(samples), "--ledger", str(led)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["annotate", "push", str(samples), "--annotators", "2", "--batch-size", "2", "--ledger", str(led)])
    assert r.exit_code == 0, r.output
    assert "imported 5 task(s) in 3 batch(es)" in r.output
    r = runner.invoke(app, ["annotate", "push", str(samples), "--ledger", str(led), "--annotators", "2"])
    assert "imported 0 task(s)" in r.output and "5 already there" in r.output
    proj = ls_client.get_project("biaskit cli (sentiment)")
    ids = ls_client.existing_sample_ids(proj.id)
    for sid, tid in ids.items():
        for user in list(annotator_ids)[:2]:
            record_annotation(ls_client, tid, annotator_ids[user], "neutral", SENT)
    out = tmp_path / "ann.parquet"
    r = runner.invoke(app, ["annotate", "pull", str(samples), "--out", str(out), "--ledger", str(led)])
    assert r.exit_code == 0, r.output
    assert read_table(out, "annotations").num_rows == 10
    # a wrong token from the environment: one coded line, the token is not echoed anywhere
    fake = "fake-token-do-not-print-123456"
    r = runner.invoke(app, ["annotate", "pull", str(samples), "--out", str(tmp_path / "x.parquet")], env={"LABEL_STUDIO_API_KEY": fake})
    assert r.exit_code == 1 and "E090" in r.output and fake not in r.output
    for f in (led, out.parent / (out.name + ".manifest.json")):
        text = f.read_text()
        assert ls_server.token not in text and fake not in text
    assert json.loads(led.read_text().splitlines()[1])["url"] == ls_server.url


def test_changing_the_overlap_updates_the_project_without_reimporting(ls_client, scores):
    s, _ = sample_round(scores, round="overlap", task="sentiment", n=4, seed=2)
    r = push(s, client=ls_client, annotators=2)
    assert ls_client.get_project(r.title).maximum_annotations == 2
    r2 = push(s, client=ls_client, annotators=5)
    assert r2.imported == 0 and ls_client.get_project(r.title).maximum_annotations == 5


def test_push_interrupted_midway_resumes_without_duplicates(ls_client, scores, monkeypatch):
    s, _ = sample_round(scores, round="resume", task="sentiment", n=10, seed=3)
    real = ls_client.import_tasks
    calls = {"n": 0}

    def flaky(pid, tasks):
        calls["n"] += 1
        if calls["n"] == 2:  # the connection drops on the second batch
            raise BiaskitError("E090", "the connection to Label Studio failed (import tasks)", fix="retry")
        return real(pid, tasks)

    monkeypatch.setattr(ls_client, "import_tasks", flaky)
    with pytest.raises(BiaskitError):
        push(s, client=ls_client, batch_size=4)
    monkeypatch.setattr(ls_client, "import_tasks", real)
    rep = push(s, client=ls_client, batch_size=4)
    assert rep.already_there == 4 and rep.imported == 6
    ids = ls_client.existing_sample_ids(rep.project_id)
    n_tasks = sum(1 for _ in ls_client.sdk.tasks.list(project=rep.project_id, include="id,data"))
    assert n_tasks == 10 and sorted(ids) == sorted(s.column("sample_id").to_pylist())


def test_gold_items_are_ground_truth_annotations_kept_apart_from_the_crowd(ls_client, annotator_ids, annotator_clients, scores):
    a1, a2, _ = annotator_ids
    gold = pa.table({"text": ["What a wonderful, happy day.", "This is awful and I hate it."], "gold_label": ["positive", "negative"]})
    samples, _ = sample_round(scores, round="gt", task="sentiment", n=6, bins=1, gold=gold, seed=0)
    assert sum(samples.column("is_gold").to_pylist()) == 2
    rep = push(samples, client=ls_client, annotators=2)
    ids = ls_client.existing_sample_ids(rep.project_id)
    srows = {r["sample_id"]: r for r in samples.to_pylist()}
    # on the server: each gold task carries one annotation flagged ground_truth with the known answer
    for sid, r in srows.items():
        anns = ls_client.sdk.annotations.list(id=ids[sid])
        if r["is_gold"]:
            assert len(anns) == 1 and anns[0].ground_truth is True
            assert anns[0].result[0]["value"]["choices"] == [r["gold_label"]]
        else:
            assert len(anns) == 0
    # crowd annotators label everything, gold included (one of them misses a gold item)
    for sid, r in srows.items():
        lab = r["gold_label"] if r["is_gold"] else r["vader_label"]
        record_annotation(annotator_clients[a1], ids[sid], None, lab, SENT)
        record_annotation(annotator_clients[a2], ids[sid], None, "neutral" if r["is_gold"] else lab, SENT)
    res = pull(samples, client=ls_client)
    assert res.report.kept == 16 and set(res.annotations.column("annotator").to_pylist()) == {a1, a2}
    gt = {r["sample_id"]: r["label"] for r in res.ground_truth.to_pylist()}
    assert gt == {sid: r["gold_label"] for sid, r in srows.items() if r["is_gold"]}
    # re-pushing imports nothing (the ground-truth annotations are not duplicated either)
    again = push(samples, client=ls_client, annotators=2)
    assert again.imported == 0
    assert len(pull(samples, client=ls_client).ground_truth) == 2
    # annotator gold accuracy: a1 right on both gold items, a2 wrong on both
    agr = agreement(res.annotations, samples=samples, n_boot=0)
    assert value(agr, "annotator_gold_accuracy", annotator=a1) == 1.0
    assert value(agr, "annotator_gold_accuracy", annotator=a2) == 0.0
