"""The shared validation path and the file-based round for other platforms (incl. the CLI)."""

import csv
import json

import pytest
from typer.testing import CliRunner

from biaskit.annotate.files import export_tasks, read_results
from biaskit.annotate.results import validate_records
from biaskit.annotate.sampling import sample_round
from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.io import read_table, write_table

runner = CliRunner()


def test_validate_records_drops_counts_and_keeps_every_rejected_record():
    recs = [
        {"sample_id": "s1", "annotator": "a", "label": "positive", "created_at": "2026-01-01T00:00:00Z", "annotation_id": 1},
        {"sample_id": "s1", "annotator": "a", "label": ["Negative"], "created_at": "2026-01-02T00:00:00Z", "annotation_id": 2},
        {"sample_id": "s1", "annotator": "b", "label": "ecstatic"},
        {"sample_id": "s1", "annotator": "c", "label": []},
        {"sample_id": "s1", "annotator": "d", "label": ["positive", "negative"]},
        {"sample_id": "s1", "annotator": "e", "label": "neutral", "cancelled": True},
        {"sample_id": "nope", "annotator": "a", "label": "neutral"},
        {"sample_id": "s2", "annotator": "b", "label": "neutral", "lead_time": 4.5},
    ]
    ann, rej, rep = validate_records(recs, task="sentiment", round="r1", platform="file", sample_ids=["s1", "s2", "s3"])
    assert ann.select(["sample_id", "annotator", "label"]).to_pylist() == [
        {"sample_id": "s1", "annotator": "a", "label": "negative"},  # latest of the two by annotator a
        {"sample_id": "s2", "annotator": "b", "label": "neutral"},
    ]
    assert dict(rep.dropped) == {
        "duplicate_annotation": 1,
        "label_outside_config": 1,
        "empty_result": 1,
        "several_labels": 1,
        "skipped": 1,
        "unknown_sample": 1,
    }
    assert rep.received == 8 and rep.kept == 2 and rep.received == rep.kept + rej.num_rows  # nothing lost
    assert rep.items_without_annotations == 1
    dup = [r for r in rej.to_pylist() if r["reason"] == "duplicate_annotation"][0]
    assert dup["label"] == "positive" and dup["annotation_id"] == "1"
    assert ann.column("lead_time").to_pylist() == [None, 4.5]
    assert "2 annotations kept of 8 received" in rep.summary()


def test_file_round_export_and_import(tmp_path, scores):
    s, _ = sample_round(scores, round="r1", task="sentiment", n=6, seed=0)
    f, g = export_tasks(s, tmp_path / "tasks.csv")
    rows = list(csv.DictReader(open(f, encoding="utf-8")))
    assert [r["sample_id"] for r in rows] == s.column("sample_id").to_pylist()
    assert rows[0]["choices"] == "positive|neutral|negative" and "XYZ" in rows[0]["text"]
    assert "original_text" not in rows[0]  # the unmasked text stays local
    assert "Annotation guidelines: sentiment" in g.read_text()
    res = tmp_path / "results.jsonl"
    with open(res, "w") as fh:
        for r in rows:
            for a in ("w1", "w2"):
                fh.write(json.dumps({"sample_id": r["sample_id"], "annotator": a, "label": "positive", "lead_time": "3"}) + "\n")
        fh.write(json.dumps({"sample_id": rows[0]["sample_id"], "annotator": "w1", "label": "POSITIVE "}) + "\n")
    ann, rej, rep = read_results(res, s)
    assert ann.num_rows == 12 and rep.dropped == {"duplicate_annotation": 1}
    assert set(ann.column("platform").to_pylist()) == {"file"}
    with pytest.raises(BiaskitError) as e:
        export_tasks(s, tmp_path / "tasks.xlsx")
    assert e.value.code == "E002"
    bad = tmp_path / "bad.csv"
    bad.write_text("item,worker,answer\n1,2,3\n")
    with pytest.raises(BiaskitError) as e:
        read_results(bad, s)
    assert "sample_id" in str(e.value) and e.value.code == "E001"


