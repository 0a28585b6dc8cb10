"""The cases that test_input_layer.py checks through library calls, run here as the commands a
user types (typer's CliRunner): each must end in the coded error (or the right result) through the CLI too, with
no traceback and nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app

ROOT = Path(__file__).resolve().parents[2]
LMEVAL = ROOT / "tests" / "fixtures" / "lmeval" / "smollm2"
LABS = ("positive", "neutral", "negative")


def _cli(*args):
    return CliRunner().invoke(app, ["--quiet", *[str(a) for a in args]])


def _failed(r, code: str) -> None:
    assert r.exit_code == 1 and f"error[{code}]" in r.output, r.output
    assert "Traceback" not in r.output and (r.exception is None or isinstance(r.exception, SystemExit)), r.output


def _round(tmp_path: Path, *, gold: str = "positive", task_type: str | None = "sentiment", labels=LABS) -> tuple[Path, Path]:
    """A round of 9 items (3 annotators each, all agreeing on ``labels[i % 3]``) and one gold item."""
    samples, ann = [], []
    for i in range(9):
        samples.append(
            {
                "sample_id": f"s{i}",
                "round": "r1",
                "task_type": task_type,
                "text": f"text {i}",
                "group": ["a", "b"][i % 2],
                "is_gold": False,
                "gold_label": None,
                "vader_label": LABS[i % 3],
                "vader_compound": [0.6, 0.0, -0.6][i % 3],
                "score_bin": [0.5, float("nan"), 1.5][i % 3],
            }
        )
        ann += [{"sample_id": f"s{i}", "round": "r1", "annotator": a, "label": labels[i % 3]} for a in ("a1", "a2", "a3")]
    samples.append({**samples[0], "sample_id": "g", "text": "gold", "is_gold": True, "gold_label": gold})
    ann += [{"sample_id": "g", "round": "r1", "annotator": a, "label": labels[0]} for a in ("a1", "a2", "a3")]
    if task_type is None:
        samples = [{k: v for k, v in s.items() if k != "task_type"} for s in samples]
    sp, ap = tmp_path / "samples.parquet", tmp_path / "ann.parquet"
    pq.write_table(pa.Table.from_pylist(samples), sp)
    pq.write_table(pa.Table.from_pylist(ann), ap)
    return ap, sp


def _validate(tmp_path, ann, samples, *extra):
    args = ("annotate", "validate", ann, "--samples", samples, "--metric", "vader", "--bootstrap", "5", "--cv-folds", "0")
    return _cli(*args, "--ledger", tmp_path / "l.jsonl", "--out", tmp_path / "val.parquet", *extra)


# ---------------------------------------------------------------------------------------------- silent wrong results


def test_validate_labels_table_outside_the_task_is_refused(tmp_path):
    """`annotate validate --labels` with labels outside the task used to report accuracy 0.000."""
    ann, samples = _round(tmp_path)
    lab = tmp_path / "labels.parquet"
    pq.write_table(pa.table({"sample_id": [f"s{i}" for i in range(9)], "label": ["POSITIVE"] * 9, "is_gold": [False] * 9}), lab)
    r = _validate(tmp_path, ann, samples, "--labels", lab)
    _failed(r, "E251")
    assert "'POSITIVE'" in r.output and "--labels" in r.output
    assert not (tmp_path / "val.parquet").exists()


def test_gold_answer_outside_the_task_is_refused_by_aggregate(tmp_path):
    """A gold answer `SUPERPOSITIVE` used to become the item's label."""
    ann, samples = _round(tmp_path, gold="SUPERPOSITIVE")
    out = tmp_path / "labels.parquet"
    r = _cli("annotate", "aggregate", ann, "--samples", samples, "--method", "majority", "--out", out)
    _failed(r, "E251")
    assert "'SUPERPOSITIVE'" in r.output and not out.exists()


def test_annotations_naming_no_task_are_refused_by_aggregate(tmp_path, monkeypatch):
    """No `task_type` column and no `--task`: the labels used to go unchecked."""
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))  # no ledger that could name the round's task
    monkeypatch.chdir(tmp_path)
    ann, _ = _round(tmp_path)
    out = tmp_path / "labels.parquet"
    r = _cli("annotate", "aggregate", ann, "--method", "majority", "--out", out)
    _failed(r, "E386")
    assert "--task" in r.output and not out.exists()


def test_unquoted_nan_labels_in_a_csv_are_refused_by_aggregate(tmp_path):
    """36 unquoted `NaN` cells in a CSV label column used to become nulls, dropped without a word."""
    f = tmp_path / "ann.csv"
    rows = ["sample_id,round,annotator,label,task_type"]
    for i in range(18):  # 18 items x 3 annotators; every item's first two labels NaN: 36 NaN cells
        rows += [f"s{i},r1,a1,NaN,sentiment", f"s{i},r1,a2,NaN,sentiment", f"s{i},r1,a3,positive,sentiment"]
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "labels.parquet"
    r = _cli("annotate", "aggregate", f, "--method", "majority", "--out", out)
    _failed(r, "E251")
    assert "36 of 54" in r.output and "'NaN'" in r.output and not out.exists()


def test_validate_float_by_column_has_no_nan_group(tmp_path):
    ann, samples = _round(tmp_path)
    r = _validate(tmp_path, ann, samples, "--by", "score_bin")
    assert r.exit_code == 0, r.output
    groups = {g for g in pq.read_table(tmp_path / "val.parquet").column("group").to_pylist() if g is not None}
    assert groups == {"0.5", "1.5", "(missing)"}, groups  # s1, s4, s7 have NaN: the group (missing), never "nan"


