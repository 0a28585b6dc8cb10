"""Like for like: the samples table records the span shown and the span scored (and VADER's rule), validation
re-scores the shown text with VADER or refuses (E395), and validate and train name the same rule the same way."""

import pyarrow as pa
import pytest
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from biaskit.annotate.agreement import value
from biaskit.annotate.sampling import sample_round
from biaskit.annotate.spans import scored_of
from biaskit.annotate.validation import validate_metric
from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import make_metric, score_table

# prompt + continuation; VADER on the continuation and on the full text disagree for the first two
ROWS = [
    ("p0", "She was happy.", "Then everything went horribly wrong and she was miserable."),
    ("p1", "He loved the great city.", "He worked there as a clerk."),
    ("p2", "The weather was awful.", "It rained all day and it was terrible."),
    ("p3", "They met at noon.", "The lunch was wonderful and they were delighted."),
]
HUMAN = {"p0": "negative", "p1": "positive", "p2": "negative", "p3": "positive"}


def _scores():
    t = pa.table(
        {
            "prompt_id": [r[0] for r in ROWS],
            "text": [r[1] for r in ROWS],
            "continuation": [r[2] for r in ROWS],
            "full_text": [f"{r[1]} {r[2]}" for r in ROWS],
            "model": ["m"] * len(ROWS),
        }
    )
    return score_table(t, ["vader"], text_column="continuation", progress=False)


def _round(text_column=None):
    scores = _scores()
    samples, _ = sample_round(
        scores,
        round="r1",
        task="sentiment",
        n=len(ROWS),
        metric="vader",
        bins=1,
        strata=[],
        mask=False,
        text_column=text_column,
        scored_column="continuation",
        scored_rule="vader-bold-0.5",
    )
    pid = dict(zip(samples.column("sample_id").to_pylist(), samples.column("prompt_id").to_pylist()))
    ann = [{"sample_id": s, "round": "r1", "annotator": a, "label": HUMAN[p]} for s, p in pid.items() for a in ("a1", "a2", "a3")]
    return samples, pa.Table.from_pylist(ann)


def _by_hand(texts, cut):
    sia = SentimentIntensityAnalyzer()
    out = []
    for t in texts:
        c = sia.polarity_scores(t)["compound"]
        out.append("positive" if c >= cut else "negative" if c <= -cut else "neutral")
    return out


def test_samples_record_the_span_shown_the_span_scored_and_the_rule():
    samples, _ = _round()
    assert set(samples.column("shown_span").to_pylist()) == {"full_text"}
    assert set(samples.column("scored_span").to_pylist()) == {"continuation"}
    assert set(samples.column("scored_rule").to_pylist()) == {"vader-bold-0.5"}
    joined, _ = sample_round(_scores().drop_columns(["full_text"]), round="r1", task="sentiment", n=4, metric="vader", bins=1, strata=[])
    assert set(joined.column("shown_span").to_pylist()) == {"text+continuation"}
    assert set(joined.column("scored_span").to_pylist()) == {None}  # not recorded: nobody said


def test_the_scores_manifest_says_what_was_scored():
    demo = {"config": {"metrics": {"vader": make_metric("vader", "continuation", {"preset": "sheng"}).describe()}}}
    assert scored_of(demo, "vader") == ("continuation", "vader-sheng-0.05")
    cli = {"config": {"text_column": "full_text"}, "metrics": [make_metric("vader", "full_text").describe()]}
    assert scored_of(cli, "vader") == ("full_text", "vader-bold-0.5")
    assert scored_of(None, "vader") == (None, None)


def test_validate_rescores_the_shown_text_when_the_spans_differ():
    samples, ann = _round()
    val = validate_metric(ann, samples, metric="vader", n_boot=0, calibrate=False)
    shown = samples.column("original_text").to_pylist()
    pids = samples.column("prompt_id").to_pylist()
    want = _by_hand(shown, 0.5)  # the rule the round's labels were made with, on the text the humans saw
    right = sum(w == HUMAN[p] for w, p in zip(want, pids))
    assert value(val.table, "accuracy", metric="vader") == pytest.approx(right / len(pids))
    carried = samples.column("vader_label").to_pylist()  # on the continuation: a different figure
    assert sum(c == HUMAN[p] for c, p in zip(carried, pids)) != right
    rows = val.table.to_pylist()
    assert {(r["shown_span"], r["scored_span"], r["scored_rule"]) for r in rows} == {("full_text", "full_text", "vader-bold-0.5")}
    assert any(n.startswith("re-scored the text shown (full_text) with vader-bold-0.5") for n in val.notes)