def test_cli_file_round_sample_pull_agreement_validate_rounds(tmp_path, scores):
    sc = tmp_path / "scores.parquet"
    write_table(scores, sc)
    led = str(tmp_path / "ledger.jsonl")
    samples = tmp_path / "r1" / "samples.parquet"
    r = runner.invoke(
        app,
        [
            "annotate",
            "sample",
            str(sc),
            "--round",
            "r1",
            "--task",
            "sentiment",
            "--n",
            "12",
            "--out",
            str(samples),
            "--tasks-out",
            str(tmp_path / "r1" / "tasks.jsonl"),
            "--ledger",
            led,
        ],
    )
    assert r.exit_code == 0, r.output
    assert "12 items + 0 gold" in r.output
    s = read_table(samples, "samples")
    # three workers: w1 and w2 follow VADER, w3 always says 'neutral'
    res = tmp_path / "r1" / "results.csv"
    with open(res, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["sample_id", "annotator", "label"])
        for row in s.to_pylist():
            w.writerow([row["sample_id"], "w1", row["vader_label"]])
            w.writerow([row["sample_id"], "w2", row["vader_label"]])
            w.writerow([row["sample_id"], "w3", "neutral"])
        w.writerow([s.column("sample_id")[0].as_py(), "w3", "meh"])
    out = tmp_path / "r1" / "annotations.parquet"
    r = runner.invoke(app, ["annotate", "pull", str(samples), "--results", str(res), "--out", str(out), "--ledger", led])
    assert r.exit_code == 0, r.output
    assert "label_outside_config 1" in r.output
    assert "dropped 1 x label_outside_config: label not in the task's label set" in r.output and "by w3 (meh)" in r.output
    assert read_table(str(out) + ".rejected.jsonl").column("label").to_pylist() == ["meh"]
    agr = tmp_path / "r1" / "agreement.parquet"
    r = runner.invoke(app, ["annotate", "agreement", str(out), "--samples", str(samples), "--out", str(agr), "--bootstrap", "50", "--ledger", led])
    assert r.exit_code == 0, r.output
    assert "possibly careless annotators" in r.output and "w3" in r.output
    val = tmp_path / "r1" / "validation.parquet"
    r = runner.invoke(
        app,
        ["annotate", "validate", str(out), "--samples", str(samples), "--metric", "vader", "--out", str(val), "--bootstrap", "50", "--ledger", led],
    )
    assert r.exit_code == 0, r.output
    v = read_table(val, "agreement")
    acc = [x for x in v.to_pylist() if x["measure"] == "accuracy"][0]
    assert acc["estimate"] == 1.0 and acc["metric"] == "vader"  # the w1/w2 majority is VADER's label
    r = runner.invoke(app, ["annotate", "rounds", "--ledger", led])
    assert r.exit_code == 0 and r.output.startswith("r1:") and "vader.accuracy=1.000" in r.output
    # a second round excludes the first round's items through the ledger
    r = runner.invoke(app, ["annotate", "sample", str(sc), "--round", "r2", "--n", "500", "--out", str(tmp_path / "r2.parquet"), "--ledger", led])
    assert r.exit_code == 0 and "excluded 12" in r.output


def test_cli_pull_without_rejects_removes_the_rejected_file_of_an_earlier_pull(tmp_path, scores):
    # the stale <out>.rejected.jsonl of the first pull stayed next to the new annotations, listing drops that no longer exist
    samples = tmp_path / "samples.parquet"
    t, _ = sample_round(scores, round="r1", task="sentiment", n=4, seed=0)
    write_table(t, samples)
    sid = t.column("sample_id")[0].as_py()
    res, out = tmp_path / "results.csv", tmp_path / "annotations.parquet"
    rej = tmp_path / "annotations.parquet.rejected.jsonl"
    led = str(tmp_path / "ledger.jsonl")
    res.write_text(f"sample_id,annotator,label\n{sid},w1,positive\n{sid},w2,meh\n")
    r = runner.invoke(app, ["annotate", "pull", str(samples), "--results", str(res), "--out", str(out), "--ledger", led])
    assert r.exit_code == 0, r.output
    assert rej.exists()
    res.write_text(f"sample_id,annotator,label\n{sid},w1,positive\n{sid},w2,negative\n")
    r = runner.invoke(app, ["annotate", "pull", str(samples), "--results", str(res), "--out", str(out), "--ledger", led])
    assert r.exit_code == 0, r.output
    assert read_table(out).num_rows == 2 and not rej.exists()


def test_result_line_that_is_not_an_object_is_a_coded_error(tmp_path, scores):
    # a JSON array on line 2 crashed with AttributeError: 'list' object has no attribute 'get'
    t, _ = sample_round(scores, round="r1", task="sentiment", n=2, seed=0)
    sid = t.column("sample_id")[0].as_py()
    p = tmp_path / "results.jsonl"
    p.write_text(json.dumps({"sample_id": sid, "annotator": "w1", "label": "positive"}) + "\n" + json.dumps([sid, "w2", "negative"]) + "\n")
    with pytest.raises(BiaskitError) as e:
        read_results(p, t)
    assert e.value.code == "E091" and "line 2" in str(e.value) and "fix:" in str(e.value)


