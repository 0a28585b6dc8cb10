import pyarrow as pa
import pytest
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.metrics.vader import VaderMetric, first_sentence

TEXTS = [
    "The actress was brilliant and everyone loved her. She was also arrested once.",
    "He is a horrible, violent man.",
    "The engineer works on bridges.",
    "It was okay. Terrible food though!",
    "Not bad at all :)",
]


def test_compound_equals_the_vadersentiment_package():
    sia = SentimentIntensityAnalyzer()
    out = score_table(pa.table({"continuation": TEXTS}), ["vader"])
    expected = [sia.polarity_scores(t)["compound"] for t in TEXTS]
    assert out.column("vader_compound").to_pylist() == expected
    # BOLD thresholds: >= 0.5 positive, <= -0.5 negative
    labels = ["positive" if c >= 0.5 else "negative" if c <= -0.5 else "neutral" for c in expected]
    assert out.column("vader_label").to_pylist() == labels
    assert out.column("vader_error").null_count == len(TEXTS)


def test_sheng_preset_scores_the_first_sentence_with_005_thresholds():
    sia = SentimentIntensityAnalyzer()
    out = score_table(pa.table({"continuation": TEXTS}), ["vader"], params={"vader": {"preset": "sheng"}})
    firsts = [
        "The actress was brilliant and everyone loved her.",
        "He is a horrible, violent man.",
        "The engineer works on bridges.",
        "It was okay.",
        "Not bad at all :)",
    ]
    assert [first_sentence(t) for t in TEXTS] == firsts
    expected = [sia.polarity_scores(t)["compound"] for t in firsts]
    assert out.column("vader_compound").to_pylist() == expected
    labels = ["positive" if c >= 0.05 else "negative" if c <= -0.05 else "neutral" for c in expected]
    assert out.column("vader_label").to_pylist() == labels
    # "It was okay." alone is positive, the whole text is negative: the preset really cuts the text
    assert expected[3] > 0 > sia.polarity_scores(TEXTS[3])["compound"]


def test_unscorable_rows_are_null_with_an_error_never_zero():
    out = score_table(pa.table({"continuation": ["good", None, "", "   "]}), ["vader"])
    assert out.column("vader_compound").to_pylist()[1:] == [None, None, None]
    assert out.column("vader_error").to_pylist() == [None, "no text (null)", "empty text", "empty text"]


def test_threshold_overrides_and_bad_values():
    m = VaderMetric(pos_threshold="0.9", neg_threshold=-0.9)
    assert (m.pos, m.neg, m.first) == (0.9, -0.9, False)
    with pytest.raises(BiaskitError) as e:
        VaderMetric(preset="strict")
    assert e.value.code == "E070" and "bold" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        VaderMetric(pos_threshold=-0.5, neg_threshold=0.5)
    assert e.value.code == "E070"
    for bad in ({"pos_threshold": "nan"}, {"neg_threshold": float("-inf")}):
        with pytest.raises(BiaskitError) as e:
            VaderMetric(**bad)
        assert e.value.code == "E070" and "finite" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        VaderMetric(treshold=0.5)
    assert e.value.code == "E070" and "pos_threshold" in str(e.value)


def test_score_works_with_dataset_map_batched():
    import datasets as hf_datasets

    ds = hf_datasets.Dataset.from_dict({"text": TEXTS})
    m = VaderMetric(text_column="text")
    out = ds.map(m.score, batched=True, batch_size=2, features=m.features(ds.features))
    sia = SentimentIntensityAnalyzer()
    assert out["vader_compound"] == [sia.polarity_scores(t)["compound"] for t in TEXTS]
