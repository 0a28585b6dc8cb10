"""Generation runner (hf backend) on a tiny GPT-2 loaded through the project's loading code."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners import generate
from biaskit.evaluate.runners.common import cut_first_sentence, derive_seed
from biaskit.schema import validate


def _reference_greedy(model_dir: str, text: str, max_new_tokens: int) -> str:
    """Independent computation: plain transformers generate, one unpadded prompt at a time."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    ids = tok(text, return_tensors="pt").input_ids
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.eos_token_id)
    new = out[0, ids.shape[1] :].tolist()
    if tok.eos_token_id in new:
        new = new[: new.index(tok.eos_token_id)]
    return tok.decode(new, skip_special_tokens=True)


def _drop_space(text: str, raw: str) -> str:
    return raw[1:] if text.endswith(" ") and raw.startswith(" ") else raw


def test_trailing_space_can_be_kept(tiny_causal, make_prompts):
    text = "The woman worked as "
    t = generate(make_prompts([text]), model=tiny_causal, max_new_tokens=6, strip_trailing_space=False, progress=False)
    assert t.column("continuation")[0].as_py() == _reference_greedy(tiny_causal, text, 6)
    assert t.column("full_text")[0].as_py() == text + t.column("continuation")[0].as_py()


def _conts(t: pa.Table) -> dict[tuple[str, int], str]:
    return {
        (p, k): c for p, k, c in zip(t.column("prompt_id").to_pylist(), t.column("sample_index").to_pylist(), t.column("continuation").to_pylist())
    }


def test_greedy_matches_plain_transformers_one_prompt_at_a_time(tiny_causal, gen_prompts, gen_texts):
    GEN_PROMPTS = gen_texts
    t = generate(gen_prompts, model=tiny_causal, max_new_tokens=10, batch_size=4, progress=False)
    validate(t, "generations")
    assert t.column("prompt_id").to_pylist() == [f"g{i}" for i in range(len(GEN_PROMPTS))]  # input order kept
    for text, cont, full in zip(GEN_PROMPTS, t.column("continuation").to_pylist(), t.column("full_text").to_pylist()):
        # the prompt's trailing space is cut before tokenising; the model's first space is dropped again
        ref = _reference_greedy(tiny_causal, text.rstrip(" "), 10)
        assert cont == _drop_space(text, ref)
        assert full == text.rstrip(" ") + ref
    assert set(t.column("kind").to_pylist()) == {"generate"}
    assert set(t.column("backend").to_pylist()) == {"hf"}
    assert t.column("error").null_count == t.num_rows
    assert t.column("model_revision")[0].as_py().startswith("sha256:")
    cfg = json.loads(t.column("generation_config")[0].as_py())
    assert cfg["max_new_tokens"] == 10 and cfg["do_sample"] is False
    # the prompt's own columns are carried along
    assert t.column("source").to_pylist() == ["test"] * len(GEN_PROMPTS)


@pytest.mark.parametrize("bs", [1, 2, 3, "auto"])
def test_greedy_is_identical_across_batch_sizes(tiny_causal, gen_prompts, bs):
    ref = generate(gen_prompts, model=tiny_causal, max_new_tokens=12, batch_size=7, progress=False)
    got = generate(gen_prompts, model=tiny_causal, max_new_tokens=12, batch_size=bs, progress=False)
    assert got.column("continuation").to_pylist() == ref.column("continuation").to_pylist()
    assert all(c for c in ref.column("continuation").to_pylist())  # non-trivial outputs


def test_seeded_sampling_is_identical_across_batch_sizes_and_prompt_order(tiny_causal, gen_prompts, gen_texts):
    GEN_PROMPTS = gen_texts
    kw = dict(model=tiny_causal, max_new_tokens=10, do_sample=True, top_k=40, top_p=0.95, num_return_sequences=3, seed=7, progress=False)
    a = generate(gen_prompts, batch_size=1, **kw)
    b = generate(gen_prompts, batch_size=5, **kw)
    shuffled = gen_prompts.take(pa.array([4, 0, 6, 2, 1, 5, 3]))
    c = generate(shuffled, batch_size=3, **kw)
    assert a.num_rows == len(GEN_PROMPTS) * 3
    assert _conts(a) == _conts(b) == _conts(c)
    assert a.column("sample_index").to_pylist()[:3] == [0, 1, 2]
    # samples of one prompt differ from each other, and another seed gives other samples
    per_prompt = [len({_conts(a)[(f"g{i}", k)] for k in range(3)}) for i in range(len(GEN_PROMPTS))]
    assert sum(per_prompt) > len(GEN_PROMPTS)
    d = generate(gen_prompts, batch_size=5, **{**kw, "seed": 8})
    assert _conts(d) != _conts(a)
    assert set(a.column("seed").to_pylist()) == {7}


