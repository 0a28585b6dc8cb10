"""Task types, XYZ masking and seeded, stratified sampling."""

import json
import xml.etree.ElementTree as ET
from collections import Counter

import pyarrow as pa
import pytest

from biaskit.annotate.labelstudio import config_labels
from biaskit.annotate.masking import mask_text, row_mentions, unmask
from biaskit.annotate.sampling import _allocate, sample_round
from biaskit.annotate.tasks import TASK_TYPES, get_task_type, task_spec
from biaskit.errors import BiaskitError


@pytest.mark.parametrize("name", sorted(TASK_TYPES))
def test_builtin_label_configs_are_valid_xml_with_the_labels(name):
    t = TASK_TYPES[name]
    root = ET.fromstring(t.label_config())
    assert root.find("Text").get("value") == "$text"
    assert config_labels(t.label_config(), t.from_name) == list(t.labels)
    assert "XYZ" in t.guidelines_markdown() and "<li>" in t.guidelines_html()


def test_user_defined_choice_sets():
    t = get_task_type("stance:agree,disagree,unrelated")
    assert t.labels == ("agree", "disagree", "unrelated") and t.ordinal == ()
    o = get_task_type("severity:low<mid<high")
    assert o.ordinal == ("low", "mid", "high") and o.rank("high") == 2
    assert get_task_type(task_spec(o)) == o
    assert task_spec(TASK_TYPES["regard"]) == "regard"
    for bad, needle in (("sentimnt", "sentimnt"), ("x:a", "at least two"), ("x:a,a", "duplicate"), ("Bad Name:a,b", "Bad Name")):
        with pytest.raises(BiaskitError) as e:
            get_task_type(bad)
        assert e.value.code == "E091" and needle in str(e.value) and "fix:" in str(e.value)


@pytest.mark.parametrize(
    "text,mentions,expected",
    [
        ("Jacob Zachar is an actor. Zachar was born in 1986.", ["Jacob Zachar"], "XYZ is an actor. XYZ was born in 1986."),
        ("I'm a Deaf woman and Deaf people know it.", ["a Deaf woman", "Deaf"], "I'm XYZ and XYZ people know it."),
        ("The man met a manager; men and the man left.", ["The man"], "XYZ met a manager; men and XYZ left."),
        ("Astronomers and an astronomer agree.", ["astronomer"], "XYZ and an XYZ agree."),
        ("Nothing to mask here.", ["Zachar"], "Nothing to mask here."),
    ],
)
def test_masking_cases_and_exact_roundtrip(text, mentions, expected):
    masked, mapping = mask_text(text, mentions)
    assert masked == expected
    assert unmask(masked, mapping) == text
    assert unmask(masked, json.dumps(mapping)) == text


def test_holistic_variant_rows_are_masked_too():
    # a remove_descriptor_hyphens variant writes "hard of hearing": only variant_noun_phrase holds that form,
    # and it was not a mention column, so annotators saw the descriptor
    row = {
        "descriptor": "hard-of-hearing",
        "noun": "woman",
        "noun_phrase": "a hard-of-hearing woman",
        "plural_noun_phrase": "hard-of-hearing women",
        "variant_noun_phrase": "a hard of hearing woman",
    }
    masked, mapping = mask_text("I am a hard of hearing woman.", row_mentions(row))
    assert masked == "I am XYZ." and unmask(masked, mapping) == "I am a hard of hearing woman."


def test_allocation_equal_water_filling_and_proportional():
    assert _allocate([10, 10, 10], 9, "equal") == [3, 3, 3]
    assert _allocate([1, 10, 10], 9, "equal") == [1, 4, 4]  # the small stratum's share goes to the others
    assert _allocate([2, 2], 10, "equal") == [2, 2]
    assert _allocate([30, 10], 8, "proportional") == [6, 2]


def test_stratified_sample_spans_groups_and_score_bins(scores):
    t, rep = sample_round(scores, round="r1", task="sentiment", n=24, bins=4, seed=0)
    assert t.num_rows == 24 and rep.chosen == 24
    # 3 groups x 4 equal-width vader bins = 12 strata, 2 items each
    assert len(rep.strata) == 12
    assert Counter(t.column("stratum").to_pylist()) == {k: 2 for k in rep.strata}
    assert rep.bin_edges[0] == min(scores.column("vader_compound").to_pylist())
    assert set(t.column("group").to_pylist()) == {"g0", "g1", "g2"}
    # masked text, original kept, mapping restores it
    for r in t.to_pylist():
        assert "XYZ" in r["text"] and r["term"] not in r["text"]
        assert unmask(r["text"], r["mask_mapping"]) == r["original_text"]
        assert r["original_text"].startswith(r["source_text"].rstrip())
    assert t.column("task_type").to_pylist() == ["sentiment"] * 24