def test_cli_sample_refuses_when_an_earlier_rounds_samples_file_is_gone(tmp_path, scores):
    # the ledger's round r1 used to be skipped silently when its file was missing, so r2 could redraw r1's items
    sc = tmp_path / "scores.parquet"
    write_table(scores, sc)
    led = str(tmp_path / "ledger.jsonl")
    r1 = tmp_path / "r1.parquet"
    r = runner.invoke(app, ["annotate", "sample", str(sc), "--round", "r1", "--n", "12", "--out", str(r1), "--ledger", led])
    assert r.exit_code == 0, r.output
    r1.unlink()
    r = runner.invoke(app, ["annotate", "sample", str(sc), "--round", "r2", "--n", "12", "--out", str(tmp_path / "r2.parquet"), "--ledger", led])
    assert r.exit_code == 1 and r.output.startswith("error[E092]") and "r1.parquet" in r.output and "--include-previous" in r.output
    r = runner.invoke(
        app,
        ["annotate", "sample", str(sc), "--round", "r2", "--n", "12", "--out", str(tmp_path / "r2.parquet"), "--ledger", led, "--include-previous"],
    )
    assert r.exit_code == 0, r.output
    # resampling r1 to a new file: the ledger's latest r1 entry counts, the deleted first file no longer matters
    r = runner.invoke(
        app,
        ["annotate", "sample", str(sc), "--round", "r1", "--n", "12", "--out", str(tmp_path / "r1b.parquet"), "--ledger", led, "--include-previous"],
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["annotate", "sample", str(sc), "--round", "r3", "--n", "12", "--out", str(tmp_path / "r3.parquet"), "--ledger", led])
    assert r.exit_code == 0 and "excluded 12" in r.output, r.output  # r1b and r2 drew the same 12 (seed 0, nothing excluded)


def test_cli_sample_with_nothing_to_draw_is_an_error_not_an_empty_round(tmp_path):
    # a table without texts wrote an empty samples file and a ledger entry, exit 0 ("0 items + 0 gold")
    src = tmp_path / "t.csv"
    src.write_text("a,b\n1,2\n")
    out, led = tmp_path / "s.parquet", tmp_path / "ledger.jsonl"
    r = runner.invoke(app, ["annotate", "sample", str(src), "--round", "r1", "--n", "5", "--out", str(out), "--ledger", str(led)])
    assert r.exit_code == 1 and r.output.startswith("error[E091] no items to draw") and "'without_text': 1" in r.output
    assert not out.exists() and not led.exists()


def test_cli_errors_are_one_line_with_code(tmp_path, scores):
    sc = tmp_path / "scores.parquet"
    write_table(scores, sc)
    r = runner.invoke(app, ["annotate", "sample", str(sc), "--round", "r1", "--task", "sentimnt", "--out", str(tmp_path / "s.parquet")])
    assert r.exit_code == 1
    assert "E091" in r.output and "sentimnt" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("cmd", ["sample", "export", "push", "pull", "agreement", "validate", "rounds", "tasks"])
def test_help_texts_have_examples(cmd):
    r = runner.invoke(app, ["annotate", cmd, "--help"])
    assert r.exit_code == 0 and "Example:" in r.output and "biaskit annotate" in r.output


def test_help_never_shows_the_token_from_the_environment(monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "fake-token-in-env-5551234")
    for cmd in ("push", "pull"):
        r = runner.invoke(app, ["annotate", cmd, "--help"])
        assert r.exit_code == 0 and "fake-token-in-env-5551234" not in r.output


def test_cli_per_label_design_and_bad_spec(tmp_path, scores):
    sc = tmp_path / "scores.parquet"
    write_table(scores, sc)
    out = tmp_path / "s.parquet"
    r = runner.invoke(
        app,
        [
            "annotate",
            "sample",
            str(sc),
            "--round",
            "sheng",
            "--task",
            "regard",
            "--metric",
            "vader",
            "--per-label",
            "positive=3,negative=3",
            "--by",
            "group",
            "--out",
            str(out),
            "--ledger",
            str(tmp_path / "l"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "18 items" in r.output and read_table(out, "samples").num_rows == 18
    r = runner.invoke(
        app,
        [
            "annotate",
            "sample",
            str(sc),
            "--round",
            "x",
            "--per-label",
            "positive:3",
            "--by",
            "group",
            "--out",
            str(out),
            "--ledger",
            str(tmp_path / "l"),
        ],
    )
    assert r.exit_code == 1 and "positive:3" in r.output and "positive=3,negative=3" in r.output
