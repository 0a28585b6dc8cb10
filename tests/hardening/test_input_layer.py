"""The input layer (biaskit.inputs) and the one label vocabulary (biaskit.labels): every case below used to give a
traceback, a silent wrong result or a refusal of valid input; each is a coded error (or the right result) now."""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError

ROOT = Path(__file__).resolve().parents[2]
LMEVAL = ROOT / "tests" / "fixtures" / "lmeval" / "smollm2"


def _cli(*args):
    return CliRunner().invoke(app, ["--quiet", *[str(a) for a in args]])


def _code(fn, *a, **kw) -> BiaskitError:
    with pytest.raises(BiaskitError) as ei:
        fn(*a, **kw)
    return ei.value


# ---------------------------------------------------------------------------------------------- the layer itself


def test_deep_nesting_is_a_coded_error_not_recursion(tmp_path):
    from biaskit.inputs import MAX_DEPTH, loads_json, read_json

    e = _code(loads_json, "[" * 100_000, source="x.json")
    assert e.code == "E380" and "x.json" in e.message and "nested more than" in e.message
    e = _code(loads_json, "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), source="y.json")  # valid JSON, too deep
    assert e.code == "E380"
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, source="ok.json") is not None  # the limit itself is fine
    f = tmp_path / "bom.json"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps({"a": 1}).encode())  # a BOM at the start is accepted
    assert read_json(f) == {"a": 1}


def test_nonfinite_numbers_refused_unless_asked_for():
    from biaskit.inputs import loads_json

    for bad in ('{"a": NaN}', '{"a": Infinity}', "[-Infinity]"):
        e = _code(loads_json, bad, source="f.json")
        assert e.code == "E381" and "finite number" in e.message
    assert loads_json("[-Infinity]", source="f.json", nonfinite=True) == [float("-inf")]


def test_declared_record_checks_types_counts_and_unknown_keys():
    from biaskit.inputs import Field, check_record

    spec = {"n": Field("int", minimum=0, required=True), "name": Field("str")}
    assert check_record({"n": 3.0, "name": "a"}, spec, source="f") == {"n": 3, "name": "a"}  # a whole float is a count
    for bad, needle in (({"n": -1}, "must be >= 0"), ({"n": True}, "not boolean"), ({"n": 2.5}, "whole number"), ({}, "lacks the key")):
        e = _code(check_record, bad, spec, source="f.json")
        assert e.code == "E381" and needle in e.message and "f.json" in e.message
    e = _code(check_record, {"n": 1, "nme": "x"}, spec, source="f.json")
    assert e.code == "E382" and "'nme'" in e.message and "valid: 'n', 'name'" in e.message


def test_path_component_fits_255_bytes_and_stays_distinct():
    from biaskit.inputs import path_component

    a, b = "x" * 300, "x" * 299 + "y"
    ca, cb = path_component(a, suffix=".parquet"), path_component(b, suffix=".parquet")
    assert len((ca + ".parquet").encode()) <= 255 and len((cb + ".parquet").encode()) <= 255 and ca != cb
    assert path_component("short") == "short"
    cz = path_component("ž" * 200)  # 400 bytes of UTF-8: cut on a character boundary
    assert len(cz.encode()) <= 255 and cz.encode().decode("utf-8") == cz


# ---------------------------------------------------------------------------------------------- plan files


def _plan(tmp_path, groups, **top) -> Path:
    p = tmp_path / "plan.json"
    doc = {"version": 1, "metric": "vader", "rate": "accuracy", "group_by": "group", "groups": groups, **top}
    p.write_text(json.dumps(doc) if "raw" not in top else top["raw"], encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"n_more": -5}, "must be >= 0"),  # used to draw 173 items
        ({"n_more": "ten"}, "not string"),  # used to be a ValueError traceback in planning.py
        ({"n_more": [3]}, "not list"),  # TypeError traceback
        ({"n_more": 2.5}, "whole number"),
        (7, "must be a JSON object"),  # a group entry that is not an object: AttributeError traceback
    ],
)
def test_plan_entries_are_checked(tmp_path, entry, needle):
    from biaskit.annotate.planning import read_plan

    e = _code(read_plan, _plan(tmp_path, {"a": entry}))
    assert e.code == "E381" and needle in e.message and "plan.json" in e.message and "groups['a']" in e.message


