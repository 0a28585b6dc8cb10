"""One writer per output. Two real processes on the same --out: one finishes with every
row, the other stops at once with a one-line E140 naming the holder; stale locks of dead processes are
taken over."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

import pyarrow.parquet as pq
import pytest
from hardening_util import SRC, biaskit_cmd, cli_env, run_biaskit

from biaskit.errors import BiaskitError
from biaskit.io import lock_path, output_lock, write_table


def _gated(server, gate):
    def respond(h, path, body):
        gate.wait(120)  # the first writer is held mid-run until the test opens the gate
        return None

    server.respond = respond


def test_two_generate_processes_on_one_out(fake_server, write_prompts, tmp_path):
    n = 24
    prompts = write_prompts([f"prompt number {i}" for i in range(n)])
    gate = threading.Event()
    _gated(fake_server, gate)
    out = tmp_path / "gens.parquet"
    args = (
        "generate",
        prompts,
        "--backend",
        "openai",
        "--base-url",
        fake_server.url,
        "--model",
        "m",
        "--out",
        out,
        "--batch-size",
        "1",
        "--max-retries",
        "0",
    )
    first = subprocess.Popen(biaskit_cmd(*args), env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while not fake_server.requests and time.time() < deadline:  # the first one is writing
            time.sleep(0.05)
        assert fake_server.requests, "the first generate never reached the server"
        assert lock_path(out).is_file()
        holder = json.loads(lock_path(out).read_text())
        assert holder["pid"] == first.pid and holder["host"] == socket.gethostname()
        assert holder["command"] == "biaskit generate"
        second = run_biaskit(*args)
        assert first.poll() is None  # (held at the gate: it cannot have finished)
        gate.set()
        out1, err1 = first.communicate(timeout=120)
    finally:
        gate.set()
        if first.poll() is None:
            first.kill()
    # the second writer stopped with one coded line naming the first
    assert second.returncode == 1
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error[E140]"), second.stderr
    assert f"pid {first.pid} on host {socket.gethostname()}" in lines[0] and "biaskit generate" in lines[0]
    assert "Traceback" not in second.stderr
    # the first one finished with every row, once, in order
    assert first.returncode == 0, err1
    t = pq.read_table(out)
    assert t.column("prompt_id").to_pylist() == [f"p{i:03d}" for i in range(n)]
    assert t.column("continuation").to_pylist() == [f" prompt number {i}-done" for i in range(n)]  # the server answers " <prompt>-done"
    assert t.column("error").null_count == n
    assert sorted(fake_server.prompts_seen()) == sorted(f"prompt number {i}" for i in range(n))  # the second sent nothing
    assert not lock_path(out).exists() and not (tmp_path / "gens.parquet.parts").exists()


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path, caplog):
    out = tmp_path / "t.parquet"
    lock_path(out).write_text(json.dumps({"pid": _dead_pid(), "host": socket.gethostname(), "command": "biaskit generate", "since": "x"}))
    with caplog.at_level("WARNING"):
        write_table({"a": [1, 2]}, out)
    assert pq.read_table(out).column("a").to_pylist() == [1, 2]
    assert "taking over the stale lock" in caplog.text
    assert not lock_path(out).exists()


def test_a_stale_lock_is_taken_over_by_the_cli(tmp_path, write_prompts, fake_server):
    prompts = write_prompts(["a", "b"])
    out = tmp_path / "g.parquet"
    lock_path(out).write_text(json.dumps({"pid": _dead_pid(), "host": socket.gethostname(), "command": "biaskit generate"}))
    r = run_biaskit("generate", prompts, "--backend", "openai", "--base-url", fake_server.url, "--model", "m", "--out", out)
    assert r.returncode == 0, r.stderr
    assert pq.read_table(out).num_rows == 2 and not lock_path(out).exists()


def _hold_lock_in_another_process(out, ready):
    code = (
        f"import sys, time; sys.path.insert(0, {SRC!r}); from biaskit.io import output_lock\n"
        f"with output_lock({str(out)!r}, command='biaskit hub stage'):\n"
        f"    open({str(ready)!r}, 'w').close(); time.sleep(60)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 30
    while not ready.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert ready.exists()
    return p


def test_a_live_holder_blocks_every_writer(tmp_path):
    from typer.testing import CliRunner

    from biaskit.cli import app

    out = tmp_path / "t.parquet"
    holder = _hold_lock_in_another_process(out, tmp_path / "ready")
    try:
        with pytest.raises(BiaskitError) as e:
            write_table({"a": [1]}, out)
        assert e.value.code == "E140" and f"pid {holder.pid}" in str(e.value) and "biaskit hub stage" in str(e.value)
        assert not out.exists()
        # the CLI (any command writing --out): one line, exit 1, nothing written
        src = tmp_path / "src.jsonl"
        src.write_text('{"prompt_id": "a", "text": "x"}\n')
        r = CliRunner().invoke(app, ["score", str(src), "--metrics", "vader", "--text-column", "text", "--out", str(out)])
        assert r.exit_code == 1
        assert r.output.strip().startswith("error[E140]") and len(r.output.strip().splitlines()) == 1
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
    # the holder was killed without releasing: its lock file is left behind and is taken over
    assert lock_path(out).exists()
    write_table({"a": [1]}, out)
    assert out.exists() and not lock_path(out).exists()


def test_a_lock_from_another_host_is_not_taken_over(tmp_path):
    out = tmp_path / "t.parquet"
    lock_path(out).write_text(json.dumps({"pid": 1, "host": "some-other-machine", "command": "biaskit demo", "since": "then"}))
    with pytest.raises(BiaskitError) as e:
        write_table({"a": [1]}, out)
    assert e.value.code == "E140" and "some-other-machine" in str(e.value) and f"delete {lock_path(out)}" in str(e.value)


def test_locks_are_reentrant_in_one_process(tmp_path):
    out = tmp_path / "t.parquet"
    with output_lock(out):
        with output_lock(out):
            write_table({"a": [1]}, out)  # the writer takes the lock its caller holds
        assert lock_path(out).exists()
    assert not lock_path(out).exists()


def test_library_stage_and_export_take_the_lock(tmp_path):
    import pyarrow as pa

    from biaskit.datasets.stage import TableSpec, stage_tables
    from biaskit.scrape.bold import export_bold

    t = pa.table({"prompt_id": ["a"], "text": ["x "], "source": ["bold"], "language": ["en"], "domain": ["d"], "group": ["g"], "page_title": ["P"]})
    holder = _hold_lock_in_another_process(tmp_path / "hub", tmp_path / "ready1")
    try:
        with pytest.raises(BiaskitError, match=r"E140.*biaskit hub stage"):
            stage_tables([TableSpec("p", t, "prompts")], tmp_path / "hub")
        assert not (tmp_path / "hub").exists()
    finally:
        holder.kill()
        holder.wait()
    holder = _hold_lock_in_another_process(tmp_path / "bold", tmp_path / "ready2")
    try:
        with pytest.raises(BiaskitError, match="E140"):
            export_bold(t, tmp_path / "bold")
        assert not (tmp_path / "bold").exists()
    finally:
        holder.kill()
        holder.wait()
