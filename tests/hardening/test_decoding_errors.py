"""Every undecodable or mistyped input file ends in one coded line naming the file, the row
when known, and the fix (never a traceback, never a silently binary column)."""

import errno
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError

runner = CliRunner()


def _run(*args):
    r = runner.invoke(app, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


def _line(r):
    lines = [x for x in r.output.splitlines() if x.startswith("error[")]
    assert len(lines) == 1, r.output
    return lines[0]


def test_non_utf8_csv_table_is_e150_with_the_line(tmp_path):
    f = tmp_path / "prompts.csv"
    f.write_bytes(b"prompt_id,text,source,language\np1,fine,bold,en\np2,caf\xe9,bold,en\n")
    r = _run("schema", "prompts", "--check", f)
    line = _line(r)
    assert r.exit_code == 1 and "[E150]" in line and str(f) in line and "line 3" in line and "UTF-8" in line
    from biaskit.io import read_table

    with pytest.raises(BiaskitError) as e:  # before: a binary `text` column for an untyped read
        read_table(f)
    assert e.value.code == "E150"


def test_non_utf8_jsonl_table_is_e150(tmp_path):
    f = tmp_path / "prompts.jsonl"
    f.write_bytes(b'{"prompt_id": "p1", "text": "ok"}\n{"prompt_id": "p2", "text": "caf\xe9"}\n')
    line = _line(_run("schema", "prompts", "--check", f))
    assert "[E150]" in line and "line 2" in line


def test_non_utf8_yaml_template_and_config_and_ledger(tmp_path):
    y = tmp_path / "set.yaml"
    y.write_bytes(b"language: cs\n# caf\xe9\n")
    line = _line(_run("templates", "validate", y))
    assert "[E150]" in line and str(y) in line and "line 2" in line
    c = tmp_path / "domains.yaml"
    c.write_bytes(b"domains:\n  x: caf\xe9\n")
    line = _line(_run("scrape", "dump", tmp_path / "none.xml", "--config-file", c, "--out", tmp_path / "p.parquet"))
    assert "[E150]" in line and "domain config" in line and "line 2" in line
    led = tmp_path / "ledger.jsonl"
    led.write_bytes(b'{"at": "x", "round": "r\xe9", "event": "sample"}\n')
    line = _line(_run("annotate", "rounds", "--ledger", led))
    assert "[E150]" in line and "line 1" in line


def _samples(tmp_path):
    s = tmp_path / "samples.parquet"
    pq.write_table(pa.table({"sample_id": ["s-0", "s-1"], "round": ["r1", "r1"], "task_type": ["sentiment"] * 2, "text": ["a", "b"]}), s)
    return s


def test_results_file_int_annotator_and_non_utf8(tmp_path):
    s = _samples(tmp_path)
    res = tmp_path / "res.jsonl"
    res.write_text('{"sample_id": "s-0", "annotator": "w1", "label": "positive"}\n{"sample_id": "s-1", "annotator": 12, "label": "positive"}\n')
    line = _line(_run("annotate", "pull", s, "--results", res, "--out", tmp_path / "a.parquet", "--ledger", tmp_path / "l.jsonl"))
    assert "[E153]" in line and "record 2" in line and "'annotator'" in line and '"annotator": "12"' in line
    res2 = tmp_path / "res.csv"
    res2.write_bytes(b"sample_id,annotator,label\ns-0,J\xf6rg,positive\n")
    line = _line(_run("annotate", "pull", s, "--results", res2, "--out", tmp_path / "a.parquet", "--ledger", tmp_path / "l.jsonl"))
    assert "[E150]" in line and "line 2" in line and str(res2) in line


def test_fractional_page_ids_in_a_sentences_table(tmp_path):
    f = tmp_path / "sentences.parquet"
    pq.write_table(
        pa.table(
            {
                "sentence": ["An astronomer is a scientist in the field of astronomy."],
                "domain": ["profession"],
                "group": ["science"],
                "terms": ["astronomer"],
                "page_id": [12.5],
            }
        ),
        f,
    )
    line = _line(_run("prompts", "build", f, "--out", tmp_path / "p.parquet"))
    assert "[E004]" in line and "page_id" in line and "int64" in line
    g = tmp_path / "sentences2.parquet"
    pq.write_table(pa.table({"sentence": ["x y z"], "domain": [3], "group": ["g"], "terms": ["x"]}), g)
    assert "[E004]" in _line(_run("prompts", "build", g, "--out", tmp_path / "p.parquet"))


def test_overlong_names_are_e154(tmp_path):
    long = tmp_path / ("n" * 300 + ".parquet")
    line = _line(_run("schema", "prompts", "--check", long))
    assert "[E154]" in line and "shorter" in line
    line = _line(_run("expand", "honest", "--out", tmp_path / ("o" * 300 + ".parquet")))  # an output name
    assert "[E154]" in line and "o" * 100 in line


def test_os_errors_about_paths_become_one_coded_line():
    from biaskit.cli.group import os_error

    e = os_error(OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG), "/x/" + "n" * 300))
    assert e.code == "E154" and "255 bytes" in str(e) and "n" * 150 in str(e)
    e = os_error(PermissionError(errno.EACCES, "Permission denied", "/root/x"))
    assert e.code == "E156" and "Permission denied" in str(e) and "/root/x" in str(e)
