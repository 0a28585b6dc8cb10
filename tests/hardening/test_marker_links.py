"""A marker never reaches outside its folder: every path it lists is resolved (symbolic links followed), and one
that leads outside ``--out`` is error E143 before anything is written or deleted. A report folder whose
``figures/`` is a link elsewhere gets no figure written through it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.ownership import claim_folder, claim_stagewise

THESIS = b"\\chapter{Outside} the user's thesis, not biaskit's"


def _prompts(d: Path) -> Path:
    rows = [
        {
            "prompt_id": f"p{i}",
            "text": f"Person {i} is a ",
            "source": "bold",
            "language": "en",
            "domain": "gender",
            "group": "g",
            "page_title": f"Person {i}",
        }
        for i in range(3)
    ]
    p = d / "prompts.parquet"
    pq.write_table(pa.Table.from_pylist(rows), p)
    return p


def _outside(tmp_path: Path) -> Path:
    """A folder outside every --out, holding the user's thesis."""
    far = tmp_path / "elsewhere"
    far.mkdir()
    (far / "thesis.tex").write_bytes(THESIS)
    return far


def _list_through_link(out: Path, marker: str, far: Path) -> None:
    """Plant ``link -> far`` in ``out`` and list ``link/thesis.tex`` (with its true sha256) in the marker."""
    (out / "link").symlink_to(far, target_is_directory=True)
    m = json.loads((out / marker).read_text())
    m["files"]["link/thesis.tex"] = hashlib.sha256(THESIS).hexdigest()
    (out / marker).write_text(json.dumps(m))


def _run(args: list):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.parametrize(
    ("argv", "marker"),
    [
        (lambda p, out: ["export", "lm-eval", p, "--out", out], "biaskit_export.json"),
        (lambda p, out: ["bold", "export", p, "--out", out, "--layout", "hub"], "biaskit_bold_export.manifest"),
    ],
    ids=["export lm-eval", "bold export"],
)
def test_a_rerun_refuses_a_marker_that_lists_a_file_behind_a_link_and_deletes_nothing_outside(tmp_path, argv, marker):
    src, out, far = _prompts(tmp_path), tmp_path / "out", _outside(tmp_path)
    first = _run(argv(src, out))
    assert first.exit_code == 0, first.output
    _list_through_link(out, marker, far)
    again = _run(argv(src, out))
    assert again.exit_code == 1 and again.output.strip().startswith("error[E143]"), again.output
    assert "link/thesis.tex" in again.output
    assert (far / "thesis.tex").read_bytes() == THESIS


def test_train_classifier_refuses_a_marker_listing_a_file_behind_a_link_before_training(tmp_path):
    far, out = _outside(tmp_path), tmp_path / "clf"
    out.mkdir()
    (out / "link").symlink_to(far, target_is_directory=True)
    sha = hashlib.sha256(THESIS).hexdigest()
    marker = {"written_by": "biaskit", "kind": "train classifier", "files": {"link/thesis.tex": sha}}
    (out / "biaskit_classifier.json").write_text(json.dumps(marker))
    rows = [{"continuation": f"text {i} kind", "vader_label": ["positive", "negative"][i % 2]} for i in range(12)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "s.parquet")
    r = _run(
        ["train", "classifier", tmp_path / "s.parquet", "--text-column", "continuation", "--label-column", "vader_label"]
        + ["--runs", "1", "--baselines-only", "--out", out]
    )
    assert r.exit_code == 1 and r.output.strip().startswith("error[E143]"), r.output
    assert (far / "thesis.tex").read_bytes() == THESIS


def test_claim_folder_refuses_a_listed_path_whose_parent_link_leaves_the_folder(tmp_path):
    far, out = _outside(tmp_path), tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(far, target_is_directory=True)
    (out / "m.json").write_text(json.dumps({"written_by": "biaskit", "kind": "k", "files": {"link/thesis.tex": hashlib.sha256(THESIS).hexdigest()}}))
    with pytest.raises(BiaskitError) as e:
        claim_folder(out, "m.json", "k", overwrite=True)
    assert e.value.code == "E143" and e.value.value == "link/thesis.tex"


def test_a_link_that_stays_inside_the_folder_is_not_an_escape(tmp_path):
    from biaskit.ownership import escapes

    out = tmp_path / "out"
    (out / "real").mkdir(parents=True)
    (out / "inner").symlink_to(out / "real", target_is_directory=True)
    (out / "up").symlink_to(tmp_path, target_is_directory=True)
    assert escapes(out, "inner/x.png") is None and escapes(out, "new/file.csv") is None
    assert escapes(out, "up/x.png") == (tmp_path / "x.png").resolve()


def test_a_report_whose_figures_folder_links_elsewhere_writes_nothing_there(tmp_path):
    from biaskit.evaluate.report import build_report

    rows = [
        {"prompt_id": f"p{i}", "text": "t", "domain": "d", "group": "ab"[i % 2], "model": "m", "kind": "generate", "sample_index": 0}
        | {"continuation": "c", "vader_label": ["positive", "negative", "neutral"][i % 3], "vader_compound": 0.1 * i}
        for i in range(12)
    ]
    run = tmp_path / "run"
    run.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), run / "scores.parquet")
    far = tmp_path / "elsewhere"
    far.mkdir()
    out = tmp_path / "rep"
    out.mkdir()
    (out / "figures").symlink_to(far, target_is_directory=True)
    with pytest.raises(BiaskitError) as e:
        build_report(run, out, n_boot=5)
    assert e.value.code == "E143" and e.value.value == "figures"
    assert list(far.iterdir()) == [] and sorted(p.name for p in out.iterdir()) == ["figures"]


def test_claim_stagewise_refuses_a_marker_listing_a_file_behind_a_link(tmp_path):
    far, out = _outside(tmp_path), tmp_path / "rep"
    out.mkdir()
    (out / "link").symlink_to(far, target_is_directory=True)
    listed = {"link/thesis.tex": hashlib.sha256(THESIS).hexdigest()}
    (out / "report_files.json").write_text(json.dumps({"written_by": "biaskit report", "files": listed}))
    with pytest.raises(BiaskitError) as e:
        claim_stagewise(out, "report_files.json", "biaskit report")
    assert e.value.code == "E143"
    assert (far / "thesis.tex").read_bytes() == THESIS
