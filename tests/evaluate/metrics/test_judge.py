"""The judge metric on tiny chat models built in the test session (tests/evaluate/metrics/conftest.py).

Reference computations are made here with transformers directly: the recorded rendered prompt, tokenised
without special tokens, one forward pass, the log-softmax of the next token, the label tokens picked out and
renormalised.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import score_table

TEXTS = [
    "She is a wonderful and kind doctor who helps everyone.",
    "He was a terrible criminal and a thief.",
    "The engineer fixed the bridge in the morning.",
    "You are an idiot.",
    "They went to the market to buy fresh bread and milk, and then they walked home slowly along the river.",
]


def _reference(model_dir: str, prompt: str, labels: list[str], mode: str = "first") -> np.ndarray:
    """The restricted distribution straight from transformers (no biaskit code)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    ids = tok(prompt, add_special_tokens=False)["input_ids"]
    lab_ids = [tok(lab, add_special_tokens=False)["input_ids"] for lab in labels]
    with torch.no_grad():
        if mode == "first":
            lsm = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].double(), -1)
            lp = np.array([lsm[x[0]].item() for x in lab_ids])
        else:
            lp = []
            for x in lab_ids:
                full = torch.log_softmax(model(torch.tensor([ids + x])).logits[0].double(), -1)
                lp.append(sum(full[len(ids) - 1 + t, x[t]].item() for t in range(len(x))))
            lp = np.array(lp)
    p = np.exp(lp - lp.max())
    return p / p.sum()


def _table(texts=TEXTS, **extra):
    return pa.table({"continuation": list(texts), **extra})


def test_probabilities_equal_a_direct_transformers_computation_and_sum_to_one(tiny_judge):
    out = score_table(_table(), "judge", params={"judge": {"model": tiny_judge, "orders": 1}}, progress=False)
    labels = ["positive", "neutral", "negative"]
    for r in out.to_pylist():
        assert r["judge_error"] is None
        assert r["judge_prompt"].endswith("assistant:") and "Text: " in r["judge_prompt"]
        ref = _reference(tiny_judge, r["judge_prompt"], labels)
        got = np.array([r[f"judge_p_{lab}"] for lab in labels])
        np.testing.assert_allclose(got, ref, atol=1e-5, rtol=0)
        assert abs(got.sum() - 1.0) < 1e-12
        assert r["judge_label"] == labels[int(np.argmax(ref))]
        # ordinal score: expected position of negative, neutral, positive on -1, 0, 1
        assert r["judge_score"] == pytest.approx(got[0] - got[2], abs=1e-12)
        assert "judge_flip" not in r and "judge_retest" not in r and "judge_prompt_flip" not in r  # not measured: no column
        assert len(r["judge_prompt_sha256"]) == 64
        assert r["judge_tokens_in"] == len(_tok(tiny_judge)(r["judge_prompt"], add_special_tokens=False)["input_ids"])
        assert r["judge_tokens_out"] == 1


def _tok(model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir)


def test_summed_label_scoring_equals_transformers_for_multi_token_labels(tiny_judge):
    # stance labels that share their first token in the tiny BPE ("no" / "not sure"): only summing tells them apart
    task = "stance:no,not sure,yes"
    with pytest.raises(BiaskitError) as e:
        score_table(_table(TEXTS[:1]), "judge", params={"judge": {"model": tiny_judge, "task": task}}, progress=False)
    assert e.value.code == "E323" and "label_scoring=sum" in str(e.value)
    out = score_table(_table(), "judge", params={"judge": {"model": tiny_judge, "task": task, "label_scoring": "sum", "orders": 1}}, progress=False)
    labels = ["no", "not sure", "yes"]
    for r in out.to_pylist():
        ref = _reference(tiny_judge, r["judge_prompt"], labels, mode="sum")
        got = np.array([r[f"judge_p_{lab}"] for lab in labels])
        np.testing.assert_allclose(got, ref, atol=1e-5, rtol=0)
        assert abs(got.sum() - 1.0) < 1e-12
        assert "judge_score" not in out.column_names  # a stance task has no ordinal scale


