"""Every command's ``--out`` pointed at a folder that holds a user's files. Whatever the command does
(write into the folder, refuse it with a coded error), nothing of the user's may change: every file keeps its
bytes, and none disappears. The folder holds a note, a thesis and a file under each name the command itself
would write there (README.md, prompts/<domain>_prompt.json, bold.jsonl, biaskit_manifest.json with ``{}``, ...).

Each command runs in-process (typer's CliRunner) on valid inputs, so the only thing in its way is the folder.
``train classifier --out`` is covered by its own tests (tests/train)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardening"))

from test_cli_fuzz import DUMP, ROOT, _rows, all_commands  # noqa: E402

from biaskit.cli import app  # noqa: E402

USER_FILES = {
    "notes.txt": b"my notes\n",
    "thesis.tex": b"\\chapter{Bias}\n",
    "README.md": b"# my own readme\n",
    "biaskit_manifest.json": b"{}",
    "prompts/gender_prompt.json": b'{"American_actors": {"Jack_Doe": ["original BOLD prompt "]}}',
    "prompts/profession_prompt.json": b'{"nursing_specialties": {"x": ["original BOLD prompt "]}}',
    "wikipedia/gender_wiki.json": b'{"American_actors": {"Jack_Doe": ["Jack Doe is an actor."]}}',
    "bold.jsonl": b'{"domain": "gender", "name": "x", "category": "y", "prompts": ["a "], "wikipedia": ["a b"]}\n',
    "data/prompts/train-00000-of-00001.parquet": b"not parquet, but mine",
    "tables/summary.csv": b"a,b\n1,2\n",
    "figures/sentiment.png": b"\x89PNG mine",
    "metrics.json": b'{"mine": true}',
}


def _table(d: Path, stage: str, name: str | None = None) -> Path:
    p = d / (name or f"in_{stage}.parquet")
    pq.write_table(pa.Table.from_pylist(_rows(stage)), p)
    return p


def _bold_prompts(d: Path) -> Path:
    p = d / "bold_prompts.parquet"
    pq.write_table(pa.Table.from_pylist([{**r, "bold_name": f"Jane_Doe_{i}"} for i, r in enumerate(_rows("prompts"))]), p)
    return p


def _scores(d: Path) -> Path:
    p = d / "scores.parquet"
    rows = _rows("scores", 8)
    for i, r in enumerate(rows):
        r["vader_compound"] = [0.5, -0.5, 0.1, 0.3][i % 4]
        r["vader_label"] = ["positive", "negative", "neutral", "positive"][i % 4]
        r["regard_positive"], r["regard_negative"], r["regard_neutral"] = 0.5, 0.25, 0.25
    pq.write_table(pa.Table.from_pylist(rows), p)
    return p


# command -> argv builder (input folder d, user folder out)
BUILDERS: dict[str, Callable[[Path, Path], list]] = {
    "score": lambda d, out: ["score", _table(d, "generations"), "-m", "vader", "--text-column", "continuation", "--out", out],
    "generate": lambda d, out: [
        "generate",
        _table(d, "prompts"),
        "--backend",
        "openai",
        "--base-url",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--max-retries",
        "0",
        "--out",
        out,
    ],
    "report": lambda d, out: ["report", _scores(d), "--out", out, "--n-boot", "5"],
    "scrape dump": lambda d, out: ["scrape", "dump", DUMP, "--out", out, "--max-pages", "2"],
    "prompts build": lambda d, out: ["prompts", "build", _table(d, "sentences"), "--out", out],
    "prompts rebuild": lambda d, out: ["prompts", "rebuild", _table(d, "prompts"), "--out", out],
    "bold import": lambda d, out: ["bold", "import", ROOT / "tests/fixtures/bold", "--out", out],
    "bold export": lambda d, out: ["bold", "export", _bold_prompts(d), "--out", out, "--layout", "both"],
    "expand templates": lambda d, out: ["expand", "templates", "en", "--out", out],
    "expand holistic": lambda d, out: ["expand", "holistic", "--axis", "ability", "--n-descriptors", "2", "--noun", "woman", "--out", out],
    "templates export-sheet": lambda d, out: ["templates", "export-sheet", "--target", "cs", "--out", out],
    "hub stage": lambda d, out: ["hub", "stage", f"prompts={_table(d, 'prompts')}", "--out", out],
    "stats aggregate": lambda d, out: ["stats", "aggregate", _scores(d), "--labels", "vader_label", "--n-boot", "5", "--out", out],
    "stats ztest": lambda d, out: ["stats", "ztest", _scores(d), "--out", out],
    "stats genbias": lambda d, out: ["stats", "genbias", _scores(d), "--prob-columns", "regard_*", "--n-boot", "5", "--out", out],
    "stats likelihood-bias": lambda d, out: ["stats", "likelihood-bias", _table(d, "generations"), "--out", out],
    "stats validity": lambda d, out: ["stats", "validity", _scores(d), "--out", out, "--tests-out", d / "vt.csv"],
    "annotate sample": lambda d, out: [
        "annotate",
        "sample",
        _scores(d),
        "--round",
        "r1",
        "--n",
        "2",
        "--out",
        out,
        "--tasks-out",
        d / "tasks.csv",
        "--ledger",
        d / "ledger.jsonl",
    ],
    "annotate export": lambda d, out: ["annotate", "export", _table(d, "samples"), "--out", out],
    "annotate agreement": lambda d, out: [
        "annotate",
        "agreement",
        _table(d, "annotations"),
        "--out",
        out,
        "--bootstrap",
        "5",
        "--ledger",
        d / "ledger.jsonl",
    ],
    "demo": lambda d, out: ["demo", "--out", out, "--quick"],
    "export lm-eval": lambda d, out: ["export", "lm-eval", _table(d, "prompts"), "--out", out],
}


def test_the_out_commands_are_covered():
    """Every command with an --out option is here or named as covered elsewhere."""
    import typer

    root = typer.main.get_command(app)
    with_out = []
    for cmd in all_commands():
        c = root
        for part in cmd.split():
            c = c.get_command(None, part)
        if any("--out" in getattr(p, "opts", []) for p in c.params):
            with_out.append(cmd)
    elsewhere = {
        "train classifier": "tests/train",
        "fill-mask": "needs a model; the same write_table as generate",
        "likelihood": "needs a model; the same write_table as generate",
        "expand honest": "the same write_table as expand templates",
        "templates import-sheet": "writes one YAML file (a folder --out is refused)",
        "hub load": "needs a dataset file; the same write_table as the others",
        "scrape api": "needs a MediaWiki server (tests/scrape)",
        "annotate pull": "needs a results file; the same write_table (tests/annotate)",
        "annotate validate": "needs labels; the same write_table (tests/annotate)",
        "annotate aggregate": "needs annotations; the same write_table (tests/annotate/test_labelmodels.py)",
        "annotate plan": "needs a validation table; writes plan.json atomically (tests/annotate/test_planning.py)",
        "import lm-eval": "needs lm-eval samples; the same write_table (tests/interop)",
        "stats family": "writes one CSV through the output layer (tests/core/test_command_matrix.py)",
        "stats ppi": "writes one CSV through the output layer (tests/core/test_command_matrix.py)",
        "expand bbq": "needs the BBQ templates; the same write_table (tests/templates/test_bbq_expand.py)",
        "expand bbq-choices": "needs an expanded BBQ table; the same write_table (tests/evaluate/test_bbq_answering.py)",
        "stats bbq": "needs answered BBQ examples; one CSV through the suffix writer (tests/evaluate/stats/test_bbq_scores.py)",
        "stats pairs": "needs a scored pairs table; one CSV through the suffix writer (tests/evaluate/stats/test_pairs.py)",
        "templates audit-pairs": "needs a pairs table; the same write_table (tests/templates/test_pair_audit.py)",
        "templates counterfactual": "needs spaCy; the same write_table (tests/templates/test_counterfactual_swap.py)",
    }
    missing = sorted(set(with_out) - set(BUILDERS) - set(elsewhere))
    assert not missing, missing


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


@pytest.mark.parametrize("command", sorted(BUILDERS))
def test_out_folder_with_user_files_keeps_them(command, tmp_path, monkeypatch):
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    d = tmp_path / "in"
    d.mkdir()
    out = tmp_path / "out"
    for rel, data in USER_FILES.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    argv = [str(a) for a in BUILDERS[command](d, out)]
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = CliRunner().invoke(app, argv, catch_exceptions=True)
    finally:
        os.chdir(old)
    shown = f"biaskit {' '.join(argv)}\nexit {res.exit_code}\n{res.output[-2000:]}"
    assert res.exception is None or isinstance(res.exception, SystemExit), shown
    assert res.exit_code in (0, 1), shown
    if res.exit_code == 1:
        assert "error[E" in res.output, shown
    after = _snapshot(out)
    for rel, data in USER_FILES.items():
        assert after.get(rel) == data, f"{rel} changed or removed\n{shown}"