def test_sample_per_label_by_a_float_column_has_no_nan_group(tmp_path):
    rows = [
        {
            "prompt_id": f"p{i}",
            "full_text": f"text {i}",
            "vader_label": LABS[i % 3],
            "vader_compound": [0.6, 0.0, -0.6][i % 3],
            "b": [0.5, float("nan")][i % 2],
        }
        for i in range(24)
    ]
    src = tmp_path / "scores.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    out = tmp_path / "smp.parquet"
    args = ("annotate", "sample", src, "--round", "r1", "--per-label", "positive=2,negative=2", "--by", "b", "--no-mask")
    r = _cli(*args, "--ledger", tmp_path / "l.jsonl", "--out", out)
    assert r.exit_code == 0, r.output
    strata = sorted(set(pq.read_table(out).column("stratum").to_pylist()))
    # 2 values of b (0.5 and NaN) x 2 labels, 2 items each: 8 items; NaN is a null value, not a value "nan"
    assert strata == ["b=0.5|vader=negative", "b=0.5|vader=positive", "b=None|vader=negative", "b=None|vader=positive"], strata
    assert pq.read_table(out).num_rows == 8


# ---------------------------------------------------------------------------------------------- tracebacks


def _plan(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "plan.json"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    "entry",
    ['{"n_more": "ten"}', '{"n_more": NaN}', '{"n_more": [3]}', "7", '{"n_more": -5}'],
)
def test_sample_with_a_malformed_plan_is_e381(tmp_path, entry):
    """`n_more` of "ten", NaN, [3] or a group entry that is not an object: tracebacks in planning.py; -5 drew 173."""
    rows = [{"prompt_id": f"p{i}", "full_text": f"text {i}", "group": "a", "vader_label": "neutral", "vader_compound": 0.0} for i in range(20)]
    src = tmp_path / "s.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    plan = _plan(tmp_path, '{"version": 1, "metric": "vader", "rate": "accuracy", "group_by": "group", "groups": {"a": ' + entry + "}}")
    out = tmp_path / "r2.parquet"
    r = _cli("annotate", "sample", src, "--round", "r2", "--plan", plan, "--out", out, "--ledger", tmp_path / "l.jsonl")
    _failed(r, "E381")
    assert "plan.json" in r.output and not out.exists()
    assert "groups['a']" in r.output or "NaN" in entry  # a NaN is refused while the JSON is parsed, before any key


def test_export_lmeval_with_a_300_character_domain_cli(tmp_path):
    rows = [{"prompt_id": f"p{i}", "text": f"t{i} ", "source": "bold", "language": "en", "domain": "d" * 300} for i in range(3)]
    src = tmp_path / "prompts.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    r = _cli("export", "lm-eval", src, "--out", tmp_path / "x", "--name", "bold")
    assert r.exit_code == 0, r.output  # used to be OSError: File name too long
    yamls = sorted(p.name for p in (tmp_path / "x").glob("*.yaml"))
    assert len(yamls) == 2 and yamls[0] == "bold.yaml" and all(len(n.encode()) <= 255 for n in yamls), yamls  # the group + one task
    task = yamls[1][: -len(".yaml")]
    assert len(task.encode()) <= 200 and (tmp_path / "x" / "data" / f"{task}.parquet").is_file()


def _lm_run(tmp_path: Path) -> Path:
    d = tmp_path / "lm" / "model"
    shutil.copytree(LMEVAL, d)
    return d


def test_import_lmeval_deeply_nested_samples_is_e380_cli(tmp_path):
    d = _lm_run(tmp_path)
    f = next(d.glob("samples_bold12_race_*.jsonl"))
    f.write_text(f.read_text(encoding="utf-8") + "[" * 100_000 + "\n", encoding="utf-8")  # used to be RecursionError
    out = tmp_path / "g.parquet"
    r = _cli("import", "lm-eval", tmp_path / "lm", "--group", "bold12", "--out", out)
    _failed(r, "E380")
    assert f.name in r.output and not out.exists()


# ---------------------------------------------------------------------------------------------- valid input refused


def test_import_lmeval_samples_with_a_bom_cli(tmp_path):
    d = _lm_run(tmp_path)
    for f in d.glob("samples_bold12_*.jsonl"):
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())  # used to be E262
    out = tmp_path / "g.parquet"
    r = _cli("import", "lm-eval", tmp_path / "lm", "--group", "bold12", "--out", out)
    assert r.exit_code == 0, r.output
    assert pq.read_table(out).num_rows == 12


@pytest.mark.parametrize(
    ("task", "labels"),
    [("stance:ano,ne,možná", ("ano", "ne", "možná")), ("emda:בעד,נגד,ניטרלי", ("בעד", "נגד", "ניטרלי"))],
)
def test_aggregate_with_unicode_choice_labels(tmp_path, task, labels):
    """Czech and Hebrew choice labels used to be E091 (labels had to be ASCII)."""
    ann, _ = _round(tmp_path, labels=labels)
    out = tmp_path / "labels.parquet"
    r = _cli("annotate", "aggregate", ann, "--task", task, "--method", "majority", "--out", out)
    assert r.exit_code == 0, r.output
    got = dict(zip(*pq.read_table(out).select(["sample_id", "label"]).to_pydict().values()))
    assert got == {**{f"s{i}": labels[i % 3] for i in range(9)}, "g": labels[0]}, got
    assert json.loads((tmp_path / "labels.parquet.manifest.json").read_text(encoding="utf-8"))  # a manifest was written
