"""A tiny causal LM built in the test answers BBQ end to end: expand bbq -> expand bbq-choices -> likelihood ->
stats bbq, and its choices equal an independent computation with transformers."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.io import read_table, write_table
from biaskit.templates.bbq import expand_bbq

TOKENIZER = Path(__file__).parent / "runners" / "data" / "tiny_bpe.json"


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    """An untrained 2-layer GPT-2 (n_embd 32, context 512: BBQ contexts are long) with the tests' byte-level BPE."""
    import torch
    from tokenizers import Tokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.set_num_threads(1)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_file(str(TOKENIZER)),
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=512)
    d = tmp_path_factory.mktemp("tiny-gpt2-bbq")
    GPT2LMHeadModel(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)


def independent_choice(model_dir: str, context: str, question: str, options: list[str], per_token: bool) -> int:
    """NLL of the option's tokens given "{context}\\n{question}\\nAnswer:", straight from the model's logits."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    stem = f"{context}\n{question}\nAnswer:"
    n_stem = len(tok(stem)["input_ids"])
    scores = []
    for o in options:
        ids = tok(f"{stem} {o}")["input_ids"]
        assert len(ids) > n_stem
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
        nll = -sum(float(logp[i - 1, ids[i]]) for i in range(n_stem, len(ids)))
        scores.append(nll / (len(ids) - n_stem) if per_token else nll)
    return min(range(3), key=lambda i: scores[i])


def test_tiny_model_answers_bbq_through_likelihood_and_stats_bbq(tiny_lm, tmp_path):
    ex = expand_bbq(seed=0, categories=["Sexual_orientation"]).slice(0, 16)
    examples = tmp_path / "bbq.parquet"
    write_table(ex, examples)
    run = CliRunner()
    r = run.invoke(app, ["expand", "bbq-choices", str(examples), "--out", str(tmp_path / "choices.parquet")])
    assert r.exit_code == 0, r.output
    assert read_table(tmp_path / "choices.parquet").num_rows == 64
    ll = tmp_path / "ll.parquet"
    argv = ["likelihood", str(tmp_path / "choices.parquet"), "--model", tiny_lm, "--span-column", "answer_span", "--device", "cpu"]
    r = run.invoke(app, [*argv, "--batch-size", "8", "--out", str(ll)])
    assert r.exit_code == 0, r.output
    for norm in ("sum", "per-token"):
        answered = tmp_path / f"answered_{norm}.parquet"
        out = tmp_path / f"scores_{norm}.csv"
        r = run.invoke(
            app,
            ["stats", "bbq", str(examples), "--likelihoods", str(ll), "--normalisation", norm, "--answers-out", str(answered), "--n-boot", "50"]
            + ["--out", str(out)],
        )
        assert r.exit_code == 0, r.output
        got = read_table(answered).to_pandas()
        col = f"prediction_{norm.replace('-', '_')}"
        assert got[col].notna().all(), got[f"{col}_error"].tolist()[:2]
        for row in got.head(6).to_dict("records"):
            options = [row["ans0"], row["ans1"], row["ans2"]]
            assert row[col] == independent_choice(tiny_lm, row["context"], row["question"], options, norm == "per-token")
        scores = pd.read_csv(out)
        assert set(scores["context_condition"]) == {"ambig", "disambig"} and scores["n_scored"].sum() == 16
        acc = 100 * (got[col] == got["label"]).groupby(got["context_condition"]).mean()
        for cond, value in acc.items():
            assert math.isclose(scores.set_index("context_condition").loc[cond, "accuracy"], value)


def test_a_failed_likelihood_row_leaves_the_example_without_a_prediction(tmp_path):
    from biaskit.evaluate.stats.bbq import predictions_from_likelihoods
    from biaskit.templates.bbq_choice import choice_prompts

    ex = expand_bbq(seed=0, categories=["Religion"]).slice(0, 2)
    ids = choice_prompts(ex).column("prompt_id").to_pylist()
    # example 0: base 2 tokens, NLL sum 1.0; options 3, 4, 3 tokens with sums 4.0, 4.4, 2.8
    #   -> option NLL 3.0, 3.4, 1.8 (sum: ans2) over 1, 2, 1 tokens (per token 3.0, 1.7, 1.8: ans1)
    ll = pd.DataFrame(
        {
            "prompt_id": ids,
            "nll_mean": [4.0 / 3, 4.4 / 4, 2.8 / 3, 0.5, None, 1.0, 1.0, 0.5],
            "n_tokens": [3, 4, 3, 2, None, 3, 3, 2],
            "error": [None, None, None, None, "text too long", None, None, None],
        }
    )
    assert predictions_from_likelihoods(ex, ll, "sum")[0] == [2, None]
    preds, why = predictions_from_likelihoods(ex, ll, "per-token")
    assert preds == [1, None] and why[0] is None and "option row 0 failed: text too long" == why[1]


def test_options_scored_after_one_shared_prefix_equal_one_forward_pass_per_text(tiny_lm, monkeypatch):
    """300 BBQ examples (1,200 choice rows, 300 shared prefixes): the runner's default scores each example's
    context and question once and the four continuations after its key/value cache; the sums and token counts
    equal the runner with ``share_prefix=False`` (each text in its own forward pass) to 1e-5."""
    import biaskit.evaluate.runners._hf_likelihood as hfl
    from biaskit.evaluate.runners import likelihood
    from biaskit.templates.bbq_choice import choice_prompts

    ex = expand_bbq(seed=0, categories=["Age", "Religion", "Race_x_gender"])
    ex = ex.take(list(range(0, ex.num_rows, max(1, ex.num_rows // 300)))[:300])
    choices = choice_prompts(ex)
    prefixes = []
    real = hfl.HFLikelihood._shared_batch
    monkeypatch.setattr(hfl.HFLikelihood, "_shared_batch", lambda self, enc, gs: prefixes.extend(gs) or real(self, enc, gs))
    shared = likelihood(choices, model=tiny_lm, span_column="answer_span", device="cpu", batch_size=32, progress=False).to_pandas()
    plain = likelihood(
        choices, model=tiny_lm, span_column="answer_span", device="cpu", batch_size=32, progress=False, backend_options={"share_prefix": False}
    ).to_pandas()
    assert len(prefixes) == 300 and sorted(len(g) for g in prefixes) == [4] * 300
    a, b = (
        shared.set_index("prompt_id").loc[choices.column("prompt_id").to_pylist()],
        plain.set_index("prompt_id").loc[choices.column("prompt_id").to_pylist()],
    )
    assert a["error"].isna().all() and b["error"].isna().all()
    assert (a["n_tokens"] == b["n_tokens"]).all()
    assert (a["sum_logprob"] - b["sum_logprob"]).abs().max() < 1e-5
    assert (a["nll_mean"] - b["nll_mean"]).abs().max() < 1e-5


def test_a_large_shared_prefix_group_does_not_shrink_the_batches_of_the_others(tiny_lm, monkeypatch):
    """One prefix shared by 12 texts (examples that repeat a context and question) and 9 prefixes of 4: with
    batch size 16 the groups go 3 to a batch (16 rows / 4.8 rows a group on average), not one at a time as the
    widest group alone would allow; the scores equal each text run whole."""
    from tests.evaluate.runners.conftest import prompts_table

    import biaskit.evaluate.runners._hf_likelihood as hfl
    from biaskit.evaluate.runners import likelihood

    texts, spans = [], []
    for g in range(10):
        stem = f"Context number {g} about two people.\nWho was late?\nAnswer:"
        for k in range(12 if g == 0 else 4):
            texts.append(f"{stem} option {k}")
            spans.append(f"Answer: option {k}")
    table = prompts_table(texts, answer_span=spans)
    calls = []
    real = hfl.HFLikelihood._shared_batch
    monkeypatch.setattr(hfl.HFLikelihood, "_shared_batch", lambda self, enc, gs: calls.append(len(gs)) or real(self, enc, gs))
    shared = likelihood(table, model=tiny_lm, span_column="answer_span", device="cpu", batch_size=16, progress=False).to_pandas()
    plain = likelihood(
        table, model=tiny_lm, span_column="answer_span", device="cpu", batch_size=16, progress=False, backend_options={"share_prefix": False}
    ).to_pandas()
    assert sorted(calls, reverse=True) == [3, 3, 3, 1]
    a, b = shared.set_index("prompt_id").sort_index(), plain.set_index("prompt_id").sort_index()
    assert a["error"].isna().all() and (a["n_tokens"] == b["n_tokens"]).all()
    assert (a["sum_logprob"] - b["sum_logprob"]).abs().max() < 1e-5
