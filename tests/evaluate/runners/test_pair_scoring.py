"""Paired scoring of a pairs table: `sum_logprob` of a causal LM (lm-eval's crows_pairs comparison) and the
CrowS-Pairs score of a masked LM (pseudo-log-likelihood of the tokens the two variants share), both against a
direct computation with transformers on tiny models built in the test session (tests/evaluate/runners/conftest.py)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from biaskit.evaluate.runners import likelihood
from biaskit.evaluate.stats.pairs import pair_stats

PAIRS = [
    ("She is a deaf woman who loves music.", "He is a deaf man who loves music."),
    ("The nurse said that the patient was doing well.", "The doctor said that the patient was doing well."),
]


def _pairs_table(pairs=PAIRS) -> pa.Table:
    rows = []
    for i, (more, less) in enumerate(pairs):
        for v, text in (("more", more), ("less", less)):
            rows.append(
                {"prompt_id": f"c{i}-{v}", "pair_id": f"c{i}", "variant": v, "text": text, "source": "test", "language": "en", "bias_type": "gender"}
            )
    return pa.Table.from_pylist(rows)


def _causal_sum_logprob(model, tok, text: str) -> float:
    """Sum of log p(token | the tokens before it) over every token after the first (the tiny GPT-2 tokenizer adds no
    BOS, so the first token is context only), straight from the model's logits."""
    import torch

    ids = tok(text).input_ids
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), -1)
    return sum(logp[j - 1, ids[j]].item() for j in range(1, len(ids)))


def test_causal_sum_logprob_and_stats_pairs_equal_a_direct_transformers_computation(tiny_causal):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model, tok = AutoModelForCausalLM.from_pretrained(tiny_causal).eval(), AutoTokenizer.from_pretrained(tiny_causal)
    t = likelihood(_pairs_table(), model=tiny_causal, batch_size=2, progress=False)
    got = dict(zip(t.column("prompt_id").to_pylist(), t.column("sum_logprob").to_pylist()))
    direct = {f"c{i}-{v}": _causal_sum_logprob(model, tok, text) for i, p in enumerate(PAIRS) for v, text in zip(("more", "less"), p)}
    assert got == pytest.approx(direct, abs=1e-4)
    # sum = -(mean NLL x scored tokens)
    for s, nll, n in zip(t.column("sum_logprob").to_pylist(), t.column("nll_mean").to_pylist(), t.column("n_tokens").to_pylist()):
        assert s == pytest.approx(-nll * n, rel=1e-12)
    res = pair_stats(t, "sum_logprob", by="bias_type").set_index("bias_type").loc["all"]
    higher = sum(direct[f"c{i}-more"] > direct[f"c{i}-less"] for i in range(len(PAIRS)))
    assert (res.n_pairs, res.n_higher, res.n_ties) == (2, higher, 0)
    assert json.loads(t.column("generation_config")[0].as_py())["scored"] == "all tokens but the first (context only)"


def _masked_pll(model, tok, text: str, positions: list[int]) -> float:
    """Sum over ``positions`` of log p(token) with that one token masked, the rest of the sentence given."""
    import torch

    ids = tok(text).input_ids
    total = 0.0
    for p in positions:
        x = list(ids)
        x[p] = tok.mask_token_id
        with torch.no_grad():
            logits = model(torch.tensor([x])).logits[0, p].double()
        total += torch.log_softmax(logits, -1)[ids[p]].item()
    return total


def test_masked_lm_pair_score_is_the_pseudo_log_likelihood_of_the_shared_tokens_only(tiny_masked):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model, tok = AutoModelForMaskedLM.from_pretrained(tiny_masked).eval(), AutoTokenizer.from_pretrained(tiny_masked)
    t = likelihood(_pairs_table(), model=tiny_masked, batch_size=3, progress=False)
    got = {pid: (s, n) for pid, s, n in zip(t.column("prompt_id").to_pylist(), t.column("sum_logprob").to_pylist(), t.column("n_tokens").to_pylist())}
    for i, (more, less) in enumerate(PAIRS):
        # by hand: [CLS] and [SEP] are never scored; the words that differ (she/he, woman/man; nurse/doctor) are given,
        # every other token of the sentence is masked in turn
        differ = {0: ({"she", "woman"}, {"he", "man"}), 1: ({"nurse"}, {"doctor"})}[i]
        for v, text, words in (("more", more, differ[0]), ("less", less, differ[1])):
            toks = tok.convert_ids_to_tokens(tok(text).input_ids)
            keep = [j for j, w in enumerate(toks) if w not in ("[CLS]", "[SEP]") and w.lower() not in words]
            # the hand list holds whole words here: none of the differing words is split into pieces
            assert all(w.lower().lstrip("#") not in words for j, w in enumerate(toks) if j in keep)
            s, n = got[f"c{i}-{v}"]
            assert n == len(keep)
            assert s == pytest.approx(_masked_pll(model, tok, text, keep), abs=1e-4)
    cfg = json.loads(t.column("generation_config")[0].as_py())
    assert "shared with the pair's other variant" in cfg["scored"]


def test_masked_lm_on_a_table_without_pairs_scores_every_token(tiny_masked):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    model, tok = AutoModelForMaskedLM.from_pretrained(tiny_masked).eval(), AutoTokenizer.from_pretrained(tiny_masked)
    text = PAIRS[0][0]
    t = likelihood(_pairs_table().drop_columns(["pair_id"]).slice(0, 1), model=tiny_masked, progress=False)
    n_all = len(tok(text).input_ids) - 2
    assert t.column("n_tokens").to_pylist() == [n_all]
    assert t.column("sum_logprob")[0].as_py() == pytest.approx(_masked_pll(model, tok, text, list(range(1, n_all + 1))), abs=1e-4)


def test_a_masked_lm_row_whose_pair_lacks_its_partner_gets_an_error_not_a_score(tiny_masked):
    t = likelihood(_pairs_table().slice(0, 3), model=tiny_masked, progress=False)
    row = t.to_pylist()[2]
    assert row["prompt_id"] == "c1-more" and row["sum_logprob"] is None and row["nll_mean"] is None
    assert "has 1 row(s)" in row["error"]
    assert [r["error"] for r in t.to_pylist()[:2]] == [None, None]