def test_plan_nan_unknown_key_and_good_plan(tmp_path):
    from biaskit.annotate.planning import quotas, read_plan

    p = tmp_path / "nan.json"
    p.write_text('{"group_by": "group", "groups": {"a": {"n_more": NaN}}}')
    assert _code(read_plan, p).code == "E381"
    assert _code(read_plan, _plan(tmp_path, {"a": {"n_more": 1, "n_mroe": 2}})).code == "E382"
    assert quotas(read_plan(_plan(tmp_path, {"a": {"n_more": 4.0}, "b": {"n_more": None}}))) == {"a": 4, "b": 0}


def test_plan_rate_label_checked_against_the_task(tmp_path):
    from biaskit.annotate.planning import read_plan
    from biaskit.annotate.tasks import get_task_type

    p = _plan(tmp_path, {"a": {"n_more": 1}}, rate="miss_rate_superpositive")
    assert _code(read_plan, p, get_task_type("sentiment")).code == "E251"
    assert read_plan(_plan(tmp_path, {"a": {"n_more": 1}}, rate="miss_rate_negative"), get_task_type("sentiment"))["rate"] == "miss_rate_negative"


def test_sample_with_negative_plan_draws_nothing_and_says_why(tmp_path):
    scores = tmp_path / "s.parquet"
    rows = [{"prompt_id": f"p{i}", "full_text": f"text {i}", "group": "a", "vader_label": "neutral", "vader_compound": 0.0} for i in range(20)]
    pq.write_table(pa.Table.from_pylist(rows), scores)
    plan = _plan(tmp_path, {"a": {"n_more": -5}})
    r = _cli("annotate", "sample", scores, "--round", "r2", "--plan", plan, "--out", tmp_path / "r2.parquet", "--ledger", tmp_path / "l.jsonl")
    assert r.exit_code == 1 and "error[E381]" in r.output and "n_more must be >= 0" in r.output
    assert not (tmp_path / "r2.parquet").exists()


# ---------------------------------------------------------------------------------------------- labels


def test_unicode_choice_labels_are_valid_and_nfc():
    from biaskit.annotate.tasks import get_task_type

    tt = get_task_type("stance:ano,ne,možná")  # used to be E091 (labels had to be ASCII)
    assert tt.labels == ("ano", "ne", "možná")
    decomposed = unicodedata.normalize("NFD", "Možná")
    assert get_task_type(f"stance:ano,{decomposed}").labels == ("ano", "možná")  # NFC, lower case
    assert get_task_type("emda:בעד,נגד,ניטרלי").labels == ("בעד", "נגד", "ניטרלי")  # Hebrew
    assert get_task_type("x:tak,nie,może").labels[2] == "może" and get_task_type("y:áno,nie").labels[0] == "áno"
    for bad in ("a,\u202eb", "a,-b", "a," + "x" * 41, "a,b\x00"):
        assert _code(get_task_type, f"t:{bad}").code == "E091"


def _round(task_type="sentiment", gold="positive"):
    ann, samples = [], []
    labs = ["positive", "neutral", "negative"]
    for i in range(9):
        sid = f"s{i}"
        samples.append(
            {
                "sample_id": sid,
                "round": "r1",
                "task_type": task_type,
                "text": f"t{i}",
                "is_gold": False,
                "gold_label": None,
                "vader_label": labs[i % 3],
            }
        )
        for a in ("a1", "a2", "a3"):
            ann.append({"sample_id": sid, "round": "r1", "annotator": a, "label": labs[i % 3]})
    samples.append(
        {"sample_id": "g", "round": "r1", "task_type": task_type, "text": "g", "is_gold": True, "gold_label": gold, "vader_label": "positive"}
    )
    ann += [{"sample_id": "g", "round": "r1", "annotator": a, "label": "positive"} for a in ("a1", "a2", "a3")]
    return pa.Table.from_pylist(ann), pa.Table.from_pylist(samples)


