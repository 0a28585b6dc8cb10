"""The annotation history belongs to a project: rounds are keyed by the table they were drawn from and by the
sample drawn, so unrelated rounds of the same name never merge, and a round name drawn again keeps both draws."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from biaskit.annotate import ledger as led
from biaskit.cli import app


def _scores(folder: Path, n: int, tag: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    labels = ["positive", "negative", "neutral"]
    rows = [
        {
            "prompt_id": f"{tag}{i}",
            "text": f"{tag} person {i} is ",
            "source": "bold",
            "language": "en",
            "domain": "profession",
            "group": f"g{i % 2}",
            "sample_index": 0,
            "model": "m",
            "kind": "generate",
            "continuation": f"{labels[i % 3]} text {tag} {i}",
            "full_text": f"{tag} person {i} is {labels[i % 3]} text {i}",
            "vader_compound": [0.6, -0.6, 0.0][i % 3],
            "vader_label": labels[i % 3],
        }
        for i in range(n)
    ]
    p = folder / "scores.parquet"
    pq.write_table(pa.Table.from_pylist(rows), p)
    return p


def _sample(scores: Path, round_: str, n: int, seed: int = 0, *extra: str):
    return CliRunner().invoke(
        app,
        [
            "annotate",
            "sample",
            str(scores),
            "--round",
            round_,
            "--n",
            str(n),
            "--bins",
            "1",
            "--seed",
            str(seed),
            "--out",
            str(scores.parent / f"{round_}.parquet"),
            *extra,
        ],
    )


def test_two_unrelated_r1_rounds_in_different_folders_never_merge(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))  # one default ledger for both folders, as for one user
    monkeypatch.delenv("BIASKIT_ANNOTATION_LEDGER", raising=False)
    monkeypatch.chdir(tmp_path)
    a, b = _scores(tmp_path / "study_a", 20, "a"), _scores(tmp_path / "study_b", 20, "b")
    assert _sample(a, "r1", 4).exit_code == 0
    assert _sample(b, "r1", 6).exit_code == 0
    hist = led.history()
    # main: one round r1 with samples=6 (study b's figures over study a's)
    assert [(h["round"], h["project"], h["samples"]) for h in hist] == [("r1", str(a.resolve()), 4), ("r1", str(b.resolve()), 6)]
    # the next round of study b excludes only study b's earlier items: study a's samples table may be gone
    (a.parent / "r1.parquet").unlink()
    r = _sample(b, "r2", 6)
    assert r.exit_code == 0, r.output  # main: E092, study a's samples table (of another project) is gone
    r1 = set(pq.read_table(b.parent / "r1.parquet").column("prompt_id").to_pylist())
    r2 = set(pq.read_table(b.parent / "r2.parquet").column("prompt_id").to_pylist())
    assert r1 and r2 and not r1 & r2
    out = CliRunner().invoke(app, ["annotate", "rounds"]).output
    assert out.count("r1: ") == 2 and f"project={a.resolve()}" in out and f"project={b.resolve()}" in out


def test_a_round_name_drawn_again_for_another_sample_warns_and_keeps_both(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("BIASKIT_ANNOTATION_LEDGER", raising=False)
    a = _scores(tmp_path / "study", 30, "a")
    assert _sample(a, "r1", 4, seed=0).exit_code == 0
    r = _sample(a, "r1", 8, 1)  # into the same file: it would replace the first draw's table
    assert r.exit_code == 1 and r.output.strip().startswith("error[E389]"), r.output
    r = _sample(a, "r1", 8, 1, "--overwrite")
    assert r.exit_code == 0 and "warning[RoundReuseWarning]: round 'r1'" in r.output and "both are kept" in r.output, r.output
    hist = led.history()
    assert [(h["round"], h["samples"]) for h in hist] == [("r1", 4), ("r1", 8)]  # main: one r1, samples=8
    again = _sample(a, "r1", 8, seed=1)  # the same sample again: the same round, no warning
    assert again.exit_code == 0 and "RoundReuseWarning" not in again.output
    assert len(led.history()) == 2