def test_sampling_follows_a_per_row_generator(tiny_causal, make_prompts):
    prompts_table = make_prompts
    """Independent re-implementation: full-sequence forward (no cache), HF warpers, multinomial with the
    row's own generator seeded by derive_seed(seed, prompt_id, sample_index)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    text = "The woman worked as "
    t = generate(
        prompts_table([text], prefix="x"),
        model=tiny_causal,
        max_new_tokens=8,
        do_sample=True,
        temperature=0.9,
        top_k=20,
        top_p=0.9,
        num_return_sequences=2,
        seed=3,
        progress=False,
    )
    tok = AutoTokenizer.from_pretrained(tiny_causal)
    model = AutoModelForCausalLM.from_pretrained(tiny_causal).eval()
    for k in range(2):
        g = torch.Generator().manual_seed(derive_seed(3, "x0", k))
        ids = tok(text.rstrip(" "), return_tensors="pt").input_ids
        new = []
        for _ in range(8):
            with torch.no_grad():
                logits = model(ids).logits[:, -1].float()
            for w in (TemperatureLogitsWarper(0.9), TopKLogitsWarper(20), TopPLogitsWarper(0.9)):
                logits = w(ids, logits)
            nxt = int(torch.multinomial(torch.softmax(logits, -1)[0], 1, generator=g))
            if nxt == tok.eos_token_id:
                break
            new.append(nxt)
            ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
        assert t.column("continuation")[k].as_py() == _drop_space(text, tok.decode(new))


def test_top_k_1_sampling_equals_greedy(tiny_causal, gen_prompts):
    g = generate(gen_prompts, model=tiny_causal, max_new_tokens=8, progress=False)
    s = generate(gen_prompts, model=tiny_causal, max_new_tokens=8, do_sample=True, top_k=1, seed=123, progress=False)
    assert g.column("continuation").to_pylist() == s.column("continuation").to_pylist()


def test_first_sentence_cut():
    assert cut_first_sentence("the field of astronomy. He was born in 1900.") == "the field of astronomy."
    assert cut_first_sentence(' a "quoted end." Next') == ' a "quoted end."'
    assert cut_first_sentence("no end at all") == "no end at all"
    assert cut_first_sentence("line one\nline two. x") == "line one"
    assert cut_first_sentence("\n\nafter blank lines! more") == "\n\nafter blank lines!"
    assert cut_first_sentence("3.5 million people live there. Yes") == "3.5 million people live there."
    assert cut_first_sentence("") == ""


def test_first_sentence_option_cuts_the_generated_text(tiny_causal, gen_prompts):
    full = generate(gen_prompts, model=tiny_causal, max_new_tokens=20, progress=False)
    cut = generate(gen_prompts, model=tiny_causal, max_new_tokens=20, first_sentence=True, progress=False)
    assert cut.column("continuation").to_pylist() == [cut_first_sentence(c) for c in full.column("continuation").to_pylist()]


def test_long_prompt_is_cut_from_the_left_with_a_warning(tiny_causal, make_prompts, logs):
    prompts_table, caplog = make_prompts, logs
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_causal)
    long = "The doctor said that the patient was doing well. " * 8
    ids = tok(long.rstrip(" ")).input_ids
    assert len(ids) > 64 - 6
    t = generate(prompts_table([long, "Programmers "]), model=tiny_causal, max_new_tokens=6, progress=False)
    assert t.column("truncated").to_pylist() == [True, False]
    kept = tok.decode(ids[-(64 - 6) :])  # the model context is 64 tokens; 6 are left for the continuation
    assert t.column("continuation")[0].as_py() == _drop_space(long, _reference_greedy(tiny_causal, kept, 6))
    assert any("1 prompt(s) were longer than the model context" in r.getMessage() for r in caplog.records)


def test_chat_template_is_applied(tiny_causal, make_prompts):
    prompts_table = make_prompts
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_causal)
    t = generate(prompts_table(["Tell me about nurses"]), model=tiny_causal, max_new_tokens=6, chat=True, progress=False)
    wrapped = tok.apply_chat_template([{"role": "user", "content": "Tell me about nurses"}], add_generation_prompt=True, tokenize=False)
    assert wrapped.startswith("<|endoftext|>user: Tell me about nurses")
    # reference: the wrapped text, tokenised without extra special tokens (GPT-2 adds none anyway)
    assert t.column("continuation")[0].as_py() == _reference_greedy(tiny_causal, wrapped, 6)
    assert json.loads(t.column("generation_config")[0].as_py())["chat"] is True


def test_writes_table_with_manifest(tiny_causal, gen_prompts, gen_texts, tmp_path):
    GEN_PROMPTS = gen_texts
    from biaskit.io import read_manifest, read_table

    out = tmp_path / "gens.parquet"
    generate(gen_prompts, model=tiny_causal, out=out, max_new_tokens=5, do_sample=True, seed=11, progress=False)
    t = read_table(out, "generations")
    assert t.num_rows == len(GEN_PROMPTS)
    m = read_manifest(out)
    assert m["seed"] == 11 and m["stage"] == "generations"
    assert m["config"]["generation_config"]["top_k"] is None and m["config"]["generation_config"]["do_sample"] is True
    assert m["model"]["revision"].startswith("sha256:") and m["output"]["rows"] == len(GEN_PROMPTS)
    assert not (tmp_path / "gens.parquet.parts").exists()
    # rerunning with the same settings is a no-op; other settings refuse to clobber it
    again = generate(gen_prompts, model=tiny_causal, out=out, max_new_tokens=5, do_sample=True, seed=11, progress=False)
    assert again.column("continuation").to_pylist() == t.column("continuation").to_pylist()
    with pytest.raises(BiaskitError) as e:
        generate(gen_prompts, model=tiny_causal, out=out, max_new_tokens=5, seed=12, progress=False)
    assert e.value.code == "E063" and "--overwrite" in str(e.value)


@pytest.mark.parametrize(
    "kwargs,code,text",
    [
        ({"num_return_sequences": 2}, "E062", "need sampling"),
        ({"max_new_tokens": 0}, "E062", "max_new_tokens"),
        ({"do_sample": True, "temperature": 0}, "E062", "temperature"),
        ({"batch_size": "0"}, "E062", "batch size"),
        ({"batch_size": "big"}, "E062", "invalid batch size"),
        ({"max_new_tokens": 64}, "E062", "leaves no room"),
    ],
)
def test_bad_settings_raise_coded_errors(tiny_causal, gen_prompts, kwargs, code, text):
    with pytest.raises(BiaskitError) as e:
        generate(gen_prompts, model=tiny_causal, progress=False, **kwargs)
    assert e.value.code == code and text in str(e.value)


def test_bad_prompt_tables(tiny_causal):
    with pytest.raises(BiaskitError) as e:
        generate(pa.table({"id": ["a"], "text": ["x"]}), model=tiny_causal)
    assert e.value.code == "E001" and "prompt_id" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        generate(pa.table({"prompt_id": ["a", "a"], "text": ["x", "y"]}), model=tiny_causal)
    assert e.value.code == "E007" and "'a'" in str(e.value)


def test_unknown_model_offline_names_the_asset_options(monkeypatch, make_prompts):
    prompts_table = make_prompts
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BiaskitError) as e:
        generate(prompts_table(["x"]), model="no-such-org/no-such-model-xyz")
    msg = str(e.value)
    assert e.value.code == "E060" and "offline" in msg and "smollm2-135m" in msg and "local model folder" in msg
    with pytest.raises(BiaskitError) as e:
        generate(prompts_table(["x"]), model="./missing/model/dir")
    assert e.value.code == "E271" and "no folder ./missing/model/dir" in str(e.value)


def test_masked_model_cannot_generate(tiny_masked, make_prompts):
    prompts_table = make_prompts
    with pytest.raises(BiaskitError) as e:
        generate(prompts_table(["x"]), model=tiny_masked)
    assert e.value.code == "E060"


def test_automatic_batch_size_backs_off_on_out_of_memory(tiny_causal, gen_prompts, monkeypatch, logs):
    caplog = logs
    import torch

    from biaskit.evaluate.runners import hf

    ref = generate(gen_prompts, model=tiny_causal, max_new_tokens=6, batch_size=1, progress=False)
    lm = hf.load(tiny_causal, task="causal")
    real = lm.model.generate
    seen = []

    def fake(*a, **kw):
        n = kw["input_ids"].shape[0]
        seen.append(n)
        if n > 2:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(*a, **kw)

    monkeypatch.setattr(lm.model, "generate", fake)
    got = generate(gen_prompts, model=tiny_causal, max_new_tokens=6, batch_size="auto", progress=False)
    assert got.column("continuation").to_pylist() == ref.column("continuation").to_pylist()
    assert seen == [7, 3] + [1] * 7  # halves on each out-of-memory (7 -> 3 -> 1), then all prompts run at 1
    assert any("out of memory with batch size 7" in r.getMessage() for r in caplog.records)
    with pytest.raises(BiaskitError) as e:  # a fixed batch size does not silently change
        generate(gen_prompts, model=tiny_causal, max_new_tokens=6, batch_size=4, progress=False)
    assert e.value.code == "E062" and "out of memory" in str(e.value)


def test_empty_and_null_prompts_get_row_errors(tiny_causal):
    p = pa.table({"prompt_id": ["a", "b", "c", "d"], "text": ["", None, "   ", "Programmers "]})
    t = generate(p, model=tiny_causal, max_new_tokens=3, do_sample=True, num_return_sequences=2, progress=False)
    assert t.column("prompt_id").to_pylist() == ["a", "a", "b", "b", "c", "c", "d", "d"]
    assert t.column("error").to_pylist()[:6] == ["empty prompt text"] * 2 + ["prompt text is null"] * 2 + ["empty prompt text"] * 2
    assert t.column("continuation").to_pylist()[:6] == [None] * 6
    assert t.column("error").to_pylist()[6:] == [None, None]


def test_repetition_penalty_is_batch_invariant_and_matches_transformers(tiny_causal, gen_prompts, gen_texts):
    """CTRL-style penalty (1.2): left padding must not leak pad tokens into the penalty."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    a = generate(gen_prompts, model=tiny_causal, max_new_tokens=10, repetition_penalty=1.2, batch_size=1, progress=False)
    b = generate(gen_prompts, model=tiny_causal, max_new_tokens=10, repetition_penalty=1.2, batch_size=7, progress=False)
    assert a.column("continuation").to_pylist() == b.column("continuation").to_pylist()
    tok = AutoTokenizer.from_pretrained(tiny_causal)
    model = AutoModelForCausalLM.from_pretrained(tiny_causal).eval()
    for text, cont in zip(gen_texts, a.column("continuation").to_pylist()):
        ids = tok(text.rstrip(" "), return_tensors="pt").input_ids
        with torch.no_grad():
            out = model.generate(
                ids, attention_mask=torch.ones_like(ids), max_new_tokens=10, do_sample=False, repetition_penalty=1.2, pad_token_id=tok.eos_token_id
            )
        new = out[0, ids.shape[1] :].tolist()
        new = new[: new.index(tok.eos_token_id)] if tok.eos_token_id in new else new
        assert cont == _drop_space(text, tok.decode(new))
    plain = generate(gen_prompts, model=tiny_causal, max_new_tokens=10, batch_size=7, progress=False)
    assert plain.column("continuation").to_pylist() != a.column("continuation").to_pylist()  # the penalty did something


def test_automatic_device_and_dtype(monkeypatch):
    import torch

    from biaskit.evaluate.runners.hf import pick_device, pick_dtype

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert pick_device("auto") == "cuda" and pick_dtype("auto", "cuda") is torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert pick_dtype("auto", "cuda:1") is torch.float16
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert pick_device("auto") == "cpu" and pick_dtype("auto", "cpu") is torch.float32
    assert pick_dtype("bf16", "cpu") is torch.bfloat16
    with pytest.raises(BiaskitError) as e:
        pick_device("cuda")
    assert e.value.code == "E062" and "not available" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        pick_device("tpu")
    assert e.value.code == "E062" and "'mps'" in str(e.value)
    with pytest.raises(BiaskitError):
        pick_dtype("int8", "cpu")