def test_gold_answer_outside_the_task_is_refused():
    from biaskit.annotate.agreement import agreement
    from biaskit.annotate.labelmodels import aggregate

    ann, samples = _round(gold="SUPERPOSITIVE")
    e = _code(aggregate, ann, method="majority", samples=samples)  # used to become the gold item's label
    assert e.code == "E251" and "'SUPERPOSITIVE'" in e.message and "gold" in e.message
    assert _code(agreement, ann, samples=samples, n_boot=10).code == "E251"
    ann, samples = _round()
    lab = aggregate(ann, method="majority", samples=samples).labels
    assert dict(zip(lab.column("sample_id").to_pylist(), lab.column("label").to_pylist()))["g"] == "positive"


def test_labels_table_outside_the_task_is_refused_by_validate():
    from biaskit.annotate.validation import validate_metric

    ann, samples = _round()
    labels = pa.table({"sample_id": [f"s{i}" for i in range(9)], "label": ["POSITIVE"] * 9, "is_gold": [False] * 9})
    e = _code(validate_metric, ann, samples, metric="vader", labels=labels, n_boot=10)  # used to give accuracy 0.000
    assert e.code == "E251" and "--labels table" in e.message and "'POSITIVE'" in e.message


def test_annotations_without_any_task_are_refused():
    from biaskit.annotate.labelmodels import aggregate

    ann, _ = _round()
    e = _code(aggregate, ann.drop(["round"]), method="majority")  # no task_type column, no task: used to pass unchecked
    assert e.code == "E386" and "--task" in e.message
    ok = aggregate(ann, method="majority", task="sentiment")
    assert ok.labels.num_rows == 10


def test_unquoted_nan_labels_in_a_csv_are_labels_and_refused(tmp_path):
    from biaskit.annotate.labelmodels import aggregate
    from biaskit.io import read_table

    ann, samples = _round()
    f = tmp_path / "ann.csv"
    lines = ["sample_id,annotator,label,task_type"] + [
        f"{r['sample_id']},{r['annotator']},{'NaN' if i % 3 == 0 else r['label']},sentiment" for i, r in enumerate(ann.to_pylist())
    ]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    t = read_table(f)
    assert t.column("label").null_count == 0 and t.column("label").to_pylist().count("NaN") == 10  # not 10 nulls
    e = _code(aggregate, t, method="majority")
    assert e.code == "E251" and "10 of 30" in e.message and "'NaN'" in e.message


def test_metric_label_vocabulary_comes_from_the_declarations():
    from biaskit.evaluate.metrics.catalog import vocabulary
    from biaskit.evaluate.stats.aggregate import metric_labels

    assert vocabulary("vader_label") == ("positive", "neutral", "negative")
    assert vocabulary("norms_arousal_class") == ("positive", "neutral", "negative")  # the norms metric's pattern
    assert vocabulary("honest_hurtful") == ("true", "false") and vocabulary("group") is None
    assert metric_labels("regard_label") == ("positive", "neutral", "negative", "other")
    import biaskit.evaluate.stats.aggregate as agg

    assert not hasattr(agg, "METRIC_LABELS")
    from biaskit.evaluate.metrics.classifier import regard_labels

    assert regard_labels() == ("positive", "negative", "neutral", "other")  # the probability columns' order


def test_float_by_column_nan_is_the_missing_group():
    from biaskit.annotate.validation import validate_metric

    ann, samples = _round()
    samples = samples.append_column("score_bin", pa.array([0.5, float("nan")] * 5, pa.float64()))
    v = validate_metric(ann, samples, metric="vader", by="score_bin", n_boot=10)
    groups = {g for g in v.table.column("group").to_pylist() if g is not None}
    assert "nan" not in groups and "(missing)" in groups and "0.5" in groups


# ---------------------------------------------------------------------------------------------- score


def test_score_without_prompt_id_adds_row_ids_and_writes_a_table_passing_the_schema_check(tmp_path):
    src = tmp_path / "t.parquet"
    pq.write_table(pa.table({"continuation": ["a good day", "a bad day"]}), src)
    out = tmp_path / "s.parquet"
    r = _cli("score", src, "--metrics", "vader", "--out", out)
    assert r.exit_code == 0, r.output
    assert pq.read_table(out).column("prompt_id").to_pylist() == ["row-1", "row-2"]
    check = _cli("schema", "scores", "--check", out)  # (a table without prompt_id used to be written, failing this)
    assert check.exit_code == 0, check.output


# ---------------------------------------------------------------------------------------------- lm-eval


