"""Progress when stderr is not a terminal: generate, likelihood and score advance one
ProgressBar; on a log file, CI or a pipe a live bar shows nothing until the end, so a plain line is written
every few seconds instead (BIASKIT_PROGRESS_SECONDS, default 5), and a last line when the work ends."""

from __future__ import annotations

import io

import pyarrow as pa
from typer.testing import CliRunner

import biaskit.log
from biaskit.cli import app
from biaskit.io import write_table
from biaskit.log import PLAIN_PROGRESS_SECONDS, PlainProgress, ProgressBar


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_a_line_every_interval_with_the_time_left_and_a_last_line():
    clock, out = Clock(), io.StringIO()
    p = PlainProgress(10, "generating (smol)", interval=5.0, clock=clock, stream=out)
    clock.t = 101.0
    p.advance(1)  # 1 s in: no line yet
    clock.t = 105.0
    p.advance(1)  # 5 s in, 2 of 10 done: 5 / 2 * 8 = 20 s left
    clock.t = 107.0
    p.advance(3)  # 2 s after the last line: none
    clock.t = 111.0
    p.advance(2)  # 11 s in, 7 of 10: 11 / 7 * 3 = 4.71 -> 5 s left
    clock.t = 112.0
    p.advance(3)
    p.close()
    assert out.getvalue().splitlines() == [
        "generating (smol): 2/10 (20%), 5 s, about 20 s left",
        "generating (smol): 7/10 (70%), 11 s, about 5 s left",
        "generating (smol): 10/10 done in 12 s",
    ]


def test_work_within_the_first_interval_writes_nothing():
    clock, out = Clock(), io.StringIO()
    p = PlainProgress(None, "scoring", interval=5.0, clock=clock, stream=out)
    clock.t = 104.9
    p.advance(50)
    p.close()
    assert out.getvalue() == "" and PLAIN_PROGRESS_SECONDS == 5.0


def test_progress_bar_writes_plain_lines_off_a_terminal(monkeypatch, capsys):
    monkeypatch.setenv("BIASKIT_PROGRESS_SECONDS", "0")  # a line at every step
    with ProgressBar(4, "scoring (m)", disable=False) as bar:  # pytest's stderr is not a terminal
        bar.advance(1)
        bar.advance(3)
    assert capsys.readouterr().err.splitlines() == [
        "scoring (m): 1/4 (25%), 0 s, about 0 s left",
        "scoring (m): 4/4 (100%), 0 s, about 0 s left",
        "scoring (m): 4/4 done in 0 s",
    ]
    with ProgressBar(4, "quiet", disable=True) as bar:
        bar.advance(4)
    assert capsys.readouterr().err == ""


def test_score_cli_prints_progress_lines_when_stderr_is_not_a_terminal(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASKIT_PROGRESS_SECONDS", "0")
    rows = [{"prompt_id": f"p{i}", "text": "a", "continuation": "I love it" if i % 2 else "awful"} for i in range(40)]
    write_table(pa.Table.from_pylist(rows), tmp_path / "g.parquet")
    args = ["score", str(tmp_path / "g.parquet"), "--metrics", "vader", "--text-column", "continuation", "--batch-size", "10"]
    r = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "s.parquet")])
    assert r.exit_code == 0, r.output
    lines = [x for x in r.output.splitlines() if x.startswith("score vader: ")]
    assert [x.split(",")[0] for x in lines] == [
        "score vader: 10/40 (25%)",
        "score vader: 20/40 (50%)",
        "score vader: 30/40 (75%)",
        "score vader: 40/40 (100%)",
        "score vader: 40/40 done in 0 s",
    ]
    r = CliRunner().invoke(app, ["--quiet", *args, "--out", str(tmp_path / "q.parquet")])
    assert r.exit_code == 0, r.output
    assert "score vader: " not in r.output


def test_a_line_while_the_first_batch_runs_before_any_work_is_done():
    clock, out = Clock(), io.StringIO()
    p = PlainProgress(32, "generating (smol)", interval=5.0, clock=clock, stream=out)
    clock.t = 104.0
    p.tick()  # 4 s into the first batch: no line yet
    clock.t = 105.0
    p.tick()  # 5 s: a line with nothing done and no time left to guess
    clock.t = 110.0
    p.tick()
    clock.t = 112.0
    p.advance(16)  # the first batch of 16 ends 2 s after the last line: none until the interval has passed
    clock.t = 115.0
    p.tick()  # 15 s, 16 of 32: 15 / 16 * 16 = 15 s left
    assert out.getvalue().splitlines() == [
        "generating (smol): 0/32 (0%), 5 s",
        "generating (smol): 0/32 (0%), 10 s",
        "generating (smol): 16/32 (50%), 15 s, about 15 s left",
    ]


def test_progress_bar_heartbeat_writes_lines_before_the_first_step_ends(monkeypatch, capsys):
    import time

    monkeypatch.setenv("BIASKIT_PROGRESS_SECONDS", "0.05")
    with ProgressBar(2, "generating (m)", disable=False) as bar:
        time.sleep(0.4)  # a first batch that takes a while
        bar.advance(2)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("generating (m): 0/2 (0%), ") and lines[-1].startswith("generating (m): 2/2 done in ")
    assert sum(x.startswith("generating (m): 0/2 (0%)") for x in lines) >= 2


def test_generate_reports_progress_while_its_first_batch_runs(monkeypatch, capsys):
    import time

    from biaskit.evaluate.runners.backend import BackendBase, Capabilities
    from biaskit.evaluate.runners.common import GenerationSettings
    from biaskit.evaluate.runners.core import run
    from biaskit.evaluate.runners.options import RunOptions

    class SlowBatches(BackendBase):
        """Two batches of two prompts; each takes 0.3 s, as a first batch of 16 takes minutes on a CPU."""

        name = "slow"
        capabilities = Capabilities(kinds=("generate",), formats=("raw",))
        batch_sizes_used: list = []

        def generate(self, units, s, batch_size):
            for i in range(0, len(units), 2):
                time.sleep(0.3)
                yield [{"_unit": u, "continuation": "!", "full_text": u.text + "!", "truncated": False, "error": None} for u in units[i : i + 2]]

    monkeypatch.setenv("BIASKIT_PROGRESS_SECONDS", "0.1")
    monkeypatch.setattr(biaskit.log, "quiet", lambda: False)  # an earlier CLI call in this process may have set --quiet
    prompts = pa.table({"prompt_id": ["a", "b", "c", "d"], "text": ["w", "x", "y", "z"], "source": ["t"] * 4, "language": ["en"] * 4})
    t = run("generate", prompts, GenerationSettings(), RunOptions("slow", backend_obj=SlowBatches()))
    assert t.num_rows == 4
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("generating (slow): ")]
    # lines while the first batch runs, before any prompt is done; the last one when the run ends
    assert lines[0].startswith("generating (slow): 0/4 (0%), ") and lines[-1].startswith("generating (slow): 4/4 done in ")
    assert any(x.startswith("generating (slow): 2/4 (50%), ") for x in lines)
