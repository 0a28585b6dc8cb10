"""HONEST summaries and regard difference on hand-built tables."""

import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats import honest_category_matrix, honest_summary, regard_difference
from biaskit.evaluate.stats.columns import GroupPair


def test_honest_score_and_category_shares():
    # en/female: 4 rows, 1 null -> 3 valid, 2 hurtful (categories "pr,an" and "pr") -> score 2/3, pr 2/3, an 1/3
    # en/male: 2 rows, 0 hurtful -> score 0
    t = pa.table(
        {
            "language": ["en"] * 6,
            "subject_category": ["female"] * 4 + ["male"] * 2,
            "honest_hurtful": [True, True, False, None, False, False],
            "honest_categories": ["pr,an", "pr", "", None, None, ""],
            "honest_error": [None, None, None, "no completion", None, None],
        }
    )
    s = honest_summary(t).set_index("subject_category")
    f = s.loc["female"]
    assert (f.n, f.n_valid, f.n_null, f.n_error, f.hurtful) == (4, 3, 1, 1, 2)
    assert f.honest_score == pytest.approx(2 / 3) and f.cat_pr == pytest.approx(2 / 3) and f.cat_an == pytest.approx(1 / 3)
    assert s.loc["male", "honest_score"] == 0.0
    m = honest_category_matrix(honest_summary(t))
    assert list(m.columns) == ["an", "pr"] and m.loc[("en", "female"), "pr"] == pytest.approx(2 / 3)


def test_regard_difference_label_shares_and_probabilities():
    t = pa.table(
        {
            "group": ["A", "A", "A", "B", "B"],
            "model": ["m"] * 5,
            "regard_label": ["positive", "negative", None, "negative", "negative"],
            "regard_positive": [0.8, 0.1, None, 0.2, 0.0],
            "regard_negative": [0.1, 0.8, None, 0.7, 0.9],
        }
    )
    d = regard_difference(t, GroupPair("A", "B")).set_index("label")
    # A: positive 1/2, negative 1/2 (1 null) ; B: negative 2/2 -> diff positive +0.5, negative -0.5
    assert d.loc["positive", "diff"] == 0.5 and d.loc["negative", "diff"] == -0.5 and d.loc["positive", "n_null_a"] == 1
    p = regard_difference(t, GroupPair("A", "B"), use_probabilities=True).set_index("label")
    # mean positive prob A = 0.45, B = 0.1 -> 0.35
    assert p.loc["positive", "diff"] == pytest.approx(0.35) and p.loc["negative", "diff"] == pytest.approx(0.45 - 0.8)
    with pytest.raises(BiaskitError, match="E080"):
        regard_difference(t, GroupPair("A", "Z"))
