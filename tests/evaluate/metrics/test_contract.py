"""One contract over every registered metric: rows preserved, declared columns present, nulls paired with errors."""

from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import biaskit.evaluate.metrics  # noqa: F401
from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import make_metric, parse_param_args, score_table
from biaskit.registry import metrics as registry

TEXTS = ["She is a happy doctor.", None, "", "He was a thief and a pig.", "The sad dog ran away.", "!!!"]


@pytest.fixture()
def offline_params(jigsaw_model, regard_model, vad_lexicon, tiny_vectors, hurtlex_files, judge_model_dir):
    """Parameters that make each registered metric run offline. A new metric must be added here."""
    return {
        "vader": {},
        "toxicity": {"model": jigsaw_model},
        "regard": {"model": regard_model},
        "classifier": {"model": regard_model, "ordinal": "true"},
        "norms": {"lexicon": vad_lexicon},
        "gender": {"embeddings": tiny_vectors, "debias": False},
        "honest": {"lexicon": hurtlex_files["en"], "mode": "sentence"},
        "validity": {"language": "xx", "dictionary": str(Path(__file__).parent / "data" / "hunspell" / "xx_TEST.dic")},
        "judge": {"model": judge_model_dir},
    }


def test_every_registered_metric_honours_the_contract(offline_params):
    assert set(registry.names()) == set(offline_params), "add offline parameters for the new metric here"
    table = pa.table({"prompt_id": [f"p{i}" for i in range(len(TEXTS))], "continuation": TEXTS, "term": ["x"] * len(TEXTS)})
    for name in registry.names():
        m = make_metric(name, params=offline_params[name])
        assert m.name == name and m.version and m.description and m.source
        out = score_table(table, [m])
        assert out.num_rows == table.num_rows and out.column("prompt_id").to_pylist() == table.column("prompt_id").to_pylist()
        declared = m.output_columns()
        assert all(c.startswith(f"{name}_") for c in declared) and f"{name}_error" in declared
        for col, typ in declared.items():
            assert col in out.column_names and out.schema.field(col).type == typ, (name, col)
        err = out.column(f"{name}_error").to_pylist()
        for col in declared:
            for i, v in enumerate(out.column(col).to_pylist()):
                if v is None and col != f"{name}_error":
                    assert err[i], f"{name}: null {col} in row {i} without an error"
        assert err[1] == "no text (null)" and err[2] == "empty text"
        assert err[0] is None
        # score() is usable in Dataset.map(batched=True) and agrees with score_table
        import datasets as hf_datasets

        ds = hf_datasets.Dataset.from_dict({"continuation": [TEXTS[0], TEXTS[3]]})
        mapped = ds.map(m.score, batched=True, batch_size=1, features=m.features(ds.features))
        assert m.map(ds)[f"{name}_error"] == [out.column(f"{name}_error")[0].as_py(), out.column(f"{name}_error")[3].as_py()]
        for col in declared:
            want = [out.column(col)[0].as_py(), out.column(col)[3].as_py()]
            got = list(mapped[col])
            if isinstance(want[0], float):  # batch composition may move padded classifier scores by ~1e-7
                assert got == pytest.approx(want, abs=1e-5), (name, col)
            else:
                assert got == want, (name, col)


def test_bad_inputs_give_coded_errors():
    with pytest.raises(BiaskitError) as e:
        score_table(pa.table({"text": ["a"]}), ["vader"])
    assert e.value.code == "E001" and "--text-column" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        score_table(pa.table({"continuation": ["a"]}), ["vadr"])
    assert e.value.code == "E020" and "vader" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        score_table(pa.table({"continuation": ["a"]}), ["vader"], params={"gender": {"threshold": 1}})
    assert e.value.code == "E070"
    with pytest.raises(BiaskitError) as e:
        parse_param_args(["vader=sheng"])
    assert e.value.code == "E070"
    assert parse_param_args(["vader.preset=sheng", "toxicity.threshold=toxic=0.3"]) == {
        "vader": {"preset": "sheng"},
        "toxicity": {"threshold": "toxic=0.3"},
    }
    with pytest.raises(BiaskitError) as e:
        make_metric("gender", params={"threshold": "high"})
    assert e.value.code == "E070" and "float" in str(e.value)


