"""``annotate sample`` never replaces an earlier round's samples table unless ``--overwrite``, and the round ledger's
checksums are checked when a round's samples are read back (a changed file is E388, named)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from biaskit.cli import app


def _scores(d: Path, n: int = 40) -> Path:
    labels = ["positive", "negative", "neutral"]
    rows = [
        {
            "prompt_id": f"p{i}",
            "text": f"The nurse number {i} said ",
            "source": "bold",
            "group": "ab"[i % 2],
            "continuation": f"{labels[i % 3]} words {i}",
            "vader_compound": [0.6, -0.6, 0.0][i % 3],
            "vader_label": labels[i % 3],
        }
        for i in range(n)
    ]
    p = d / "scores.parquet"
    pq.write_table(pa.Table.from_pylist(rows), p)
    return p


def _sample(scores: Path, round_: str, out: Path, ledger: Path, *extra: str, n: int = 8):
    argv = ["annotate", "sample", scores, "--round", round_, "--n", str(n), "--bins", "1", "--out", out, "--ledger", ledger, *extra]
    return CliRunner().invoke(app, [str(a) for a in argv])


def test_a_second_round_at_the_same_out_is_refused_unless_overwrite(tmp_path):
    scores, ledger, out = _scores(tmp_path), tmp_path / "rounds.jsonl", tmp_path / "r1" / "samples.parquet"
    assert _sample(scores, "r1", out, ledger).exit_code == 0
    before = out.read_bytes()
    r = _sample(scores, "r2", out, ledger, n=4)
    assert r.exit_code == 1 and r.output.strip().startswith("error[E389]") and "'r1'" in r.output, r.output
    assert out.read_bytes() == before
    r = _sample(scores, "r2", out, ledger, "--overwrite", n=4)
    assert r.exit_code == 0, r.output
    assert pq.read_table(out).num_rows == 4


def test_the_same_round_drawn_again_with_the_same_items_is_not_a_replacement(tmp_path):
    scores, ledger, out = _scores(tmp_path), tmp_path / "rounds.jsonl", tmp_path / "r1" / "samples.parquet"
    assert _sample(scores, "r1", out, ledger).exit_code == 0
    r = _sample(scores, "r1", out, ledger)
    assert r.exit_code == 0, r.output


def test_a_round_samples_table_changed_since_the_ledger_is_named_when_read_back(tmp_path):
    scores, ledger = _scores(tmp_path), tmp_path / "rounds.jsonl"
    r1 = tmp_path / "r1" / "samples.parquet"
    assert _sample(scores, "r1", r1, ledger, n=20).exit_code == 0
    t = pq.read_table(r1)
    pq.write_table(t.slice(0, 5), r1)  # another draw written over round r1's table (5 of its 20 items)
    r = _sample(scores, "r2", tmp_path / "r2" / "samples.parquet", ledger)
    assert r.exit_code == 1 and r.output.strip().startswith("error[E388]"), r.output
    assert str(r1.resolve()) in r.output.replace("\n", "") and "'r1'" in r.output
    assert not (tmp_path / "r2" / "samples.parquet").exists()


def test_an_unchanged_earlier_round_is_excluded_from_the_next(tmp_path):
    scores, ledger = _scores(tmp_path), tmp_path / "rounds.jsonl"
    r1, r2 = tmp_path / "r1" / "samples.parquet", tmp_path / "r2" / "samples.parquet"
    assert _sample(scores, "r1", r1, ledger, n=20).exit_code == 0
    assert _sample(scores, "r2", r2, ledger, n=20).exit_code == 0
    a, b = (set(pq.read_table(p).column("sample_id").to_pylist()) for p in (r1, r2))
    assert len(a) == 20 and len(b) == 20 and not a & b  # 40 items in the pool: two disjoint rounds of 20
