"""The generate / fill-mask / likelihood commands, and the demo stages' skip paths."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.io import read_manifest, read_table

runner = CliRunner()


@pytest.fixture()
def prompt_file(tmp_path, make_prompts, gen_texts):
    p = tmp_path / "prompts.parquet"
    pq.write_table(make_prompts(gen_texts, descriptor=["astronomer", "woman", "old", "Programmers", "Prague", "known", "doctor"]), p)
    return p


def test_generate_command(tiny_causal, prompt_file, tmp_path):
    out = tmp_path / "gens.parquet"
    r = runner.invoke(
        app,
        [
            "-q",
            "generate",
            str(prompt_file),
            "--model",
            tiny_causal,
            "--out",
            str(out),
            "--sample",
            "--top-k",
            "40",
            "--top-p",
            "0.95",
            "-n",
            "2",
            "--seed",
            "4",
            "--max-new-tokens",
            "5",
            "--batch-size",
            "3",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "generate: 14 rows for 7 prompts written to" in r.output
    t = read_table(out, "generations")
    assert t.num_rows == 14 and set(t.column("seed").to_pylist()) == {4}
    from biaskit.evaluate.runners import generate

    lib = generate(
        str(prompt_file), model=tiny_causal, do_sample=True, top_k=40, top_p=0.95, num_return_sequences=2, seed=4, max_new_tokens=5, progress=False
    )
    assert t.column("continuation").to_pylist() == lib.column("continuation").to_pylist()
    assert read_manifest(out)["command"] == "biaskit generate"


def test_likelihood_and_fill_mask_commands(tiny_causal, tiny_masked, prompt_file, tmp_path, make_prompts):
    out = tmp_path / "ll.parquet"
    r = runner.invoke(app, ["-q", "likelihood", str(prompt_file), "-m", tiny_causal, "-o", str(out), "--span-column", "descriptor", "--bos", "yes"])
    assert r.exit_code == 0, r.output
    t = read_table(out)
    assert t.column("error").to_pylist() == [None] * 7 and all(n >= 1 for n in t.column("n_tokens").to_pylist())
    templates = tmp_path / "t.jsonl"
    templates.write_text('{"prompt_id": "a", "text": "The woman worked as a <mask>."}\n{"prompt_id": "b", "text": "no slot"}\n')
    out2 = tmp_path / "f.parquet"
    r = runner.invoke(app, ["-q", "fill-mask", str(templates), "-m", tiny_masked, "-o", str(out2), "-k", "5"])
    assert r.exit_code == 0, r.output
    assert "fill-mask: 6 rows for 2 prompts" in r.output and "1 rows with an error" in r.output
    assert read_table(out2).column("rank").to_pylist() == [1, 2, 3, 4, 5, None]


def test_user_errors_end_in_one_line(tiny_causal, prompt_file, tmp_path):
    r = runner.invoke(app, ["generate", str(prompt_file), "-m", tiny_causal, "-o", str(tmp_path / "x.parquet"), "-b", "lots"])
    assert r.exit_code == 1 and "error[E062] invalid batch size; got 'lots'" in r.output
    r = runner.invoke(app, ["likelihood", str(prompt_file), "-m", tiny_causal, "-o", str(tmp_path / "x.parquet"), "--bos", "maybe"])
    assert r.exit_code == 1 and "E062" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["generate", str(tmp_path / "missing.parquet"), "-o", str(tmp_path / "x.parquet")])
    assert r.exit_code == 1 and "E003" in r.output


@pytest.mark.parametrize("cmd", ["generate", "fill-mask", "likelihood"])
def test_help_has_examples(cmd):
    r = runner.invoke(app, [cmd, "--help"])
    assert r.exit_code == 0 and f"Example: biaskit {cmd} " in r.output


def test_import_biaskit_runners_does_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys, biaskit, biaskit.evaluate.runners, biaskit.cli; "
        "from biaskit.registry import backends; assert backends.names() == ['hf', 'openai'], backends.names(); "
        "print(any(m.split('.')[0] in ('torch', 'transformers') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


class _Ctx:
    def __init__(self, run_dir, tables=None):
        self.run_dir, self.tables, self.info, self.summary, self.quick, self.seed = run_dir, tables or {}, {}, [], True, 0

    def add(self, name, path):
        self.tables[name] = path

    def note(self, stage, line):
        self.summary.append((stage, line))


def test_demo_stages_skip_with_a_note_when_inputs_are_missing(tmp_path, monkeypatch):
    from biaskit.demo import stage_fillmask, stage_generate, stage_likelihood

    monkeypatch.delenv("BIASKIT_DEMO_MASKED_LM", raising=False)
    ctx = _Ctx(tmp_path)
    for mod in (stage_generate, stage_likelihood, stage_fillmask):
        mod.run(ctx)
    notes = dict(ctx.summary)
    assert notes["generate"].startswith("skipped: no prompts_bold table")
    assert notes["likelihood"].startswith("skipped: no prompts_holistic table")
    assert notes["fillmask"].startswith("skipped: no masked LM offline; set BIASKIT_DEMO_MASKED_LM")
    assert "generations" not in ctx.tables and "fillins" not in ctx.tables


def test_demo_run_model_records_the_table_or_skips_only_on_a_model_that_cannot_be_loaded(tmp_path):
    import pyarrow as pa

    from biaskit.demo.common import run_model
    from biaskit.errors import BiaskitError

    calls = []

    def runner(prompts, **kw):
        calls.append(kw)
        return prompts

    ctx = _Ctx(tmp_path)
    t = pa.table({"prompt_id": ["p0"]})
    table, secs = run_model(ctx, "likelihood", "likelihoods", runner, t, model="m", unavailable=lambda e: "no", top_k=3)
    assert table is t and isinstance(secs, float) and ctx.tables == {"likelihoods": tmp_path / "likelihoods.parquet"}
    assert calls == [{"model": "m", "out": tmp_path / "likelihoods.parquet", "batch_size": "auto", "overwrite": True, "top_k": 3}]

    def missing(prompts, **kw):
        raise BiaskitError("E011", "'torch' is not installed", fix="pip install 'biaskit[hf]'")

    ctx = _Ctx(tmp_path)
    assert run_model(ctx, "generate", "generations", missing, t, model="m", unavailable=lambda e: f"gone ({e.fix})") is None
    assert ctx.summary == [("generate", "skipped: gone (pip install 'biaskit[hf]')")] and ctx.tables == {}
    assert ctx.info == {"generate": {"skipped": "[E011] 'torch' is not installed; fix: pip install 'biaskit[hf]'"}}

    def broken(prompts, **kw):
        raise BiaskitError("E062", "bad settings")

    with pytest.raises(BiaskitError, match="E062"):  # any other error is the user's to see, not a skip
        run_model(_Ctx(tmp_path), "generate", "generations", broken, t, model="m", unavailable=lambda e: "no")


def test_demo_fillmask_runs_with_a_masked_lm_from_the_environment(tiny_masked, tmp_path, monkeypatch, make_prompts):
    from biaskit.demo import stage_fillmask

    p = tmp_path / "prompts_slavic.parquet"
    pq.write_table(make_prompts(["Ta žena pracuje jako <mask>.", "Ten muž je <mask>."], masked=[True, True]), p)
    monkeypatch.setenv("BIASKIT_DEMO_MASKED_LM", tiny_masked)
    ctx = _Ctx(tmp_path, {"prompts_slavic": p})
    stage_fillmask.run(ctx)
    t = read_table(ctx.tables["fillins"], "generations")
    assert t.num_rows == 20 and ctx.info["fillmask"]["templates"] == 2
    assert dict(ctx.summary)["fillmask"].startswith("top-10 fill-ins for 2 templates")


def test_demo_pick_spread_takes_groups_round_robin(make_prompts):
    from biaskit.demo.stage_generate import pick_spread

    t = make_prompts([f"t{i}" for i in range(9)], group=["a"] * 5 + ["b"] * 3 + ["c"])
    got = pick_spread(t, 5)
    assert got.column("group").to_pylist() == ["a", "a", "b", "b", "c"]
    assert got.column("prompt_id").to_pylist() == ["p0", "p1", "p5", "p6", "p8"]
