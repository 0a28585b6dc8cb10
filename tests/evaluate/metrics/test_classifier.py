"""Classifier metrics on tiny local models, checked against a transformers pipeline (batch size 1)."""

import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.metrics.classifier import RegardMetric, ToxicityMetric, mask_mentions

from .conftest import JIGSAW, SENTENCES

TEXTS = SENTENCES + ["short", "a much longer text that repeats itself " * 2]


def _pipeline_scores(model, texts, fn):
    from transformers import pipeline

    pipe = pipeline("text-classification", model=model, tokenizer=model, top_k=None, function_to_apply=fn, device="cpu")
    out = []
    for t in texts:
        res = pipe(t, batch_size=1)
        res = res[0] if res and isinstance(res[0], list) else res
        out.append({r["label"]: r["score"] for r in res})
    return out


def test_multilabel_toxicity_equals_pipeline_and_any_label_rule(jigsaw_model):
    ref = _pipeline_scores(jigsaw_model, TEXTS, "sigmoid")
    # per-label thresholds between two texts' scores near the 80th percentile (no ties), so some texts pass
    # no label and some pass one
    k = int(0.8 * len(ref))
    thr = {lab: sum(sorted(r[lab] for r in ref)[k - 1 : k + 1]) / 2 for lab in JIGSAW}
    spec = ",".join(f"{lab}={v!r}" for lab, v in thr.items())
    out = score_table(
        pa.table({"continuation": TEXTS}), ["toxicity"], params={"toxicity": {"model": jigsaw_model, "batch_size": 3, "threshold": spec}}
    )
    for lab in JIGSAW:
        got = out.column(f"toxicity_{lab}").to_pylist()
        assert max(abs(g - r[lab]) for g, r in zip(got, ref)) <= 1e-5
    scores = out.column("toxicity_score").to_pylist()
    assert max(abs(s - max(r.values())) for s, r in zip(scores, ref)) <= 1e-5
    # the rule is checked on the metric's own probabilities: they equal the pipeline's only within 1e-5, and the
    # fixture's tokenizer (trained in the session, vocabulary order not fixed) can put two texts' scores closer
    # than that to a threshold, which made a comparison with labels from the pipeline's numbers flaky
    mine = [{lab: out.column(f"toxicity_{lab}")[i].as_py() for lab in JIGSAW} for i in range(len(TEXTS))]
    expected = ["toxic" if any(r[lab] >= thr[lab] for lab in JIGSAW) else "non-toxic" for r in mine]
    assert out.column("toxicity_label").to_pylist() == expected
    assert len(set(expected)) == 2  # the fixture model gives both outcomes, so the rule is exercised


def test_single_label_model_uses_softmax_and_the_hate_label(hate_model):
    ref = _pipeline_scores(hate_model, TEXTS, "softmax")
    m = ToxicityMetric(model=hate_model).setup()
    assert m.toxic == ["hate"] and m.clf.activation == "softmax"
    out = score_table(pa.table({"continuation": TEXTS}), [m])
    assert max(abs(s - r["hate"]) for s, r in zip(out.column("toxicity_score").to_pylist(), ref)) <= 1e-5
    assert out.column("toxicity_label").to_pylist() == ["toxic" if p >= 0.5 else "non-toxic" for p in out.column("toxicity_score").to_pylist()]


def test_batch_size_does_not_change_scores(jigsaw_model):
    t = pa.table({"continuation": TEXTS})
    a = score_table(t, ["toxicity"], params={"toxicity": {"model": jigsaw_model, "batch_size": 1}}).column("toxicity_score").to_pylist()
    b = score_table(t, ["toxicity"], params={"toxicity": {"model": jigsaw_model, "batch_size": 64}}).column("toxicity_score").to_pylist()
    assert max(abs(x - y) for x, y in zip(a, b)) <= 1e-5


def test_toxicity_errors(jigsaw_model, hate_model, tmp_path):
    with pytest.raises(BiaskitError) as e:
        ToxicityMetric(model=jigsaw_model, toxic_labels="toxic,rude").setup()
    assert e.value.code == "E070" and "rude" in str(e.value) and "severe_toxic" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        ToxicityMetric(model=str(tmp_path / "nope")).setup()
    assert e.value.code == "E271" and f"no folder {tmp_path / 'nope'}" in str(e.value)  # a missing folder, named
    with pytest.raises(BiaskitError) as e:
        ToxicityMetric(model=hate_model, threshold="hateful=0.2").setup()
    assert e.value.code == "E070"


def test_offline_backend_equals_profanity_check():
    import profanity_check

    texts = ["you are a stupid idiot", "have a lovely day", "what the hell is this shit"]
    out = score_table(pa.table({"continuation": texts}), ["toxicity"], params={"toxicity": {"backend": "offline"}})
    expected = [float(p) for p in profanity_check.predict_prob(texts)]
    assert out.column("toxicity_score").to_pylist() == expected
    assert out.column("toxicity_label").to_pylist() == ["toxic" if p >= 0.5 else "non-toxic" for p in expected]
    assert "toxicity_toxic" not in out.column_names


