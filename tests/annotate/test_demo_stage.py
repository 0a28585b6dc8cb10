"""The demo's annotate stage: export-only without a server; a full round with --label-studio-url."""

import pytest

from biaskit.annotate.agreement import value
from biaskit.annotate.labelstudio import record_annotation
from biaskit.annotate.tasks import get_task_type
from biaskit.demo import DemoContext, stage_annotate
from biaskit.io import read_table, write_table


def _ctx(tmp_path, scores=None, url=None):
    ctx = DemoContext(run_dir=tmp_path, seed=0, quick=True, label_studio_url=url)
    if scores is not None:
        write_table(scores, tmp_path / "scores.parquet")
        ctx.add("scores", tmp_path / "scores.parquet")
    return ctx


def test_no_scores_is_a_skip_note(tmp_path):
    ctx = _ctx(tmp_path)
    stage_annotate.run(ctx)
    assert ctx.summary == [("annotate", "skipped: no scores table from the score stage")]
    assert "samples" not in ctx.tables


def test_without_server_exports_the_round_and_invents_no_labels(tmp_path, scores):
    ctx = _ctx(tmp_path, scores)
    stage_annotate.run(ctx)
    s = read_table(ctx.tables["samples"], "samples")
    assert s.num_rows == 12 and set(s.column("task_type").to_pylist()) == {"sentiment"}
    assert (tmp_path / "annotate" / "tasks.csv").exists() and (tmp_path / "annotate" / "tasks.csv.guidelines.md").exists()
    assert "annotations" not in ctx.tables and "agreement" not in ctx.tables
    assert "no human labels" in ctx.summary[-1][1] and "biaskit annotate push" in ctx.summary[-1][1]


def test_without_token_the_note_shows_the_url_without_credentials(tmp_path, scores, monkeypatch):
    # the note (which goes into the report) used to repeat the URL as given, password included
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    ctx = _ctx(tmp_path, scores, "http://admin:s3cret-pass@localhost:8080/")
    stage_annotate.run(ctx)
    note = ctx.summary[-1][1]
    assert "not pushed" in note and "http://localhost:8080" in note
    assert "s3cret-pass" not in note and "admin" not in note


@pytest.mark.server
def test_with_server_pushes_then_pulls_a_full_round(tmp_path, scores, ls_server, ls_client, annotator_clients, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls_server.token)
    ctx = _ctx(tmp_path, scores, ls_server.url)
    stage_annotate.run(ctx)
    assert "no annotations yet" in ctx.summary[-1][1]
    assert "annotations" not in ctx.tables
    proj = ls_client.get_project("biaskit demo (sentiment)")
    ids = ls_client.existing_sample_ids(proj.id)
    assert len(ids) == 12
    s = {r["sample_id"]: r for r in read_table(ctx.tables["samples"]).to_pylist()}
    task = get_task_type("sentiment")
    # three annotators, each through the API with their own token
    for k, (sid, tid) in enumerate(sorted(ids.items())):
        for j, user in enumerate(sorted(annotator_clients)):
            lab = s[sid]["vader_label"] if (j < 2 or k % 3) else "neutral"
            record_annotation(annotator_clients[user], tid, None, lab, task)
    ctx2 = _ctx(tmp_path, scores, ls_server.url)  # rerun the stage: nothing imported twice, labels pulled
    stage_annotate.run(ctx2)
    assert ctx2.info["annotate"]["imported"] == 0 and ctx2.info["annotate"]["already_there"] == 12
    ann = read_table(ctx2.tables["annotations"], "annotations")
    assert ann.num_rows == 36
    agr = read_table(ctx2.tables["agreement"], "agreement")
    assert value(agr, "accuracy", metric="vader") == 1.0  # two of three annotators always follow VADER
    assert value(agr, "fleiss_kappa") is not None
    assert "36 labels by 3 annotators on 12 items" in ctx2.summary[-1][1]
    # the new steps: Dawid-Skene labels, validation by group, a plan and the next round drawn from it
    assert ctx2.info["annotate"]["label_model"] == "dawid-skene"
    assert read_table(tmp_path / "annotate" / "labels.parquet").num_rows == 12
    assert value(agr, "labels_items") == 12.0
    groups = {r["group"] for r in agr.to_pylist() if r["measure"] == "group_accuracy"}
    assert groups == set(read_table(ctx2.tables["samples"]).column("group").to_pylist())
    import json

    plan = json.loads((tmp_path / "annotate" / "plan.json").read_text())
    nxt = read_table(tmp_path / "annotate" / "next_round.parquet", "samples")
    got = nxt.column("group").to_pylist()
    sc = scores.to_pylist()
    for g, e in plan["groups"].items():  # planned counts, capped by the unlabelled items of the group
        left = sum(r["group"] == g for r in sc) - sum(x == g for x in read_table(ctx2.tables["samples"]).column("group").to_pylist())
        assert got.count(g) == min(e["n_more"], left)
    assert not set(nxt.column("sample_id").to_pylist()) & set(s)
    assert "next round planned" in ctx2.summary[-1][1]
    # the report shows the fairness section
    from biaskit.evaluate.report.build import build_report

    res = build_report(tmp_path, tmp_path / "report", n_boot=20)
    assert "fairness" in res.sections
    assert ls_server.token not in (tmp_path / "annotate" / "rounds.jsonl").read_text()