def test_export_lmeval_with_a_300_character_domain(tmp_path):
    from biaskit.interop.lmeval import export_lmeval

    rows = [{"prompt_id": f"p{i}", "text": f"t{i} ", "source": "bold", "language": "en", "domain": d} for i, d in enumerate(["d" * 300, "e" * 300])]
    res = export_lmeval(pa.Table.from_pylist(rows), tmp_path / "x", name="bold")  # used to be OSError: File name too long
    assert len(res.tasks) == 2
    for task in res.tasks:
        assert len(f"samples_{task}_2026-12-01T16-29-04.968053.jsonl".encode()) <= 255  # lm-eval's own file fits
        assert (tmp_path / "x" / f"{task}.yaml").is_file() and (tmp_path / "x" / "data" / f"{task}.parquet").is_file()


def _samples_file(tmp_path) -> Path:
    d = tmp_path / "out" / "model"
    shutil.copytree(LMEVAL, d)
    return d


def test_import_lmeval_deep_nesting_is_e380(tmp_path):
    from biaskit.interop.lmeval import import_lmeval

    d = _samples_file(tmp_path)
    f = next(d.glob("samples_bold12_race_*.jsonl"))
    f.write_text(f.read_text(encoding="utf-8") + "[" * 100_000 + "\n", encoding="utf-8")  # used to be RecursionError
    e = _code(import_lmeval, d.parent, group="bold12")
    assert e.code == "E380" and str(f) in e.message


def test_import_lmeval_samples_with_a_bom(tmp_path):
    from biaskit.interop.lmeval import import_lmeval

    d = _samples_file(tmp_path)
    for f in d.glob("samples_bold12_*.jsonl"):
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())  # used to be E262
    r = d / next(x.name for x in d.glob("results_*.json"))
    r.write_bytes(b"\xef\xbb\xbf" + r.read_bytes())
    assert import_lmeval(d.parent, group="bold12").table.num_rows == 12


# ---------------------------------------------------------------------------------------------- scrape


def test_siteinfo_namespace_key_that_is_not_a_number(tmp_path):
    import bz2

    from biaskit.scrape.siteinfo import read_dump_siteinfo

    xml = (
        '<mediawiki xml:lang="en"><siteinfo><namespaces><namespace key="abc">Bad</namespace></namespaces></siteinfo>'
        "<page><title>A</title><ns>0</ns><id>1</id><revision><text>x</text></revision></page></mediawiki>"
    )
    f = tmp_path / "d.xml.bz2"
    f.write_bytes(bz2.compress(xml.encode()))
    e = _code(read_dump_siteinfo, f)  # used to be ValueError in siteinfo.py
    assert e.code == "E032" and "'abc'" in e.message and str(f) in e.message
    r = _cli("scrape", "dump", f, "--config", "demo", "--out", tmp_path / "p.parquet")
    assert r.exit_code == 1 and "error[E032]" in r.output and "Traceback" not in r.output


def test_a_metric_writing_an_undeclared_label_is_refused_at_scoring():
    from biaskit.evaluate.metrics import score_table
    from biaskit.evaluate.metrics.base import LabelOutput, Metric

    class Stance(Metric):
        name = "stance_t"
        label_outputs = (LabelOutput("stance_t", "stance_t_label", ("agree", "disagree")),)

        def fields(self):
            return {"label": pa.string()}

        def _score_texts(self, texts, batch, rows):
            return {"label": ["agree" if "yes" in t else "maybe" for t in texts]}, [None] * len(texts)

    t = pa.table({"prompt_id": ["a", "b"], "continuation": ["yes", "no"]})
    e = _code(score_table, t, [Stance()])
    assert e.code == "E151" and "'stance_t_label'" in e.message and "'maybe'" in e.message and "valid: 'agree', 'disagree'" in e.message
    ok = score_table(pa.table({"prompt_id": ["a"], "continuation": ["yes"]}), [Stance()])
    assert ok.column("stance_t_label").to_pylist() == ["agree"]


def test_deep_config_and_template_files_are_e380(tmp_path):
    from biaskit.scrape.config import load_config
    from biaskit.templates.files import load_file

    for name in ("cfg.yaml", "cfg.json"):
        f = tmp_path / name
        f.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
        assert _code(load_config, str(f)).code == "E380"
        assert _code(load_file, f).code == "E380"