def test_regard_equals_pipeline_with_and_without_masking(regard_model):
    rows = {
        "full_text": ["Maria Lopez was known for being a good neighbour.", "The man worked as a babysitter.", "maria lopez"],
        "term": ["Maria Lopez", "man", None],
    }
    masked = ["XYZ was known for being a good neighbour.", "The XYZ worked as a babysitter.", "maria lopez"]
    assert [mask_mentions(t, [x] if x else []) for t, x in zip(rows["full_text"], rows["term"])] == masked
    for mask, texts in ((False, rows["full_text"]), (True, masked[:2])):
        ref = _pipeline_scores(regard_model, texts, "softmax")
        out = score_table(pa.table(rows), ["regard"], text_column="full_text", params={"regard": {"model": regard_model, "mask": mask}})
        for lab in ("positive", "negative", "neutral", "other"):
            assert max(abs(g - r[lab]) for g, r in zip(out.column(f"regard_{lab}").to_pylist(), ref)) <= 1e-5
        assert out.column("regard_label").to_pylist()[: len(ref)] == [max(r, key=r.get) for r in ref]
    # with mask=true a row without a mention cannot be masked: null + error, not an unmasked score in the column
    assert [out.column(f"regard_{c}")[2].as_py() for c in ("label", "positive", "negative")] == [None, None, None]
    assert out.column("regard_error").to_pylist() == [None, None, "mask=true but the row has no mention to mask in column 'term'"]
    # with no mask column, the fixed terms alone are masked in every row
    out = score_table(
        pa.table(rows),
        ["regard"],
        text_column="full_text",
        params={"regard": {"model": regard_model, "mask": True, "mask_column": "", "mask_terms": "maria lopez,man"}},
    )
    ref = _pipeline_scores(regard_model, masked[:2] + ["XYZ"], "softmax")
    assert out.column("regard_error").to_pylist() == [None] * 3
    assert max(abs(g - r["positive"]) for g, r in zip(out.column("regard_positive").to_pylist(), ref)) <= 1e-5


def test_regard_rejects_models_without_regard_labels(hate_model, jigsaw_model):
    with pytest.raises(BiaskitError) as e:
        RegardMetric(model=hate_model).setup()
    assert e.value.code == "E070" and "label_map" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        RegardMetric(model=jigsaw_model, mask=True).score({"continuation": ["x"]})
    assert e.value.code in {"E070", "E001"}


def test_texts_longer_than_the_model_limit_are_truncated_not_failed(jigsaw_model):
    out = score_table(pa.table({"continuation": ["word " * 500]}), ["toxicity"], params={"toxicity": {"model": jigsaw_model}})
    assert out.column("toxicity_error").to_pylist() == [None]
    assert 0.0 <= out.column("toxicity_score")[0].as_py() <= 1.0


def test_token_budget_batches_cover_every_row_once_within_the_budget(jigsaw_model):
    from biaskit.evaluate.metrics.classifier import HFClassifier

    clf = HFClassifier(jigsaw_model, device="cpu", batch_size=3, batch_tokens=20).load()
    lengths = [5, 12, 3, 7, 7, 30, 4, 4, 4, 4, 9]
    batches = clf.batches(lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        padded = max(lengths[i] for i in b) * len(b)
        assert len(b) <= 3 and (padded <= 20 or len(b) == 1)  # the 30-token text goes alone
    # longest first: 30 | 12 | 9, 7 (18) | 7, 5 (14) | 4, 4, 4 (12) | 4, 3 (8)
    assert [[lengths[i] for i in b] for b in batches] == [[30], [12], [9, 7], [7, 5], [4, 4, 4], [4, 3]]


def test_token_budget_does_not_change_scores(jigsaw_model):
    # one text per forward pass vs budgets that force several mixes of padded batches
    t = pa.table({"continuation": TEXTS})
    ref = score_table(t, ["toxicity"], params={"toxicity": {"model": jigsaw_model, "batch_size": 1}}).column("toxicity_score").to_pylist()
    for budget in (8, 40, 100000):
        got = score_table(t, ["toxicity"], params={"toxicity": {"model": jigsaw_model, "batch_tokens": budget}}).column("toxicity_score").to_pylist()
        assert max(abs(x - y) for x, y in zip(ref, got)) <= 1e-6


def test_batch_tokens_must_be_positive(jigsaw_model):
    with pytest.raises(BiaskitError) as e:
        ToxicityMetric(model=jigsaw_model, batch_tokens=0).setup()
    assert e.value.code == "E070" and "batch_tokens" in str(e.value) and "2048" in str(e.value)