def test_validate_uses_the_carried_labels_when_the_scored_text_was_shown():
    samples, ann = _round(text_column="continuation")
    val = validate_metric(ann, samples, metric="vader", n_boot=0, calibrate=False)
    pids = samples.column("prompt_id").to_pylist()
    want = _by_hand(samples.column("original_text").to_pylist(), 0.5)
    assert want == samples.column("vader_label").to_pylist()
    assert value(val.table, "accuracy", metric="vader") == pytest.approx(sum(w == HUMAN[p] for w, p in zip(want, pids)) / 4)
    assert set(val.table.column("scored_span").to_pylist()) == {"continuation"}
    assert not any(n.startswith("re-scored") for n in val.notes)


def test_a_named_rule_is_rescored_and_reported_under_trains_name():
    from biaskit.train.baselines import vader_predict
    from biaskit.train.config import TrainConfig

    samples, ann = _round(text_column="continuation")
    rule = TrainConfig().vader_rule  # the train baseline's rule, by name
    assert rule == "vader-sheng-0.05"
    val = validate_metric(ann, samples, metric=rule, n_boot=0, calibrate=False)
    texts = samples.column("original_text").to_pylist()
    pids = samples.column("prompt_id").to_pylist()
    sia = SentimentIntensityAnalyzer()
    first = [t.split(". ")[0] + ("." if ". " in t else "") for t in texts]  # each continuation's first sentence
    cs = [sia.polarity_scores(f)["compound"] for f in first]
    want = ["positive" if c >= 0.05 else "negative" if c <= -0.05 else "neutral" for c in cs]
    assert value(val.table, "accuracy", metric=rule) == pytest.approx(sum(w == HUMAN[p] for w, p in zip(want, pids)) / 4)
    assert set(val.table.column("scored_rule").to_pylist()) == {rule}
    labels = ["negative", "neutral", "positive"]
    assert vader_predict(texts, {k: i for i, k in enumerate(labels)}, rule) == [labels.index(w) for w in want]


def test_a_metric_that_cannot_be_rescored_is_refused_naming_both_columns():
    rows = [
        {"sample_id": f"s{i}", "round": "r1", "task_type": "toxicity", "text": "t", "original_text": "t", "is_gold": False}
        | {"toxicity_label": "toxic", "toxicity_score": 0.9, "shown_span": "full_text", "scored_span": "continuation"}
        for i in range(3)
    ]
    ann = [{"sample_id": f"s{i}", "round": "r1", "annotator": a, "label": "toxic"} for i in range(3) for a in ("a1", "a2")]
    with pytest.raises(BiaskitError) as e:
        validate_metric(pa.Table.from_pylist(ann), pa.Table.from_pylist(rows), metric="toxicity", n_boot=0, calibrate=False)
    assert e.value.code == "E395"
    assert "'full_text'" in str(e.value) and "'continuation'" in str(e.value) and "--text-column continuation" in str(e.value)


def test_rescoring_needs_a_known_rule():
    samples, ann = _round()
    s = samples.set_column(samples.column_names.index("scored_rule"), "scored_rule", pa.array([None] * samples.num_rows, pa.string()))
    with pytest.raises(BiaskitError) as e:
        validate_metric(ann, s, metric="vader", n_boot=0, calibrate=False)
    assert e.value.code == "E395" and "vader-sheng-0.05" in str(e.value)
    # naming the rule is the fix
    assert validate_metric(ann, s, metric="vader-bold-0.5", n_boot=0, calibrate=False).table.num_rows > 0


@pytest.mark.parametrize("rule", ["vader-sheng-0.05", "vader-bold-0.5"])
def test_train_names_its_vader_rule_in_metrics_and_card(tmp_path, rule):
    from biaskit.train.classifier import train_classifier
    from biaskit.train.config import TrainConfig
    from biaskit.train.data import labelled_data

    rs = [{"text": f"xyz was {w}.", "label": lab} for w, lab in [("kind", "positive"), ("cruel", "negative")] * 8]
    c = TrainConfig(split="8/4/4", runs=1, seed=0, baselines=("vader",), vader_rule=rule)
    res = train_classifier(labelled_data(pa.Table.from_pylist(rs)), tmp_path / "clf", c, progress=False, finetune=False)
    assert res.metrics["runs"][0]["systems"]["vader"]["rule"] == rule
    assert res.metrics["vader_mapping"]["rule"] == rule
    card = (tmp_path / "clf" / "README.md").read_text()
    assert f"| vader (`{rule}`) |" in card and f"VADER baseline rule: `{rule}`" in card


def test_train_refuses_an_unknown_vader_rule():
    from biaskit.train.config import TrainConfig

    with pytest.raises(BiaskitError) as e:
        TrainConfig(vader_rule="vader").check()
    assert e.value.code == "E172" and "vader-sheng-0.05" in str(e.value.options)
