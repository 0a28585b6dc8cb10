"""`biaskit hub load` of BBQ's published JSON Lines into the table of `expand bbq`, extra columns kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.datasets.load import detect_kind, load_source
from biaskit.errors import BiaskitError
from biaskit.io import read_manifest, read_table
from biaskit.templates.bbq import COLUMNS

FIX = Path(__file__).parents[1] / "fixtures" / "bbq"


def test_published_file_is_detected_and_loaded_into_the_expand_schema():
    assert detect_kind(str(FIX / "Age_head8.jsonl")) == "bbq_jsonl"
    res = load_source(FIX / "Age_head8.jsonl")
    t = res.table
    assert res.kind == "bbq_jsonl" and t.num_rows == 8
    assert t.column_names[: len(COLUMNS)] == [c for c, _ in COLUMNS]
    first = t.slice(0, 1).to_pylist()[0]
    # Age.jsonl line 1: ans0 "The grandfather" (old), ans1 "The grandson" (nonOld), ans2 unknown; label 2
    assert (first["ans0"], first["label"], first["question_index"], first["subcategory"]) == ("The grandfather", 2, "1", "None")
    assert first["target_loc"] == 0 and first["label_type"] == "label"
    assert json.loads(first["stereotyped_groups"]) == ["old"]
    assert json.loads(first["answer_info"])["ans2"] == ["Can't be determined", "unknown"]


def test_nationality_target_is_found_by_the_answer_text_when_groups_are_regions():
    t = load_source(FIX / "Nationality_head8.jsonl").table.to_pylist()
    for r in t:
        info = json.loads(r["answer_info"])
        assert info[f"ans{r['target_loc']}"][0] in json.loads(r["stereotyped_groups"])


def test_extra_columns_such_as_predictions_are_kept(tmp_path):
    src = tmp_path / "Age.jsonl"
    lines = (FIX / "Age_head8.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(x) | {"pred": f"ans{i % 3}", "scores": [0.1, 0.2, 0.7]} for i, x in enumerate(lines)]
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    out = tmp_path / "age.parquet"
    r = CliRunner().invoke(app, ["hub", "load", str(src), "--out", str(out)])
    assert r.exit_code == 0, r.output
    t = read_table(out)
    assert t.column("pred").to_pylist() == ["ans0", "ans1", "ans2", "ans0", "ans1", "ans2", "ans0", "ans1"]
    assert json.loads(t.column("scores")[0].as_py()) == [0.1, 0.2, 0.7]
    assert read_manifest(out)["config"]["kind"] == "bbq_jsonl"


def test_a_row_without_the_bbq_keys_is_e415_naming_the_line(tmp_path):
    src = tmp_path / "x.jsonl"
    good = (FIX / "Age_head8.jsonl").read_text(encoding="utf-8").splitlines()[0]
    bad = json.loads(good)
    del bad["label"]
    src.write_text(good + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(BiaskitError) as e:
        load_source(src, kind="bbq_jsonl")
    assert e.value.code == "E415" and "x.jsonl line 2" in str(e.value) and "label" in str(e.value)


def test_expand_bbq_command_writes_the_table_its_manifest_and_the_notes(tmp_path):
    out = tmp_path / "bbq.jsonl"
    r = CliRunner().invoke(app, ["expand", "bbq", "--categories", "Disability_status,Religion", "--seed", "2", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "wrote" in r.output and "2756 BBQ examples" in r.output  # 1556 + 1200
    assert r.output.count("note: new_templates - Disability_status.csv") == 3
    man = read_manifest(out)
    assert man["seed"] == 2 and man["config"]["categories"] == ["Disability_status", "Religion"]
    again = load_source(out, kind="bbq_jsonl").table
    assert again.num_rows == 2756


def test_a_table_written_by_expand_bbq_loads_back_identically(tmp_path):
    from biaskit.io import write_table
    from biaskit.templates.bbq import expand_bbq

    t = expand_bbq(seed=0, categories=["Race_x_gender"]).slice(0, 48)
    write_table(t, tmp_path / "bbq.jsonl")
    back = load_source(tmp_path / "bbq.jsonl").table
    assert back.to_pylist() == t.to_pylist()


def test_a_file_that_is_not_utf8_is_e415_or_not_taken_for_bbq(tmp_path):
    src = tmp_path / "x.jsonl"
    good = (FIX / "Age_head8.jsonl").read_bytes().splitlines()[0]
    src.write_bytes(good + b"\n" + b'{"context": "caf\xe9"}\n')
    with pytest.raises(BiaskitError) as e:
        load_source(src, kind="bbq_jsonl")
    assert e.value.code == "E415" and "x.jsonl line 2 is not UTF-8" in str(e.value)
    bad_first = tmp_path / "y.jsonl"
    bad_first.write_bytes(b'{"context_condition": "caf\xe9"}\n')
    assert detect_kind(str(bad_first)) == "bold_hub"  # not taken for BBQ; the BOLD reader reports it