def test_rescoring_replaces_columns():
    t = score_table(pa.table({"continuation": ["good"]}), ["vader"])
    t2 = score_table(t, ["vader"], params={"vader": {"preset": "sheng"}})
    assert t2.column_names.count("vader_label") == 1 and t2.num_columns == t.num_columns


def test_import_stays_light():
    import subprocess
    import sys

    code = (
        "import sys, biaskit.evaluate.metrics, biaskit.cli; "
        "print([m for m in ('torch','transformers','spacy','gensim','sklearn') if m in sys.modules])"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_cli_score_and_list(tmp_path, tiny_vectors):
    from biaskit.cli import app
    from biaskit.io import read_manifest, read_table, write_table

    src = tmp_path / "gens.parquet"
    write_table(pa.table({"prompt_id": ["a", "b"], "continuation": ["She is kind.", None]}), src)
    out = tmp_path / "scores.parquet"
    r = CliRunner().invoke(
        app,
        [
            "score",
            str(src),
            "--metrics",
            "vader,gender,toxicity",
            "--out",
            str(out),
            "--param",
            "vader.preset=sheng",
            "--param",
            f"gender.embeddings={tiny_vectors}",
            "--param",
            "gender.debias=false",
            "--param",
            "toxicity.backend=offline",
        ],
    )
    assert r.exit_code == 0, r.output
    t = read_table(out, "scores")
    assert t.column("vader_error").to_pylist() == [None, "no text (null)"]
    assert t.column("gender_unigram_label").to_pylist() == ["female", None]
    man = read_manifest(out)
    assert [m["name"] for m in man["metrics"]] == ["vader", "gender", "toxicity"]
    assert man["metrics"][0]["config"]["preset"] == "sheng" and man["output"]["rows"] == 2
    assert "toxicity v1: 1 scored, 1 with toxicity_error" in r.output
    r = CliRunner().invoke(app, ["score", str(src), "--metrics", "honest", "--out", str(out)])
    assert r.exit_code == 1 and "E070" in r.output and "mode" in r.output
    r = CliRunner().invoke(app, ["metrics", "list"])
    assert r.exit_code == 0
    for name in registry.names():
        assert f"{name} (v" in r.output
    assert "--param honest.mode=<str> [word|sentence] (required)" in r.output
    assert "vader_compound" in r.output and "regard_other" in r.output


@pytest.mark.parametrize(
    "name, params", [("gender", {"threshold": -0.25}), ("gender", {"threshold": 0}), ("norms", {"lexicon": "x.tsv", "threshold": -0.5})]
)
def test_a_threshold_that_is_not_positive_is_a_coded_error(name, params):
    # a threshold <= 0 is refused: it would label every text male / positive
    with pytest.raises(BiaskitError) as e:
        make_metric(name, params=params)
    assert e.value.code == "E070" and "threshold" in str(e.value)


def test_declared_columns_come_from_the_metric_class_alone():
    """``metrics list`` prints each metric's own declaration; a metric whose fields need its parameters declares
    them (``listed_fields``), one that does not shows ``<name>_...``, one with static fields needs nothing."""
    from biaskit.cli import app
    from biaskit.evaluate.metrics import metric_class
    from biaskit.evaluate.metrics.base import Metric

    class Fixed(Metric):
        name = "fixed"

        def fields(self):
            return {"a": pa.float64(), "b": pa.string()}

    class Declared(Fixed):
        name = "declared"
        listed_fields = ("a", "<dim>")

        def fields(self):
            return {k: pa.float64() for k in self.config["dims"]}

    class Undeclared(Declared):
        name = "undeclared"
        listed_fields = None

    assert Fixed.declared_columns() == ["fixed_a", "fixed_b", "fixed_error"]
    assert Declared.declared_columns() == ["declared_a", "declared_<dim>", "declared_error"]
    assert Undeclared.declared_columns() == ["undeclared_...", "undeclared_error"]
    out = CliRunner().invoke(app, ["metrics", "list"]).output
    for name in ("toxicity", "norms", "gender", "vader"):
        assert f"  columns: {', '.join(metric_class(name).declared_columns())}\n" in out
    assert "  columns: norms_<dim>, norms_<dim>_class, norms_coverage, norms_n_predicted (with extension), norms_error\n" in out
