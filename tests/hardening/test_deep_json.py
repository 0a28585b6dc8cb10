"""Every JSON biaskit reads back (a folder's marker, a table's manifest, a report's file list, a run manifest) goes
through one reader with a depth and a size limit: a marker nested 100,000 levels deep is E380 and an oversized one
E387, each one coded line, never a RecursionError."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError

DEEP = "[" * 100_000 + "]" * 100_000


def _prompts(d: Path) -> Path:
    rows = [
        {"prompt_id": f"p{i}", "text": f"Person {i} is a ", "source": "bold", "language": "en", "domain": "gender", "group": "g", "page_title": "P"}
        for i in range(3)
    ]
    p = d / "prompts.parquet"
    pq.write_table(pa.Table.from_pylist(rows), p)
    return p


@pytest.mark.parametrize(
    ("argv", "marker"),
    [
        (lambda p, out: ["export", "lm-eval", p, "--out", out, "--overwrite"], "biaskit_export.json"),
        (lambda p, out: ["bold", "export", p, "--out", out, "--layout", "hub", "--overwrite"], "biaskit_bold_export.manifest"),
        (lambda p, out: ["report", p, "--out", out, "--n-boot", "5"], "report_files.json"),
    ],
    ids=["export lm-eval", "bold export", "report"],
)
def test_a_marker_nested_100000_deep_is_one_coded_line(tmp_path, argv, marker):
    src, out = _prompts(tmp_path), tmp_path / "out"
    out.mkdir()
    (out / marker).write_text(DEEP)
    r = CliRunner().invoke(app, [str(a) for a in argv(src, out)])
    assert r.exit_code == 1 and r.output.strip().startswith("error[E380]") and len(r.output.strip().splitlines()) == 1, r.output
    assert (out / marker).read_text() == DEEP


def test_a_table_manifest_nested_100000_deep_is_e380(tmp_path):
    from biaskit.io import read_manifest

    (tmp_path / "t.parquet").write_bytes(b"")
    (tmp_path / "t.parquet.manifest.json").write_text(DEEP)
    with pytest.raises(BiaskitError) as e:
        read_manifest(tmp_path / "t.parquet")
    assert e.value.code == "E380"


def test_a_run_manifest_nested_100000_deep_is_e380(tmp_path):
    from biaskit.evaluate.report import build_report

    run = tmp_path / "run"
    run.mkdir()
    _prompts(run)
    (run / "manifest.json").write_text(DEEP)
    with pytest.raises(BiaskitError) as e:
        build_report(run, tmp_path / "rep", n_boot=5)
    assert e.value.code == "E380"


def test_a_marker_larger_than_the_limit_is_e387_before_it_is_read(tmp_path, monkeypatch):
    import biaskit.jsonread
    from biaskit.ownership import claim_folder

    monkeypatch.setattr(biaskit.jsonread, "MAX_JSON_BYTES", 1000)
    out = tmp_path / "out"
    out.mkdir()
    (out / "m.json").write_text('{"written_by": "biaskit", "kind": "k", "files": {}, "pad": "' + "x" * 2000 + '"}')
    with pytest.raises(BiaskitError) as e:
        claim_folder(out, "m.json", "k")
    assert e.value.code == "E387" and "2,0" in e.value.what  # 2,000 pad bytes + 58 of JSON around them
