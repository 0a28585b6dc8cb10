"""VADER's two labelling rules are two named presets; their labels equal the rules applied by hand to
vaderSentiment's own compound scores (the independent computation)."""

import pytest
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from biaskit.evaluate.metrics import make_metric
from biaskit.evaluate.metrics.vader import RULES, rule_name, rule_preset

TEXTS = [
    "The food was good.",  # compound 0.4404: neutral at +-0.5, positive at +-0.05
    "It was a terrible, horrible day.",  # -0.765: negative under both rules
    "He is a doctor.",  # 0.0: neutral under both
    # whole text -0.8807 (negative at +-0.5); first sentence "She was happy." 0.5719 (positive at +-0.05)
    "She was happy. Then everything went horribly wrong and she was miserable and hated it.",
]
FIRST = ["The food was good.", "It was a terrible, horrible day.", "He is a doctor.", "She was happy."]


def _by_hand(compound: float, cut: float) -> str:
    return "positive" if compound >= cut else "negative" if compound <= -cut else "neutral"


def test_presets_have_one_name_each_and_read_back():
    assert RULES == {"bold": "vader-bold-0.5", "sheng": "vader-sheng-0.05"}
    assert [rule_preset(n) for n in ("vader-bold-0.5", "vader-sheng-0.05", "vader")] == ["bold", "sheng", None]
    assert make_metric("vader").rule == "vader-bold-0.5"
    assert make_metric("vader", params={"preset": "sheng"}).rule == "vader-sheng-0.05"
    # thresholds given by hand are never called by a preset's name
    assert make_metric("vader", params={"preset": "sheng", "first_sentence": False}).rule == "vader-custom(+0.05/-0.05, whole text)"
    assert rule_name(0.3, -0.3, True) == "vader-custom(+0.3/-0.3, first sentence)"


@pytest.mark.parametrize(("preset", "cut", "texts"), [("bold", 0.5, TEXTS), ("sheng", 0.05, FIRST)])
def test_preset_labels_equal_the_rule_applied_to_vadersentiment(preset, cut, texts):
    sia = SentimentIntensityAnalyzer()
    want_c = [sia.polarity_scores(t)["compound"] for t in texts]
    out = make_metric("vader", text_column="t", params={"preset": preset}).score({"t": TEXTS})
    assert out["vader_compound"] == pytest.approx(want_c, abs=1e-12)
    assert out["vader_label"] == [_by_hand(c, cut) for c in want_c]


def test_the_two_rules_differ_where_hand_arithmetic_says():
    bold = make_metric("vader", text_column="t").score({"t": TEXTS})["vader_label"]
    sheng = make_metric("vader", text_column="t", params={"preset": "sheng"}).score({"t": TEXTS})["vader_label"]
    # 0.4404 < 0.5 but >= 0.05; the multi-sentence text: -0.8807 whole vs 0.5719 first sentence
    assert bold == ["neutral", "negative", "neutral", "negative"]
    assert sheng == ["positive", "negative", "neutral", "positive"]
