"""``biaskit score`` scores any table with a text column: every column is carried, a table without ``prompt_id``
gets row ids (``row-1``, ``row-2``, ...), and a refusal names the command's input as the table to score."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from biaskit.cli import app

SENTENCES = ["The woman was known for being kind.", "The man was described as a terrible liar.", "They worked as nurses."]


def _csv(d: Path, header: str, rows: list[str]) -> Path:
    p = d / "sentences.csv"
    p.write_text(header + "\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
    return p


def test_a_csv_of_labelled_sentences_without_prompt_id_is_scored_with_every_column_carried(tmp_path):
    src = _csv(tmp_path, "sentence,gold,annotator_note", [f'"{s}",{g},n{i}' for i, (s, g) in enumerate(zip(SENTENCES, "pnx"))])
    r = CliRunner().invoke(app, ["score", str(src), "-m", "vader", "--text-column", "sentence", "--out", str(tmp_path / "s.parquet")])
    assert r.exit_code == 0, r.output
    t = pq.read_table(tmp_path / "s.parquet")
    assert t.column_names[:4] == ["prompt_id", "sentence", "gold", "annotator_note"]
    assert t.column("prompt_id").to_pylist() == ["row-1", "row-2", "row-3"]
    assert t.column("gold").to_pylist() == ["p", "n", "x"] and t.column("annotator_note").to_pylist() == ["n0", "n1", "n2"]
    # the reference package on the same sentences (vaderSentiment's compound score)
    ref = [SentimentIntensityAnalyzer().polarity_scores(s)["compound"] for s in SENTENCES]
    assert t.column("vader_compound").to_pylist() == ref
    man = json.loads((tmp_path / "s.parquet.manifest.json").read_text())
    assert man["config"]["row_ids_added"] is True


def test_a_table_with_its_own_prompt_id_keeps_it(tmp_path):
    src = _csv(tmp_path, "prompt_id,continuation", [f'q{i},"{s}"' for i, s in enumerate(SENTENCES)])
    r = CliRunner().invoke(app, ["score", str(src), "-m", "vader", "--out", str(tmp_path / "s.parquet")])
    assert r.exit_code == 0, r.output
    assert pq.read_table(tmp_path / "s.parquet").column("prompt_id").to_pylist() == ["q0", "q1", "q2"]


def test_a_refusal_names_the_table_to_score_not_a_scores_table(tmp_path):
    src = _csv(tmp_path, "prompt_id,continuation,vader_compound", ['q1,"a",high', 'q2,"b",low'])  # a score column of text
    r = CliRunner().invoke(app, ["score", str(src), "-m", "vader", "--out", str(tmp_path / "s.parquet")])
    assert r.exit_code == 1 and r.output.startswith("error[E"), r.output
    assert "(the table to score)" in r.output and str(src) in r.output.replace("\n", "")
    assert not (tmp_path / "s.parquet").exists()