def test_batch_size_one_and_many_agree(tiny_judge):
    cols = [f"judge_p_{lab}" for lab in ("positive", "neutral", "negative")]
    outs = []
    for bs in (1, 4):
        for mode in ("first", "sum"):
            t = score_table(
                _table(), "judge", params={"judge": {"model": tiny_judge, "batch_size": bs, "label_scoring": mode, "orders": 1}}, progress=False
            )
            outs.append((bs, mode, np.array([t.column(c).to_pylist() for c in cols])))
    for mode in ("first", "sum"):
        a, b = [x for bs, m, x in outs if m == mode]
        assert np.max(np.abs(a - b)) < 1e-4


def test_unicode_labels_are_nfc_and_get_their_own_columns(tiny_judge):
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "možná")
    out = score_table(_table(TEXTS[:3]), "judge", params={"judge": {"model": tiny_judge, "task": f"stance:ano,ne,{decomposed}"}}, progress=False)
    assert "judge_p_možná" in out.column_names  # composed (NFC) form
    for r in out.to_pylist():
        s = r["judge_p_ano"] + r["judge_p_ne"] + r["judge_p_možná"]
        assert abs(s - 1.0) < 1e-12 and r["judge_label"] in ("ano", "ne", "možná")
        assert "ano, ne, možná" in r["judge_prompt"]


def test_an_order_sensitive_judge_is_flagged_by_judge_flip(first_pick_judge):
    model, task = first_pick_judge
    texts = ["The woman worked as a nurse", "It rained all day", "My neighbour likes books"]
    one = score_table(_table(texts), "judge", params={"judge": {"model": model, "task": task, "orders": 1}}, progress=False)
    # with one order the rigged judge looks confident: it says the first listed label, "yes"
    assert one.column("judge_label").to_pylist() == ["yes"] * 3
    assert min(one.column("judge_p_yes").to_pylist()) > 0.75
    two = score_table(_table(texts), "judge", params={"judge": {"model": model, "task": task, "orders": 2}}, progress=False)
    assert two.column("judge_flip").to_pylist() == [True] * 3
    # averaged over the two orders, its probabilities are near 1/2: it has no opinion of the text
    for r in two.to_pylist():
        assert abs(r["judge_p_yes"] - 0.5) < 0.1
        assert abs(r["judge_p_yes"] + r["judge_p_no"] - 1) < 1e-12


def test_orders_average_the_per_order_distributions(tiny_judge):
    from biaskit.evaluate.metrics.judge_tasks import load_task

    labels = ["positive", "neutral", "negative"]
    t = score_table(_table(TEXTS[:2]), "judge", params={"judge": {"model": tiny_judge, "orders": 2, "record_prompt": True}}, progress=False)
    task = load_task("sentiment")
    tok = _tok(tiny_judge)
    for r, text in zip(t.to_pylist(), TEXTS[:2]):
        per = []
        for order in (tuple(labels), tuple(reversed(labels))):
            prompt = tok.apply_chat_template(task.messages(text, order), tokenize=False, add_generation_prompt=True)
            per.append(_reference(tiny_judge, prompt, labels))
        mean = np.mean(per, axis=0)
        np.testing.assert_allclose([r[f"judge_p_{lab}"] for lab in labels], mean, atol=1e-5, rtol=0)
        assert r["judge_flip"] == (int(np.argmax(per[0])) != int(np.argmax(per[1])))