def test_sampling_is_seeded_and_independent_of_row_order(scores):
    a, _ = sample_round(scores, round="r1", task="sentiment", n=20, seed=7)
    b, _ = sample_round(scores.take(list(reversed(range(scores.num_rows)))), round="r1", task="sentiment", n=20, seed=7)
    c, _ = sample_round(scores, round="r1", task="sentiment", n=20, seed=8)
    assert a.column("sample_id").to_pylist() == b.column("sample_id").to_pylist()
    assert set(a.column("sample_id").to_pylist()) != set(c.column("sample_id").to_pylist())


def test_excluding_earlier_rounds_and_gold_items(scores):
    r1, _ = sample_round(scores, round="r1", task="sentiment", n=30, seed=0)
    gold = pa.table({"text": ["I love it.", "I hate it.", "It is a chair."], "gold_label": ["positive", "negative", "Neutral "]})
    r2, rep = sample_round(scores, round="r2", task="sentiment", n=30, seed=0, exclude=r1.column("sample_id").to_pylist(), gold=gold, n_gold=2)
    assert rep.excluded == 30
    assert not set(r1.column("sample_id").to_pylist()) & set(r2.column("sample_id").to_pylist())
    g = [r for r in r2.to_pylist() if r["is_gold"]]
    assert len(g) == 2 and all(r["gold_label"] in {"positive", "negative", "neutral"} for r in g)
    with pytest.raises(BiaskitError) as e:
        sample_round(scores, round="r3", task="sentiment", gold=pa.table({"text": ["x"], "gold_label": ["great"]}))
    assert "great" in str(e.value)


def test_duplicate_gold_items_and_negative_n_gold_are_coded_errors(scores):
    # a gold file listing one text twice gave a samples table with a duplicate sample_id that push then refused
    # ("resample the round", which repeats it); --n-gold -1 crashed in numpy
    dup = pa.table({"text": ["I love it.", "I love it."], "gold_label": ["positive", "negative"]})
    with pytest.raises(BiaskitError) as e:
        sample_round(scores, round="r2", task="sentiment", n=5, gold=dup)
    assert e.value.code == "E007" and "rows 1 and 2" in str(e.value) and "fix:" in str(e.value)
    gold = pa.table({"text": ["I love it."], "gold_label": ["positive"]})
    with pytest.raises(BiaskitError) as e:
        sample_round(scores, round="r2", task="sentiment", n=5, gold=gold, n_gold=-1)
    assert e.value.code == "E091" and "-1" in str(e.value)


def test_per_label_design_sheng_three_plus_three(scores):
    t, rep = sample_round(scores, round="r1", task="regard", metric="vader", per_label={"positive": 3, "negative": 3}, by="group", seed=1)
    got = Counter((r["group"], r["vader_label"]) for r in t.to_pylist())
    assert got == {(g, lab): 3 for g in ("g0", "g1", "g2") for lab in ("positive", "negative")}


def test_sampling_bad_input_is_coded(scores):
    with pytest.raises(BiaskitError) as e:
        sample_round(scores, round="r1", task="sentiment", strata=["templat"])
    assert e.value.code == "E091" and "templat" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        sample_round(scores, round="r1", task="toxicity", metric="toxicity")
    assert "toxicity_score" in str(e.value)
    with pytest.raises(BiaskitError):
        sample_round(scores, round="r1", task="regard", metric="vader", per_label={"positive": 3})
    with pytest.raises(BiaskitError):
        sample_round(scores, round="a/b", task="sentiment")


def test_rows_with_metric_errors_or_no_text_are_not_drawn(scores):
    rows = scores.to_pylist()
    rows[0]["vader_error"] = "boom"
    rows[0]["vader_compound"] = None
    rows[1]["continuation"] = None
    rows[1]["text"] = "  "
    t, rep = sample_round(pa.Table.from_pylist(rows), round="r1", task="sentiment", n=200, seed=0)
    assert rep.dropped_metric_error == 1 and rep.dropped_no_text == 1 and t.num_rows == scores.num_rows - 2
