"""Bad values give coded errors or named warnings, never a
plausible result; outputs only replace what biaskit wrote."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError


def _vader_rows(domains):
    rows = []
    for dom in domains:
        for i, lab in enumerate(["positive", "negative", "neutral", "positive", "negative", "negative"]):
            rows.append(
                {
                    "prompt_id": f"{dom}{i}",
                    "text": "t",
                    "domain": dom,
                    "group": "a" if i % 2 else "b",
                    "model": "m",
                    "kind": "generate",
                    "sample_index": 0,
                    "continuation": "c",
                    "vader_label": lab,
                    "vader_compound": 0.1 * i,
                }
            )
    return rows


def test_report_out_over_an_older_report_removes_only_its_stale_files(tmp_path):
    from biaskit.evaluate.report import build_report

    run1, run2, rep = tmp_path / "run1", tmp_path / "run2", tmp_path / "rep"
    run1.mkdir()
    run2.mkdir()
    pd.DataFrame(_vader_rows(["alpha", "beta"])).to_parquet(run1 / "scores.parquet")
    pd.DataFrame(_vader_rows(["alpha"])).to_parquet(run2 / "scores.parquet")
    first = build_report(run1, rep, n_boot=20)
    old = {p.name for p in first.figures}
    assert "sentiment_beta.png" in old and (rep / "figures" / "sentiment_beta.png").is_file()
    (rep / "figures" / "my_own_plot.png").write_bytes(b"user's")
    (rep / "notes.md").write_text("user's notes", encoding="utf-8")
    second = build_report(run2, rep, n_boot=20)
    now = {p.name for p in (rep / "figures").iterdir()}
    # the beta figure and table of the first report are gone; the user's files stay
    assert "sentiment_beta.png" not in now and "my_own_plot.png" in now
    assert not any("beta" in p.name for p in (rep / "tables").iterdir())
    assert now == {p.name for p in second.figures} | {"my_own_plot.png"}
    assert (rep / "notes.md").read_text() == "user's notes"
    listed = json.loads((rep / "report_files.json").read_text())["files"]
    assert "report.html" in listed and "figures/sentiment_alpha.png" in listed and "notes.md" not in listed


HEBREW = "האיש עבד כמורה בבית הספר והיה אדם טוב מאוד"
ARABIC = "كان الرجل يعمل مدرسا في المدرسة وكان شخصا طيبا"
LONG_A = "A" * 100_000


@pytest.mark.parametrize("metric,params", [("vader", {}), ("toxicity", {"backend": "offline"})])
def test_english_metrics_do_not_score_text_they_cannot_read(metric, params):
    from biaskit.evaluate.metrics import make_metric

    m = make_metric(metric, text_column="text", params=params).setup()
    texts = [HEBREW, ARABIC, LONG_A, "The man was a kind and wonderful teacher.", "Ein guter Mann.", "12345 !!!"]
    out = m.score({"text": texts})
    val = out["vader_compound" if metric == "vader" else "toxicity_score"]
    err = out[f"{metric}_error"]
    assert val[:3] == [None, None, None] and out[f"{metric}_label"][:3] == [None, None, None]
    assert err[0].startswith("not covered: ") and "mostly HEBREW script (100% of its letters)" in err[0]
    assert "mostly ARABIC script (100% of its letters)" in err[1]
    assert "no word-like token" in err[2] and "100000" in err[2]
    # English, another Latin-script language and letter-free text are still scored
    assert err[3:] == [None, None, None] and all(isinstance(v, float) for v in val[3:])
    if metric == "vader":
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        assert val[3] == SentimentIntensityAnalyzer().polarity_scores(texts[3])["compound"] > 0.5


def test_toxicity_script_any_scores_every_text():
    from biaskit.evaluate.metrics import make_metric

    out = make_metric("toxicity", text_column="text", params={"backend": "offline", "script": "any"}).setup().score({"text": [HEBREW]})
    assert out["toxicity_error"] == [None] and isinstance(out["toxicity_score"][0], float)


def test_mixed_text_mostly_latin_is_scored():
    from biaskit.evaluate.metrics.coverage import coverage_error

    assert coverage_error("The word שלום means peace in Hebrew and it is often used", "VADER") is None  # 4 of 43 letters Hebrew
    assert coverage_error("שלום עולם hello", "VADER").endswith("mostly HEBREW script (62% of its letters)")  # 8 of 13


def _scores(n=12, nan_at=()):
    rows = []
    for i in range(n):
        comp = float("nan") if i in nan_at else round(-1 + 2 * i / (n - 1), 3)
        rows.append(
            {
                "prompt_id": f"p{i}",
                "text": "Ada was ",
                "continuation": f"a person number {i} in the town.",
                "model": "m",
                "kind": "generate",
                "sample_index": 0,
                "source": "bold",
                "group": f"g{i % 2}",
                "vader_compound": comp,
                "vader_label": "positive" if comp >= 0.05 else "negative",
                "vader_error": None,
            }
        )
    return pa.Table.from_pylist(rows)


def test_annotate_sample_never_draws_nan_scores():
    from biaskit.annotate.sampling import sample_round

    t, rep = sample_round(_scores(12, nan_at=(0, 5, 7)), round="r1", task="sentiment", n=12, metric="vader", seed=0)
    assert rep.dropped_metric_error == 3 and t.num_rows == 9
    assert not {"p0", "p5", "p7"} & set(t.column("prompt_id").to_pylist())


@pytest.mark.parametrize("content", ["", "sample_id,annotator,label\n"])
def test_empty_results_file_is_an_error_with_no_annotations_and_no_ledger_entry(tmp_path, content):
    from biaskit.annotate.sampling import sample_round
    from biaskit.io import write_table

    t, _ = sample_round(_scores(), round="r1", task="sentiment", n=4, seed=0)
    write_table(t, tmp_path / "samples.parquet")
    res = tmp_path / "results.csv"
    res.write_text(content)
    led = tmp_path / "ledger.jsonl"
    r = CliRunner().invoke(
        app,
        ["annotate", "pull", str(tmp_path / "samples.parquet"), "--results", str(res), "--out", str(tmp_path / "ann.parquet"), "--ledger", str(led)],
    )
    assert r.exit_code == 1 and "error[E211]" in r.output and "has no records" in r.output
    assert not (tmp_path / "ann.parquet").exists() and not led.exists()


@pytest.mark.parametrize("lead", ["inf", "-5", "nan", "-inf"])
def test_lead_time_must_be_finite_and_not_negative(tmp_path, lead):
    from biaskit.annotate.files import read_results
    from biaskit.annotate.sampling import sample_round

    t, _ = sample_round(_scores(), round="r1", task="sentiment", n=2, seed=0)
    sid = t.column("sample_id")[0].as_py()
    p = tmp_path / "results.csv"
    p.write_text(f"sample_id,annotator,label,lead_time\n{sid},w1,positive,3.5\n{sid},w2,negative,{lead}\n")
    with pytest.raises(BiaskitError) as e:
        read_results(p, t)
    assert e.value.code == "E091" and "record 2: lead_time must be a finite number of seconds >= 0" in str(e.value)
    p.write_text(f"sample_id,annotator,label,lead_time\n{sid},w1,positive,3.5\n{sid},w2,negative,0\n")
    ann, _, _ = read_results(p, t)
    assert sorted(ann.column("lead_time").to_pylist()) == [0.0, 3.5]


def test_a_nul_byte_in_descriptors_is_refused(tmp_path):
    from biaskit.templates.holistic_data import validate_descriptors

    with pytest.raises(BiaskitError) as e:
        validate_descriptors({"ability": {"reviewed": ["Deaf", "bl\x00ind"]}}, file="mine.json")
    assert e.value.code == "E040" and "mine.json: ability/reviewed[1]: control character '\\x00' in descriptor" in str(e.value)
    assert "'blind'" in e.value.fix
    bad = tmp_path / "desc.json"
    bad.write_text(json.dumps({"ability": {"reviewed": ["Deaf\u2028x"]}}))
    r = CliRunner().invoke(app, ["expand", "holistic", "--descriptors-file", str(bad), "--out", str(tmp_path / "p.parquet")])
    assert r.exit_code == 1 and "error[E040]" in r.output and not (tmp_path / "p.parquet").exists()


def _labels_table(values):
    return pa.Table.from_pylist([{"group": "a" if i % 2 else "b", "vader_label": v} for i, v in enumerate(values)])


def test_stats_aggregate_refuses_labels_outside_the_metric_vocabulary(tmp_path):
    from biaskit.evaluate.stats import aggregate

    t = _labels_table(["positive", "POSITIVE", "x", "negative", None, "neutral"])
    with pytest.raises(BiaskitError) as e:
        aggregate(t, "group", labels="vader_label")
    assert e.value.code == "E151" and "2 of 5 value(s) of 'vader_label' are not labels of the metric" in str(e.value)
    assert "'POSITIVE', 'x'" in str(e.value) and e.value.options == ["positive", "neutral", "negative"]
    from biaskit.io import write_table

    write_table(t, tmp_path / "s.parquet")
    r = CliRunner().invoke(app, ["stats", "aggregate", str(tmp_path / "s.parquet"), "--by", "group", "--labels", "vader_label"])
    assert r.exit_code == 1 and "error[E151]" in r.output
    # valid labels and nulls (failed rows) still aggregate; a column no metric writes is not checked
    ok = aggregate(_labels_table(["positive", None, "negative", "neutral"]), "group", labels="vader_label")
    assert ok["count"].sum() == 3
    own = pa.Table.from_pylist([{"group": "a", "my_label": "x"}, {"group": "b", "my_label": "POSITIVE"}])
    assert sorted(aggregate(own, "group", labels="my_label")["label"].unique()) == ["POSITIVE", "x"]


def test_stats_ztest_checks_the_column_and_the_label(tmp_path):
    from biaskit.evaluate.stats import pairwise_proportion_tests

    with pytest.raises(BiaskitError) as e:
        pairwise_proportion_tests(_labels_table(["positive", "x", "negative", "neutral"]), "group", "vader_label", "positive")
    assert e.value.code == "E151"
    with pytest.raises(BiaskitError) as e:
        pairwise_proportion_tests(_labels_table(["positive", "negative", "negative", "neutral"]), "group", "vader_label", "POSITIVE")
    assert e.value.code == "E080" and "label 'POSITIVE' is not a label of column 'vader_label'" in str(e.value)
    # 'neutral' never occurs in this table but is a VADER label: a real 0-of-n test
    res = pairwise_proportion_tests(_labels_table(["positive", "negative", "negative", "positive"]), "group", "vader_label", "neutral")
    assert res[["count_a", "count_b"]].values.tolist() == [[0, 0]]


@pytest.mark.parametrize("bad", [-3.0, float("inf"), 0.5, float("-inf")])
def test_likelihood_bias_refuses_impossible_perplexities(bad):
    from biaskit.evaluate.stats import likelihood_bias

    rows = [
        {"axis": "age", "template": "I am {x}.", "descriptor": d, "perplexity": p}
        for d, ps in (("young", [10.0, 12.0, 11.0]), ("old", [20.0, 25.0, bad]))
        for p in ps
    ]
    with pytest.raises(BiaskitError) as e:
        likelihood_bias(pa.Table.from_pylist(rows))
    assert e.value.code == "E080" and "1 value(s) of 'perplexity' are infinite or below 1" in str(e.value)
    rows[-1]["perplexity"] = None  # a failed row (null) is fine: left out and counted
    assert likelihood_bias(pa.Table.from_pylist(rows)).by_axis["n_null"].tolist() == [1]


@pytest.mark.parametrize("kind", ["missing", "file", "empty_dir"])
def test_biaskit_spacy_en_pointing_at_no_pipeline_is_e010_naming_the_variable(tmp_path, monkeypatch, kind):
    from biaskit.assets import load_spacy

    target = tmp_path / "nothere"
    if kind == "file":
        target = tmp_path / "model.txt"
        target.write_text("not a model")
    elif kind == "empty_dir":
        target.mkdir()
    monkeypatch.setenv("BIASKIT_SPACY_EN", str(target))
    with pytest.raises(BiaskitError) as e:
        load_spacy("en")
    assert e.value.code == "E010" and str(e.value).startswith(f"[E010] $BIASKIT_SPACY_EN = {str(target)!r} ")
    assert ("does not exist" if kind == "missing" else "is not a spaCy pipeline folder") in str(e.value)


def test_cli_ztest_on_a_metric_column_checks_its_vocabulary(tmp_path):
    from biaskit.io import write_table

    write_table(_labels_table(["positive", "negative", "POSITIVE", "negative"]), tmp_path / "s.parquet")
    r = CliRunner().invoke(app, ["stats", "ztest", str(tmp_path / "s.parquet"), "--label", "positive"])
    assert r.exit_code == 1 and "error[E151]" in r.output and "'POSITIVE'" in r.output
    write_table(_labels_table(["positive", "negative", "positive", "negative"]), tmp_path / "ok.parquet")
    r = CliRunner().invoke(app, ["stats", "ztest", str(tmp_path / "ok.parquet"), "--label", "neutral"])  # a VADER label with 0 counts
    assert r.exit_code == 0, r.output


def _truncated_xlsx(path):
    import zipfile

    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Czech"
    for i in range(50):
        ws.append([f"Muž číslo {i} je <MASK>."])
    good = path.with_name("good.xlsx")
    wb.save(good)
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(path, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data[: len(data) // 2]  # the sheet XML stops mid-element
            zout.writestr(item, data)


def test_hub_load_of_an_xlsx_with_a_truncated_sheet_is_e121(tmp_path):
    bad = tmp_path / "template_sentences.xlsx"
    _truncated_xlsx(bad)
    r = CliRunner().invoke(app, ["hub", "load", str(bad), "--out", str(tmp_path / "p.parquet")])
    assert r.exit_code == 1 and "error[E121]" in r.output and "a sheet is damaged" in r.output, r.output
    assert "Traceback" not in r.output and not (tmp_path / "p.parquet").exists()


@pytest.mark.parametrize("cmd", [["hub", "load"], ["bold", "import"]])
def test_deeply_nested_jsonl_line_is_a_coded_error(tmp_path, cmd):
    f = tmp_path / "bold.jsonl"
    f.write_text("[" * 100_000 + "\n")
    r = CliRunner().invoke(app, [*cmd, str(f), "--out", str(tmp_path / "p.parquet")])
    assert r.exit_code == 1 and "error[E034]" in r.output and "nested too deeply" in r.output, r.output
    assert not (tmp_path / "p.parquet").exists()


@pytest.mark.parametrize("cmd", [["hub", "load"], ["bold", "import"]])
@pytest.mark.parametrize("content", ["", "\n\n"])
def test_empty_jsonl_is_a_coded_error_and_nothing_is_written(tmp_path, cmd, content):
    f = tmp_path / "bold.jsonl"
    f.write_text(content)
    r = CliRunner().invoke(app, [*cmd, str(f), "--out", str(tmp_path / "p.parquet")])
    assert r.exit_code == 1 and "error[E211]" in r.output and "holds no records" in r.output, r.output
    assert not (tmp_path / "p.parquet").exists()


class _Holder:
    """Another process holding the output lock on ``path`` until closed."""

    def __init__(self, path):
        import subprocess
        import sys

        from hardening_util import cli_env

        self.p = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, time\nfrom biaskit.io import acquire_output_lock\n"
                f"acquire_output_lock({str(path)!r}, command='holder')\nprint('held', flush=True)\ntime.sleep(120)",
            ],
            env=cli_env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.p.stdout.readline().strip() == "held"

    def close(self):
        self.p.kill()
        self.p.wait()


def test_report_without_out_locks_its_default_folder(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(_vader_rows(["alpha"])).to_parquet(run / "scores.parquet")
    h = _Holder(run / "report")
    try:
        r = CliRunner().invoke(app, ["report", str(run), "--n-boot", "10"])
    finally:
        h.close()
    assert r.exit_code == 1 and "error[E140]" in r.output and "holder" in r.output, r.output
    assert not (run / "report" / "report.html").exists()


def test_annotate_ledger_writes_take_the_ledger_lock(tmp_path, monkeypatch):
    from biaskit.annotate import ledger

    led = tmp_path / "rounds.jsonl"
    monkeypatch.setattr(ledger, "LOCK_WAIT", 0.3)
    h = _Holder(led)
    try:
        with pytest.raises(BiaskitError) as e:
            ledger.record("sample", "r1", led, samples=3)
    finally:
        h.close()
    assert e.value.code == "E140" and "holder" in str(e.value) and not led.exists()
    ledger.record("sample", "r1", led, samples=3)  # the holder is gone: the write goes through, and no lock file is left
    assert [x["samples"] for x in ledger.events(led)] == [3] and not (tmp_path / "rounds.jsonl.lock").exists()


def test_score_names_the_input_file_and_the_expected_type(tmp_path):
    from biaskit.io import write_table

    src = tmp_path / "gens.parquet"
    write_table(
        pa.table(
            {"prompt_id": ["a", "b"], "text": ["x ", "y "], "continuation": ["good day", "bad day"], "n_tokens": pa.array([2.0, 2.0], pa.float64())}
        ),
        src,
    )
    out = tmp_path / "out.parquet"
    r = CliRunner().invoke(app, ["score", str(src), "--metrics", "vader", "--out", str(out)])
    line = r.output.strip().splitlines()[-1]
    assert r.exit_code == 1 and line.startswith("error[E004]"), r.output
    assert f"column 'n_tokens' in {src} (the table to score) has type double; the scores table needs int64" in line
    assert "got 'double'" not in line and str(out) not in line and not out.exists()
