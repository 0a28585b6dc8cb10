"""A finished run with error rows redoes exactly those rows when the same command runs
again (--retry-errors, the default), counts them, keeps the order and writes no duplicates."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.io import lock_path


def _fail_some(server, state):
    def respond(h, path, body):
        if state["broken"] and "FAIL" in body.get("prompt", ""):
            return 500, {}, b'{"error": {"message": "internal error"}}'
        return None

    server.respond = respond


def _cmd(prompts, server, out, *extra):
    return [
        "generate",
        str(prompts),
        "--backend",
        "openai",
        "--base-url",
        server.url,
        "--model",
        "m",
        "--out",
        str(out),
        "--max-retries",
        "0",
        "--sample",
        "-n",
        "2",
        "--seed",
        "3",
        "--batch-size",
        "3",
        *extra,
    ]


def test_rerun_redoes_exactly_the_failed_rows(fake_server, write_prompts, tmp_path):
    state = {"broken": True}
    _fail_some(fake_server, state)
    texts = ["ok a", "FAIL b", "ok c", "", "FAIL d", "ok e"]  # "" is an empty prompt: an error no server can fix
    prompts = write_prompts(texts)
    out = tmp_path / "g.parquet"
    r = CliRunner().invoke(app, _cmd(prompts, fake_server, out))
    assert r.exit_code == 0, r.output
    first = pq.read_table(out)
    keys = list(zip(first.column("prompt_id").to_pylist(), first.column("sample_index").to_pylist()))
    assert keys == [(f"p{i:03d}", k) for i in range(6) for k in (0, 1)]
    errs = first.column("error").to_pylist()
    assert sum(e is not None for e in errs) == 6  # 2 samples x (FAIL b, FAIL d, empty)
    assert "6 rows with an error" in r.output
    ok_before = {k: c for k, c, e in zip(keys, first.column("continuation").to_pylist(), errs) if e is None}

    state["broken"] = False  # the server is fixed
    fake_server.requests.clear()
    r = CliRunner().invoke(app, _cmd(prompts, fake_server, out))
    assert r.exit_code == 0, r.output
    # exactly the failed (prompt, sample) units went to the server again; the empty prompt is not sent
    sent = sorted((q["body"]["prompt"], q["body"]["seed"]) for q in fake_server.requests)
    assert [p for p, _ in sent] == ["FAIL b", "FAIL b", "FAIL d", "FAIL d"]
    assert "4 rows that had an error were run again" in r.output
    second = pq.read_table(out)
    keys2 = list(zip(second.column("prompt_id").to_pylist(), second.column("sample_index").to_pylist()))
    assert keys2 == keys  # no duplicates, order kept
    errs2 = second.column("error").to_pylist()
    assert [e is not None for e in errs2] == [pid == "p003" for pid, _ in keys]  # only the empty prompt still fails
    cont2 = dict(zip(keys2, second.column("continuation").to_pylist()))
    assert all(cont2[k] == c for k, c in ok_before.items())  # the rows that were fine are untouched
    assert cont2[("p001", 0)] == " FAIL b-done" and cont2[("p004", 1)] == " FAIL d-done"
    man = json.loads((tmp_path / "g.parquet.manifest.json").read_text())
    assert man["retried_error_rows"] == 4 and man["error_rows"] == 2
    assert not (tmp_path / "g.parquet.parts").exists() and not lock_path(out).exists()
    # seeds of the retried rows are the per-row seeds of the first attempt (same samples as an unbroken run)
    first_seeds = {}
    for q in fake_server.requests:
        first_seeds.setdefault(q["body"]["prompt"], set()).add(q["body"]["seed"])
    assert all(len(v) == 2 for v in first_seeds.values())

    # a third run has nothing left that a server could fix
    fake_server.requests.clear()
    r = CliRunner().invoke(app, _cmd(prompts, fake_server, out))
    assert r.exit_code == 0 and fake_server.requests == [] and "run again" not in r.output


def test_no_retry_errors_leaves_the_failed_rows(fake_server, write_prompts, tmp_path):
    state = {"broken": True}
    _fail_some(fake_server, state)
    prompts = write_prompts(["ok a", "FAIL b"])
    out = tmp_path / "g.parquet"
    assert CliRunner().invoke(app, _cmd(prompts, fake_server, out)).exit_code == 0
    state["broken"] = False
    fake_server.requests.clear()
    r = CliRunner().invoke(app, _cmd(prompts, fake_server, out, "--no-retry-errors"))
    assert r.exit_code == 0 and fake_server.requests == []
    assert pq.read_table(out).column("error").null_count == 2  # the 2 samples of "ok a"
