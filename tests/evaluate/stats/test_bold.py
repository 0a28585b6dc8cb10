"""BOLD figures on hand-built tables (numbers worked out in the comments)."""

import math

import pyarrow as pa
import pytest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from biaskit.bootstrap import BootSpec
from biaskit.errors import BiaskitError
from biaskit.evaluate.stats import (
    class_proportion_differences,
    gender_polarity_table,
    male_minus_female,
    regard_proportions,
    sentiment_proportions,
    toxicity_proportions,
)
from biaskit.evaluate.stats.columns import GroupPair


def _scored():
    rows = []
    # wikipedia baseline: actresses 2 pos / 2 neu ; actors 1 pos / 3 neu
    for g, labels in (
        ("American_actresses", ["positive", "positive", "neutral", "neutral"]),
        ("American_actors", ["positive", "neutral", "neutral", "neutral"]),
    ):
        rows += [{"domain": "gender", "group": g, "model": "wikipedia", "vader_label": x, "toxicity_label": "non-toxic"} for x in labels]
    # model: actresses 1 pos 1 neg 1 null ; actors 3 neg (1 toxic)
    for g, labels in (("American_actresses", ["positive", "negative", None]), ("American_actors", ["negative"] * 3)):
        rows += [
            {
                "domain": "gender",
                "group": g,
                "model": "gpt2",
                "vader_label": x,
                "toxicity_label": "toxic" if (g == "American_actors" and i == 0) else "non-toxic",
            }
            for i, x in enumerate(labels)
        ]
    return pa.Table.from_pylist(rows)


def test_sentiment_proportions_per_group_and_source():
    s = sentiment_proportions(_scored(), boot=BootSpec(n_boot=100)).set_index(["group", "model"])
    assert s.loc[("American_actresses", "wikipedia"), "prop_positive"] == 0.5
    assert s.loc[("American_actors", "wikipedia"), "prop_neutral"] == 0.75
    r = s.loc[("American_actresses", "gpt2")]
    # 3 rows, 1 null: 1/2 positive, 1/2 negative
    assert (r.n, r.n_valid, r.n_null, r.prop_positive, r.prop_negative, r.prop_neutral) == (3, 2, 1, 0.5, 0.5, 0.0)
    assert list(s.columns[:4]) == ["domain", "n", "n_valid", "n_null"]


def test_toxicity_proportion():
    t = toxicity_proportions(_scored(), by=["group", "model"], boot=BootSpec(n_boot=100)).set_index(["group", "model"])
    assert t.loc[("American_actors", "gpt2"), "prop_toxic"] == pytest.approx(1 / 3)
    assert t.loc[("American_actors", "wikipedia"), "prop_toxic"] == 0.0


def test_regard_each_group_gets_its_own_share_of_every_label():
    # regression for robbie's loop-variable bug (each group got only the last label's share)
    t = pa.table(
        {
            "group": ["male"] * 4 + ["female"] * 4,
            "regard_label": ["positive", "positive", "negative", "neutral", "negative", "negative", "negative", "other"],
        }
    )
    r = regard_proportions(t, by="group", boot=BootSpec(n_boot=50)).set_index("group")
    assert (r.loc["male", "prop_positive"], r.loc["male", "prop_negative"], r.loc["male", "prop_neutral"], r.loc["male", "prop_other"]) == (
        0.5,
        0.25,
        0.25,
        0.0,
    )
    assert (r.loc["female", "prop_positive"], r.loc["female", "prop_negative"], r.loc["female", "prop_other"]) == (0.0, 0.75, 0.25)


def _gender():
    # profession nurses (model m): wavg male, female, female, neutral, null; unigram male, male, female, female, neutral
    # profession engineers (model m): wavg male, male, male ; unigram male, male, male
    return pa.table(
        {
            "group": ["nurses"] * 5 + ["engineers"] * 3,
            "model": ["m"] * 8,
            "gender_unigram_label": ["male", "male", "female", "female", "neutral", "male", "male", "male"],
            "gender_wavg_label": ["male", "female", "female", "neutral", None, "male", "male", "male"],
            "gender_max_label": ["female", "female", "female", "neutral", "neutral", "male", "female", "male"],
        }
    )


def test_gender_polarity_table_layout_counts_and_ratio():
    g = gender_polarity_table(_gender(), by=["group"]).set_index("group")
    n = g.loc["nurses"]
    assert (n.unigram_male, n.unigram_female, n.unigram_ratio) == (2, 2, 1.0)
    assert (n.wavg_male, n.wavg_female, n.wavg_ratio, n.wavg_null) == (1, 2, 0.5, 1)
    assert (n.max_male, n.max_female, n.max_ratio) == (0, 3, 0.0)
    e = g.loc["engineers"]
    assert math.isinf(e.unigram_ratio) and e.max_ratio == 2.0


def test_male_minus_female_per_profession():
    m = male_minus_female(_gender(), by="group").set_index("group")
    # nurses wavg: 4 valid, 1 male, 2 female -> 0.25 - 0.5 = -0.25 ; engineers: 1 - 0 = 1
    assert m.loc["nurses", "male_minus_female"] == pytest.approx(-0.25) and m.loc["nurses", "n_null"] == 1
    assert m.loc["engineers", "male_minus_female"] == 1.0
    with pytest.raises(BiaskitError, match="unigram"):
        male_minus_female(_gender(), method="mean")


def test_class_proportion_differences_like_bold_tables_4_6():
    # A: valence positive 3/4, negative 1/4 ; B: positive 1/4, neutral 3/4 (joy class on both)
    t = pa.table(
        {
            "group": ["A"] * 4 + ["B"] * 4,
            "norms_valence_class": ["positive"] * 3 + ["negative"] + ["positive"] + ["neutral"] * 3,
            "norms_joy_class": ["positive"] * 8,
        }
    )
    d = class_proportion_differences(t, GroupPair("A", "B"))
    v = d[(d.dimension == "valence")].set_index("class")
    assert v.loc["positive", "diff"] == pytest.approx(0.5) and v.loc["neutral", "diff"] == pytest.approx(-0.75)
    assert v.loc["positive", "p_value"] == pytest.approx(proportions_ztest([3, 1], [4, 4])[1])
    # joy: 4/4 vs 4/4 -> z undefined (nan), left out of the Holm family of the other 4 tests
    joy = d[d.dimension == "joy"].iloc[0]
    assert math.isnan(joy.p_value) and math.isnan(joy.p_holm)
    ok = d.dropna(subset=["p_value"])
    assert len(ok) == 3 and list(ok.p_holm) == pytest.approx(list(multipletests(list(ok.p_value), method="holm")[1]))
    with pytest.raises(BiaskitError) as ei:
        class_proportion_differences(t, GroupPair("A", "C"))
    assert "'C'" in str(ei.value)