def test_repeats_give_test_retest_and_instructions_give_prompt_sensitivity(tiny_judge, tmp_path):
    from importlib.resources import files

    para = str(files("biaskit") / "data" / "judge" / "sentiment_paraphrase.yaml")
    params = {"model": tiny_judge, "repeats": 3, "temperature": 1.0, "instructions": para, "seed": 3}
    a = score_table(_table(), "judge", params={"judge": params}, progress=False)
    b = score_table(_table(), "judge", params={"judge": {**params, "batch_size": 1}}, progress=False)
    assert a.column("judge_retest").to_pylist() == b.column("judge_retest").to_pylist()  # seeded per text
    assert set(a.column("judge_retest").to_pylist()) <= {True, False}
    assert set(a.column("judge_prompt_flip").to_pylist()) <= {True, False}
    # a random tiny model is unsure: at temperature 1 over its whole vocabulary, 3 draws rarely agree on a label
    assert a.column("judge_retest").to_pylist().count(True) < 5
    # the paraphrase changes the prompt hash
    c = score_table(_table(), "judge", params={"judge": {"model": tiny_judge}}, progress=False)
    assert a.column("judge_prompt_sha256")[0].as_py() != c.column("judge_prompt_sha256")[0].as_py()


def test_a_shipped_instruction_is_named_without_its_path_and_an_unknown_one_lists_them():
    from importlib.resources import files

    from biaskit.evaluate.metrics.judge_tasks import load_instruction, load_task

    task = load_task("sentiment")
    by_name = load_instruction("sentiment_paraphrase", task)
    by_path = load_instruction(str(files("biaskit") / "data" / "judge" / "sentiment_paraphrase.yaml"), task)
    assert by_name.canonical() == by_path.canonical() and by_name.instruction != task.instruction
    with pytest.raises(BiaskitError) as e:
        load_instruction("my_paraphrase.yaml", task)
    assert e.value.code == "E320" and "sentiment_paraphrase" in str(e.value)


def test_a_model_without_a_chat_template_and_bad_parameters_are_coded_errors(tiny_judge, tmp_path):
    import shutil

    d = tmp_path / "no-template"
    shutil.copytree(tiny_judge, d)
    import json

    cfg = json.loads((d / "tokenizer_config.json").read_text())
    cfg.pop("chat_template", None)
    (d / "tokenizer_config.json").write_text(json.dumps(cfg))
    if (d / "chat_template.jinja").exists():
        (d / "chat_template.jinja").unlink()
    with pytest.raises(BiaskitError) as e:
        score_table(_table(TEXTS[:1]), "judge", params={"judge": {"model": str(d)}}, progress=False)
    assert e.value.code == "E322"
    for params, code in (
        ({"task": "nonsense"}, "E320"),
        ({"task": "stance:yes"}, "E320"),
        ({"task": "stance:a,a"}, "E320"),
        ({"orders": 7}, "E321"),
        ({"repeats": 1}, "E324"),
        ({"backend": "openai", "label_scoring": "sum"}, "E324"),
    ):
        with pytest.raises(BiaskitError) as e:
            score_table(_table(TEXTS[:1]), "judge", params={"judge": {"model": tiny_judge, **params}}, progress=False)
        assert e.value.code == code, params
    bad = tmp_path / "bad.yaml"
    bad.write_text("labels: [a, b]\ninstruction: no placeholders\n")
    with pytest.raises(BiaskitError) as e:
        score_table(_table(TEXTS[:1]), "judge", params={"judge": {"model": tiny_judge, "task": str(bad)}}, progress=False)
    assert e.value.code == "E320" and "{text}" in str(e.value)


def test_empty_and_too_long_texts_get_null_and_an_error(tiny_judge):
    out = score_table(_table(["", "fine text", "word " * 600]), "judge", params={"judge": {"model": tiny_judge}}, progress=False).to_pylist()
    assert out[0]["judge_label"] is None and out[0]["judge_error"] == "empty text"
    assert out[1]["judge_error"] is None
    assert out[2]["judge_label"] is None and out[2]["judge_p_positive"] is None and "context" in out[2]["judge_error"]
    assert not any(math.isnan(v) for r in out if r["judge_p_positive"] is not None for v in [r["judge_p_positive"]])
