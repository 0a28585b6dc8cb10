"""Fill-mask runner: top-k order and scores equal transformers' own fill-mask pipeline."""

from __future__ import annotations

import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners import fill_mask

TEMPLATES = [
    "The woman worked as a <mask>.",
    "The man worked as a [MASK] and built houses.",
    "She is a <mask> woman who loves music.",
    "<mask> write software for computers.",
    "My neighbour is a retired [MASK] from Prague.",
]


def _pipeline(path):
    from transformers import AutoModelForMaskedLM, AutoTokenizer, pipeline

    tok = AutoTokenizer.from_pretrained(path)
    return pipeline("fill-mask", model=AutoModelForMaskedLM.from_pretrained(path), tokenizer=tok, device="cpu"), tok


@pytest.mark.parametrize("k", [5, 10])
def test_top_k_equals_the_transformers_pipeline(tiny_masked, make_prompts, k):
    pipe, tok = _pipeline(tiny_masked)
    t = fill_mask(make_prompts(TEMPLATES), model=tiny_masked, top_k=k, batch_size=2, progress=False)
    assert t.num_rows == k * len(TEMPLATES)
    rows = t.to_pylist()
    for i, tmpl in enumerate(TEMPLATES):
        ref = pipe(tmpl.replace("<mask>", tok.mask_token).replace("[MASK]", tok.mask_token), top_k=k)
        got = [r for r in rows if r["prompt_id"] == f"p{i}"]
        assert [r["rank"] for r in got] == list(range(1, k + 1))
        assert [r["sample_index"] for r in got] == list(range(k))
        assert [r["token"] for r in got] == [p["token_str"].strip() for p in ref]
        assert [r["token_score"] for r in got] == pytest.approx([p["score"] for p in ref], abs=1e-6)
        assert all(r["error"] is None and r["kind"] == "fill_mask" for r in got)
    # the filled template: the slot replaced by the predicted word
    first = rows[0]
    assert first["full_text"] == TEMPLATES[0].replace("<mask>", first["token"])


def test_prompts_without_or_with_two_masks_get_row_errors(tiny_masked, make_prompts):
    t = fill_mask(
        make_prompts(["no slot here.", "<mask> and <mask>.", "a [MASK] or <mask>", "The woman worked as a <mask>."]),
        model=tiny_masked,
        top_k=3,
        progress=False,
    )
    by = {}
    for r in t.to_pylist():
        by.setdefault(r["prompt_id"], []).append(r)
    assert [len(by[f"p{i}"]) for i in range(4)] == [1, 1, 1, 3]
    assert by["p0"][0]["error"].startswith("no mask slot in the prompt")
    assert by["p1"][0]["error"] == "2 mask slots in the prompt; fill-mask needs exactly one"
    assert by["p2"][0]["error"] == "2 mask slots in the prompt; fill-mask needs exactly one"  # [MASK] + <mask>
    for r in by["p0"] + by["p1"]:
        assert r["token"] is None and r["token_score"] is None and r["rank"] is None


def test_whole_word_keeps_only_word_initial_alphabetic_tokens(tiny_masked, make_prompts):
    pipe, tok = _pipeline(tiny_masked)
    tmpl = "The man worked as a <mask> and built houses."
    t = fill_mask(make_prompts([tmpl]), model=tiny_masked, top_k=5, whole_word=True, progress=False)
    ref = pipe(tmpl.replace("<mask>", tok.mask_token), top_k=len(tok))  # the full ranking
    expected = [
        p for p in ref if not p["token_str"].startswith("##") and any(ch.isalpha() for ch in p["token_str"]) and p["token"] not in tok.all_special_ids
    ][:5]
    assert t.column("token").to_pylist() == [p["token_str"] for p in expected]
    assert t.column("token_score").to_pylist() == pytest.approx([p["score"] for p in expected], abs=1e-6)  # unrenormalised
    assert not any(w.startswith("##") for w in t.column("token").to_pylist())


def test_causal_model_is_refused(tiny_causal, make_prompts):
    with pytest.raises(BiaskitError) as e:
        fill_mask(make_prompts(["a <mask>"]), model=tiny_causal)
    assert e.value.code == "E060" and "masked" in str(e.value)


def test_top_k_must_be_positive(tiny_masked, make_prompts):
    with pytest.raises(BiaskitError) as e:
        fill_mask(make_prompts(["a <mask>"]), model=tiny_masked, top_k=0)
    assert e.value.code == "E062"


def test_translated_mask_spellings_are_normalised(tiny_masked, make_prompts):
    t = fill_mask(make_prompts(["Ta žena pracuje jako <maska>.", "Ten muž je ‹mas>."]), model=tiny_masked, top_k=2, whole_word=True, progress=False)
    rows = t.to_pylist()
    assert [r["prompt_id"] for r in rows] == ["p0", "p0", "p1"]
    assert rows[0]["error"] is None and rows[0]["full_text"] == f"Ta žena pracuje jako {rows[0]['token']}."
    assert "'‹mas>' which looks like a damaged mask" in rows[2]["error"]


def test_long_templates_are_cut_from_the_left(tiny_masked, make_prompts):
    pipe, tok = _pipeline(tiny_masked)
    filler = "the doctor said that the patient was doing well. " * 8
    t = fill_mask(
        make_prompts([filler + "The woman worked as a <mask>.", "The woman worked as a <mask>. " + filler]),
        model=tiny_masked,
        top_k=3,
        progress=False,
    )
    rows = t.to_pylist()
    assert [r["truncated"] for r in rows] == [True, True, True, True]
    assert rows[-1]["error"] == "the mask slot falls outside the model context once the template is cut from the left"
    import torch

    ids = tok(filler + "The woman worked as a " + tok.mask_token + ".").input_ids
    kept = [ids[0]] + ids[len(ids) - 63 :]  # [CLS] + the last 63 tokens: the 64-token context
    model = pipe.model
    with torch.no_grad():
        probs = torch.softmax(model(torch.tensor([kept])).logits[0, kept.index(tok.mask_token_id)], -1)
    top = probs.topk(3)
    assert [r["token"] for r in rows[:3]] == [tok.decode([i]).strip() for i in top.indices.tolist()]
    assert [r["token_score"] for r in rows[:3]] == pytest.approx(top.values.tolist(), abs=1e-5)


def test_targets_give_only_target_rows_even_when_top_k_is_larger(tiny_masked, make_prompts):
    # with 2 targets and top_k=10, the 8 best non-target tokens used to come back too: the "fewer candidates
    # than k" check read the unmasked probabilities, which are never negative
    pipe, tok = _pipeline(tiny_masked)
    words = [w for w in ("man", "woman", "nurse", "doctor", "houses", "worked") if w in tok.get_vocab()][:2]
    assert len(words) == 2
    tmpl = "The man worked as a <mask> and built houses."
    t = fill_mask(make_prompts([tmpl]), model=tiny_masked, top_k=10, targets=words, progress=False)
    ref = pipe(tmpl.replace("<mask>", tok.mask_token), targets=words, top_k=2)
    assert t.num_rows == 2 and sorted(t.column("token").to_pylist()) == sorted(words)
    assert t.column("token").to_pylist() == [p["token_str"] for p in ref]
    assert t.column("token_score").to_pylist() == pytest.approx([p["score"] for p in ref], abs=1e-6)
    assert t.column("rank").to_pylist() == [1, 2]
