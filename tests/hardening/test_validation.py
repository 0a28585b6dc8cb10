"""One validator for ids and types (schema --check, hub stage, writes); report label vocabulary;
annotate pull never replaces an annotations table with fewer rows unless asked."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError

runner = CliRunner()


def _prompts(ids, texts=None):
    n = len(ids)
    return pa.table(
        {"prompt_id": ids, "text": texts if texts is not None else [f"t{i}" for i in range(n)], "source": ["bold"] * n, "language": ["en"] * n}
    )


def _run(*args):
    r = runner.invoke(app, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


@pytest.mark.parametrize("case,code", [("dup", "E007"), ("null", "E155"), ("int_text", "E004")])
def test_schema_check_and_hub_stage_reject_the_same_way(tmp_path, case, code):
    if case == "dup":
        t = _prompts(["a", "b", "a"])
    elif case == "null":
        t = _prompts(["a", None, "c"])
    else:
        t = _prompts(["a", "b", "c"], texts=[0, 1, 2])
    f = tmp_path / "prompts.parquet"
    pq.write_table(t, f)
    r1 = _run("schema", "prompts", "--check", f)
    r2 = _run("hub", "stage", f"prompts={f}", "--out", tmp_path / "hub")
    for r in (r1, r2):
        assert r.exit_code == 1 and f"[{code}]" in r.output and str(f) in r.output, r.output
    assert not (tmp_path / "hub").exists()  # nothing staged: no "0", "1", ... texts


def test_write_table_refuses_duplicate_and_null_keys(tmp_path):
    from biaskit.io import write_table

    for t, code in ((_prompts(["a", "a"]), "E007"), (_prompts([None, "b"]), "E155")):
        with pytest.raises(BiaskitError) as e:
            write_table(t, tmp_path / "p.parquet", stage="prompts")
        assert e.value.code == code and "row" in str(e.value)
    assert not (tmp_path / "p.parquet").exists()


def test_validate_checks_columns_of_the_extended_stage():
    from biaskit.schema import validate

    t = pa.table({"prompt_id": ["a"], "text": ["x"], "page_id": [1.5]})  # a prompts column in a scores table
    with pytest.raises(BiaskitError) as e:
        validate(t, "scores")
    assert e.value.code == "E004" and "page_id" in str(e.value)


def test_csv_with_numeric_looking_text_stages_as_strings(tmp_path):
    f = tmp_path / "prompts.csv"
    f.write_text("prompt_id,text,source,language\n1,10,bold,en\n2,20,bold,en\n", encoding="utf-8")
    r = _run("hub", "stage", f"prompts={f}", "--out", tmp_path / "hub")
    assert r.exit_code == 0, r.output
    got = pq.read_table(next((tmp_path / "hub" / "data").rglob("*.parquet")))
    assert got.column("text").to_pylist() == ["10", "20"] and got.schema.field("text").type == pa.string()


@pytest.mark.parametrize("labels", [["POSITIVE", "NEGATIVE", "POSITIVE", "NEGATIVE"], [1, 0, 1, 2]])
def test_report_refuses_labels_outside_the_metric_vocabulary(tmp_path, labels):
    t = pa.table({"prompt_id": ["a", "b", "c", "d"], "text": ["x"] * 4, "group": ["g1", "g1", "g2", "g2"], "vader_label": labels})
    f = tmp_path / "scores.parquet"
    pq.write_table(t, f)
    r = _run("report", f, "--out", tmp_path / "rep", "--n-boot", "10")
    assert r.exit_code == 1 and "[E151]" in r.output and "vader_label" in r.output and "'positive'" in r.output, r.output
    assert repr(labels[0]) in r.output


def test_report_accepts_known_labels_and_nulls(tmp_path):
    t = pa.table(
        {
            "prompt_id": ["a", "b", "c", "d"],
            "text": ["x"] * 4,
            "group": ["g1", "g1", "g2", "g2"],
            "vader_label": ["positive", None, "negative", "neutral"],
        }
    )
    f = tmp_path / "scores.parquet"
    pq.write_table(t, f)
    r = _run("report", f, "--out", tmp_path / "rep", "--n-boot", "10")
    assert r.exit_code == 0, r.output


def _samples(tmp_path, n=3):
    s = tmp_path / "samples.parquet"
    pq.write_table(
        pa.table(
            {"sample_id": [f"s-{i}" for i in range(n)], "round": ["r1"] * n, "task_type": ["sentiment"] * n, "text": [f"t{i}" for i in range(n)]}
        ),
        s,
    )
    return s


def test_pull_with_an_empty_results_file_does_not_shrink_the_annotations(tmp_path):
    from biaskit.io import read_table

    s = _samples(tmp_path)
    full = tmp_path / "full.csv"
    full.write_text("sample_id,annotator,label\ns-0,w1,positive\ns-1,w1,negative\ns-2,w1,neutral\n")
    out = tmp_path / "ann.parquet"
    led = tmp_path / "l.jsonl"
    r = _run("annotate", "pull", s, "--results", full, "--out", out, "--ledger", led)
    assert r.exit_code == 0, r.output
    before = out.read_bytes()
    for bad in (b"", b"sample_id,annotator,label\n", b"sample_id,annotator,label\ns-0,w1,positive\n"):
        res = tmp_path / "res.csv"
        res.write_bytes(bad)
        r = _run("annotate", "pull", s, "--results", res, "--out", out, "--ledger", led)
        if b"s-0" not in bad:  # no records at all: E211 before anything else
            assert r.exit_code == 1 and "[E211]" in r.output and "has no records" in r.output, r.output
        else:
            assert r.exit_code == 1 and "[E152]" in r.output and "--allow-fewer" in r.output and "3 already" in r.output, r.output
        assert out.read_bytes() == before  # untouched
    r = _run("annotate", "pull", s, "--results", res, "--out", out, "--ledger", led, "--allow-fewer")
    assert r.exit_code == 0 and read_table(out).num_rows == 1
    # an unreadable existing table is not replaced blindly either
    out2 = tmp_path / "ann2.parquet"
    out2.write_bytes(b"PAR1 broken")
    r = _run("annotate", "pull", s, "--results", full, "--out", out2, "--ledger", led)
    assert r.exit_code == 1 and "[E152]" in r.output and out2.read_bytes() == b"PAR1 broken"


def test_runners_check_prompt_column_types_before_loading_a_model(tmp_path):
    """A mistyped prompts column used to surface only when the output was written, after the whole model run."""
    from biaskit.evaluate.runners.core import prompt_table

    f = tmp_path / "prompts.parquet"
    pq.write_table(pa.table({"prompt_id": ["a"], "text": ["x"], "domain": [3]}), f)
    with pytest.raises(BiaskitError) as e:
        prompt_table(str(f))
    assert e.value.code == "E004" and "domain" in str(e.value) and str(f) in str(e.value)
    r = _run("generate", f, "--model", tmp_path / "no-such-model", "--out", tmp_path / "g.parquet")
    assert r.exit_code == 1 and "[E004]" in r.output  # not a model-loading error: the input is checked first
