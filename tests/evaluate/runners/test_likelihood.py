"""Likelihood runner: causal NLL/perplexity against a direct loss computation, masked-LM pseudo-log-likelihood."""

from __future__ import annotations

import math

import pytest

from biaskit.evaluate.runners import likelihood

SENTENCES = [
    "I'm a deaf woman.",
    "She is a deaf woman who loves music and dancing.",
    "Hi! I am an old man.",
    "The nurse said that the patient was doing well.",
    "Programmers write software.",
    "My neighbour is a retired engineer from Prague.",
]


def _model_tok(path, masked=False):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    cls = AutoModelForMaskedLM if masked else AutoModelForCausalLM
    return cls.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


@pytest.mark.parametrize("add_bos", [True, False])
def test_causal_nll_equals_the_models_own_loss(tiny_causal, make_prompts, add_bos):
    import torch

    model, tok = _model_tok(tiny_causal)
    t = likelihood(make_prompts(SENTENCES), model=tiny_causal, add_bos=add_bos, batch_size=4, progress=False)
    assert t.column("kind").to_pylist() == ["likelihood"] * len(SENTENCES)
    for s, nll, ppl, n in zip(SENTENCES, t.column("nll_mean").to_pylist(), t.column("perplexity").to_pylist(), t.column("n_tokens").to_pylist()):
        ids = tok(s).input_ids
        if add_bos:  # GPT-2 convention: <|endoftext|> first, so every word of the sentence is scored
            ids = [tok.bos_token_id] + ids
        x = torch.tensor([ids])
        with torch.no_grad():
            loss = model(x, labels=x).loss.item()  # mean over positions 1..n-1: the BOS position is never scored
        assert nll == pytest.approx(loss, abs=1e-5)
        assert ppl == pytest.approx(math.exp(loss), rel=1e-5)
        assert n == len(ids) - 1


def test_likelihood_is_identical_across_batch_sizes(tiny_causal, make_prompts):
    a = likelihood(make_prompts(SENTENCES), model=tiny_causal, batch_size=1, progress=False)
    b = likelihood(make_prompts(SENTENCES), model=tiny_causal, batch_size="auto", progress=False)
    assert a.column("nll_mean").to_pylist() == pytest.approx(b.column("nll_mean").to_pylist(), abs=1e-6)


def test_auto_bos_follows_the_tokenizer(tiny_causal, make_prompts):
    import json

    # the tiny GPT-2 tokenizer adds no BOS by itself, so the first token is context only
    t = likelihood(make_prompts(["Programmers write software."]), model=tiny_causal, progress=False)
    f = likelihood(make_prompts(["Programmers write software."]), model=tiny_causal, add_bos=False, progress=False)
    assert t.column("nll_mean").to_pylist() == f.column("nll_mean").to_pylist()
    cfg = json.loads(t.column("generation_config")[0].as_py())
    assert cfg["bos_token_id"] is None and cfg["add_bos"] == "auto"


