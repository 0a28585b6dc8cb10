"""Resume after a simulated kill: a run SIGKILLed mid-way restarts where it stopped, no duplicates, no losses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners import fill_mask, generate, likelihood

KILLER = textwrap.dedent("""
    import os, signal, sys
    import pyarrow.parquet as pq
    import torch
    torch.set_num_threads(1)
    from biaskit.io import ShardedWriter
    from biaskit.evaluate.runners import generate
    n = {"writes": 0}
    real = ShardedWriter.write
    def write(self, rows):
        real(self, rows)
        n["writes"] += 1
        if n["writes"] == int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)   # the hard way: no cleanup, no finally blocks
    ShardedWriter.write = write
    generate(sys.argv[1], model=sys.argv[2], out=sys.argv[4], max_new_tokens=6, do_sample=True, top_k=40,
             num_return_sequences=2, seed=9, batch_size=3, progress=False)
""")


def _key(t: pa.Table) -> list[tuple]:
    return list(zip(t.column("prompt_id").to_pylist(), t.column("sample_index").to_pylist()))


def test_resume_after_sigkill_gives_the_uninterrupted_result(tiny_causal, make_prompts, tmp_path):
    texts = [f"Person {i} worked as a " for i in range(10)]
    prompts = tmp_path / "prompts.parquet"
    import pyarrow.parquet as pq

    pq.write_table(make_prompts(texts), prompts)
    out = tmp_path / "gens.parquet"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    r = subprocess.run([sys.executable, "-c", KILLER, str(prompts), tiny_causal, "3", str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == -signal.SIGKILL, r.stderr[-2000:]
    parts = tmp_path / "gens.parquet.parts"
    shards = sorted(parts.glob("part-*.parquet"))
    assert len(shards) == 3 and not out.exists()  # killed after 3 of 7 batches (20 units, batch size 3)
    done_before = sum(pq.read_table(s).num_rows for s in shards)
    assert done_before == 9

    from biaskit.evaluate.runners import hf

    calls = []
    lm = hf.load(tiny_causal, task="causal")
    real = lm.model.generate

    def counting(*a, **kw):
        calls.append(kw["input_ids"].shape[0])
        return real(*a, **kw)

    lm.model.generate = counting
    try:
        resumed = generate(
            str(prompts),
            model=tiny_causal,
            out=out,
            max_new_tokens=6,
            do_sample=True,
            top_k=40,
            num_return_sequences=2,
            seed=9,
            batch_size=3,
            progress=False,
        )
    finally:
        lm.model.generate = real
    assert sum(calls) == 20 - 9  # only the missing units ran
    full = generate(
        make_prompts(texts),
        model=tiny_causal,
        max_new_tokens=6,
        do_sample=True,
        top_k=40,
        num_return_sequences=2,
        seed=9,
        batch_size=7,
        progress=False,
    )
    assert resumed.num_rows == 20 and len(set(_key(resumed))) == 20
    assert _key(resumed) == _key(full)  # prompt order, then sample index
    assert resumed.column("continuation").to_pylist() == full.column("continuation").to_pylist()
    assert not parts.exists()


def test_resume_with_other_settings_is_refused(tiny_causal, make_prompts, tmp_path):
    from biaskit.io import ShardedWriter

    out = tmp_path / "ll.parquet"
    p = make_prompts(["A deaf woman.", "An old man.", "A tall man."])
    orig = ShardedWriter.read_all
    ShardedWriter.read_all = lambda self: (_ for _ in ()).throw(KeyboardInterrupt())
    try:
        with pytest.raises(KeyboardInterrupt):
            likelihood(p, model=tiny_causal, out=out, batch_size=1, progress=False)
    finally:
        ShardedWriter.read_all = orig
    with pytest.raises(BiaskitError) as e:
        likelihood(p, model=tiny_causal, out=out, add_bos=True, progress=False)
    assert e.value.code == "E063" and "partial run with other settings" in str(e.value)
    # the batch size is not a setting that changes results, so it may differ on resume
    t = likelihood(p, model=tiny_causal, out=out, batch_size=3, progress=False)
    assert t.num_rows == 3 and t.column("error").null_count == 3
    # --overwrite starts over
    t2 = likelihood(p, model=tiny_causal, out=out, add_bos=True, overwrite=True, progress=False)
    assert t2.column("nll_mean").to_pylist() != t.column("nll_mean").to_pylist()


def test_fill_mask_resume_keeps_all_ranks(tiny_masked, make_prompts, tmp_path):
    from biaskit.io import ShardedWriter

    out = tmp_path / "f.parquet"
    p = make_prompts([f"The person {i} worked as a <mask>." for i in range(6)] + ["no mask"])
    orig_write, n = ShardedWriter.write, {"w": 0}

    def write(self, rows):
        n["w"] += 1
        if n["w"] == 3:
            raise KeyboardInterrupt
        orig_write(self, rows)

    ShardedWriter.write = write
    try:
        with pytest.raises(KeyboardInterrupt):
            fill_mask(p, model=tiny_masked, out=out, top_k=4, batch_size=2, progress=False)
    finally:
        ShardedWriter.write = orig_write
    t = fill_mask(p, model=tiny_masked, out=out, top_k=4, batch_size=2, progress=False)
    ref = fill_mask(p, model=tiny_masked, top_k=4, batch_size=7, progress=False)
    assert t.num_rows == 6 * 4 + 1
    assert _key(t) == _key(ref) and t.column("token").to_pylist() == ref.column("token").to_pylist()


def test_a_run_failing_before_any_output_leaves_no_partial_state(tiny_causal, make_prompts, tmp_path):
    from transformers import AutoTokenizer

    out = tmp_path / "g.parquet"
    tok = AutoTokenizer.from_pretrained(tiny_causal)
    assert tok.chat_template  # the tiny model has one; a model without one makes --chat fail
    from biaskit.evaluate.runners import hf

    lm = hf.load(tiny_causal, task="causal")
    saved, lm.tokenizer.chat_template = lm.tokenizer.chat_template, None
    try:
        with pytest.raises(BiaskitError) as e:
            generate(make_prompts(["x"]), model=tiny_causal, out=out, chat=True, progress=False)
    finally:
        lm.tokenizer.chat_template = saved
    assert e.value.code == "E062" and "chat template" in str(e.value)
    assert not (tmp_path / "g.parquet.parts").exists()
    t = generate(make_prompts(["x"]), model=tiny_causal, out=out, max_new_tokens=2, progress=False)  # no E063
    assert t.num_rows == 1