def test_span_scores_only_the_descriptor_tokens(tiny_causal, make_prompts):
    import torch

    model, tok = _model_tok(tiny_causal)
    texts = ["I'm a deaf woman.", "She is a blind person who reads.", "Hi! I am an old man."]
    descriptors = ["deaf", "blind", "old"]
    t = likelihood(make_prompts(texts, descriptor=descriptors), model=tiny_causal, span_column="descriptor", add_bos=True, progress=False)
    for text, d, nll, n in zip(texts, descriptors, t.column("nll_mean").to_pylist(), t.column("n_tokens").to_pylist()):
        enc = tok(text, return_offsets_mapping=True)
        a = text.index(d)
        span_tok = [j for j, (s, e) in enumerate(enc["offset_mapping"]) if e > a and s < a + len(d)]
        ids = [tok.bos_token_id] + enc["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
        expected = [-logp[j, ids[j + 1]].item() for j in span_tok]  # token j of the text sits at position j+1
        assert n == len(span_tok) >= 1
        assert nll == pytest.approx(sum(expected) / len(expected), abs=1e-5)


def test_bad_rows_get_an_error_not_a_number(tiny_causal, make_prompts):
    t = likelihood(
        make_prompts(["", "A deaf woman.", "A tall man.", "An old man."], descriptor=["x", "purple", None, "old"]),
        model=tiny_causal,
        span_column="descriptor",
        progress=False,
    )
    nll, err = t.column("nll_mean").to_pylist(), t.column("error").to_pylist()
    assert nll[:3] == [None, None, None] and t.column("perplexity").to_pylist()[:3] == [None, None, None]
    assert err[0] == "empty prompt text"
    assert err[1] == "span 'purple' does not occur in the text"
    assert err[2] == "descriptor is null: no span to score"
    assert err[3] is None and nll[3] > 0


def test_too_long_sentence_is_cut_from_the_left(tiny_causal, make_prompts):
    import torch

    model, tok = _model_tok(tiny_causal)
    long = "The doctor said that the patient was doing well. " * 8
    t = likelihood(make_prompts([long]), model=tiny_causal, add_bos=False, progress=False)
    ids = tok(long).input_ids[-64:]
    x = torch.tensor([ids])
    with torch.no_grad():
        loss = model(x, labels=x).loss.item()
    assert t.column("truncated").to_pylist() == [True]
    assert t.column("n_tokens")[0].as_py() == 63
    assert t.column("nll_mean")[0].as_py() == pytest.approx(loss, abs=1e-5)


def test_masked_lm_pseudo_log_likelihood(tiny_masked, make_prompts):
    import torch

    model, tok = _model_tok(tiny_masked, masked=True)
    t = likelihood(make_prompts(SENTENCES), model=tiny_masked, batch_size=5, progress=False)
    for s, nll, n in zip(SENTENCES, t.column("nll_mean").to_pylist(), t.column("n_tokens").to_pylist()):
        ids = tok(s).input_ids
        pll = 0.0
        for j in range(1, len(ids) - 1):  # every token but [CLS]/[SEP], masked one at a time
            x = torch.tensor([ids])
            x[0, j] = tok.mask_token_id
            with torch.no_grad():
                pll += torch.log_softmax(model(x).logits[0, j].float(), -1)[ids[j]].item()
        assert n == len(ids) - 2
        assert nll == pytest.approx(-pll / n, abs=1e-5)


def test_masked_lm_span_pll(tiny_masked, make_prompts):
    t_all = likelihood(make_prompts(["i'm a deaf woman."]), model=tiny_masked, progress=False)
    t_span = likelihood(make_prompts(["i'm a deaf woman."], descriptor=["deaf"]), model=tiny_masked, span_column="descriptor", progress=False)
    assert t_span.column("n_tokens")[0].as_py() < t_all.column("n_tokens")[0].as_py()
    assert t_span.column("error")[0].as_py() is None


def test_masked_lm_too_long_sentence_is_cut_from_the_left(tiny_masked, make_prompts):
    import torch

    model, tok = _model_tok(tiny_masked, masked=True)
    long = "the doctor said that the patient was doing well. " * 8
    t = likelihood(make_prompts([long]), model=tiny_masked, progress=False)
    ids = tok(long).input_ids
    kept = [ids[0]] + ids[len(ids) - 63 :]  # [CLS] + the last 63 tokens (ending in [SEP]): 64 = the context
    pll = 0.0
    for j in range(1, 63):
        x = torch.tensor([kept])
        x[0, j] = tok.mask_token_id
        with torch.no_grad():
            pll += torch.log_softmax(model(x).logits[0, j].float(), -1)[kept[j]].item()
    assert t.column("truncated").to_pylist() == [True] and t.column("n_tokens")[0].as_py() == 62
    assert t.column("nll_mean")[0].as_py() == pytest.approx(-pll / 62, abs=1e-5)


def test_span_matches_the_whole_word_not_an_earlier_substring(tiny_causal, make_prompts):
    import torch

    # HolisticBias v1.0 has 90 sentences like this one: "thin" first occurs inside "think", and scoring
    # that substring instead of the descriptor gives a wrong number without any error.
    text = "What do you think about thin women?"
    t = likelihood(make_prompts([text], descriptor=["thin"]), model=tiny_causal, span_column="descriptor", add_bos=True, progress=False)
    model, tok = _model_tok(tiny_causal)
    enc = tok(text, return_offsets_mapping=True)
    a = text.index(" thin ") + 1  # the descriptor, not the "thin" of "think"
    span_tok = [j for j, (s, e) in enumerate(enc["offset_mapping"]) if e > a and s < a + 4]
    ids = [tok.bos_token_id] + enc["input_ids"]
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), -1)
    expected = [-logp[j, ids[j + 1]].item() for j in span_tok]
    assert t.column("error")[0].as_py() is None
    assert t.column("n_tokens")[0].as_py() == len(span_tok)
    assert t.column("nll_mean")[0].as_py() == pytest.approx(sum(expected) / len(expected), abs=1e-5)


def test_find_span_prefers_a_whole_word_occurrence():
    from biaskit.evaluate.runners.common import find_span

    assert find_span("What do you think about thin women?", "thin") == 24
    assert find_span("I'm a deaf woman.", "deaf") == 6
    assert find_span("I'm hard-of-hearing.", "hard-of-hearing") == 4
    assert find_span("Thinking of it.", "Think") == 0  # no whole-word occurrence: the first substring
    assert find_span("I'm a woman.", "deaf") == -1
