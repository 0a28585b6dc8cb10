"""Agreement statistics equal independent implementations on hand-built label tables."""

import math

import krippendorff
import numpy as np
import pyarrow as pa
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

from biaskit.annotate.agreement import agreement, careless_annotators, cohen_kappa, fleiss_kappa, krippendorff_alpha, value
from biaskit.annotate.tasks import get_task_type
from biaskit.errors import BiaskitError
from biaskit.votes import LabelTable, VoteRule, majority_vote

LABS = ["negative", "neutral", "positive"]

# 10 items x 3 annotators, hand-built: a1 and a2 mostly agree, a3 is careless (labels unrelated to the text)
GOOD = [
    ["positive", "positive", "negative"],
    ["positive", "positive", "neutral"],
    ["negative", "negative", "positive"],
    ["negative", "negative", "negative"],
    ["neutral", "neutral", "positive"],
    ["neutral", "positive", "negative"],
    ["positive", "positive", "neutral"],
    ["negative", "negative", "positive"],
    ["neutral", "neutral", "neutral"],
    ["positive", "positive", "negative"],
]


def _ann_table(rows, annotators=("a1", "a2", "a3"), round_="r1", task="sentiment"):
    out = []
    for i, row in enumerate(rows):
        for a, lab in zip(annotators, row):
            if lab is not None:
                out.append({"sample_id": f"s{i:02d}", "round": round_, "annotator": a, "label": lab, "task_type": task})
    return pa.Table.from_pylist(out)


def _codes(rows):
    return np.array([[LABS.index(x) if x is not None else np.nan for x in r] for r in rows], dtype=float)


def test_fleiss_equals_statsmodels_on_hand_table():
    lt = LabelTable.from_rows(GOOD)
    mine = fleiss_kappa(lt.counts(LABS))
    ref = sm_fleiss(aggregate_raters(_codes(GOOD).astype(int))[0])
    assert mine == pytest.approx(ref, abs=1e-12)
    # by hand: p = (neg 10/30, neu 8/30, pos 12/30), P_e = 77/225; P_bar = 13/30 -> kappa = 41/296
    assert mine == pytest.approx(41 / 296, abs=1e-12)


def test_fleiss_perfect_and_undefined():
    assert fleiss_kappa(LabelTable.from_rows([["a", "a"], ["b", "b"]]).counts(["a", "b"])) == 1.0
    assert math.isnan(fleiss_kappa(LabelTable.from_rows([["a", "a"], ["a", "a"]]).counts(["a", "b"])))


@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_krippendorff_equals_package_with_missing_ratings(level):
    rows = [list(r) for r in GOOD]
    rows[1][2] = None
    rows[4][0] = None
    rows[7][1] = None
    rows.append(["positive", None, None])  # one rating only: not pairable, ignored by both
    lt = LabelTable.from_rows(rows)
    mine = krippendorff_alpha(lt.counts(LABS), level)
    ref = krippendorff.alpha(reliability_data=_codes(rows).T, level_of_measurement=level, value_domain=[0, 1, 2])
    assert mine == pytest.approx(ref, abs=1e-12)


def test_krippendorff_hand_value_two_coders():
    # Two coders, 4 items: (a,a), (a,b), (b,b), (b,b): coincidences o_aa=2, o_ab=o_ba=1, o_bb=4, n=8
    # alpha = 1 - (n-1) * D_o / D_e = 1 - 7 * 2 / (2 * 3 * 5) = 1 - 14/30
    lt = LabelTable.from_rows([["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"]])
    assert krippendorff_alpha(lt.counts(["a", "b"]), "nominal") == pytest.approx(1 - 14 / 30, abs=1e-12)


def test_argilla_regression_alpha_is_per_item_not_collapsed():
    # Argilla v1 collapsed all records into one item and reported 0.000; perfect agreement must be 1.0
    rows = [["positive"] * 3, ["negative"] * 3, ["neutral"] * 3, ["positive"] * 3]
    assert krippendorff_alpha(LabelTable.from_rows(rows).counts(LABS), "nominal") == 1.0


def test_cohen_equals_sklearn_pairwise():
    a1 = [r[0] for r in GOOD]
    a3 = [r[2] for r in GOOD]
    assert cohen_kappa(a1, a3) == pytest.approx(cohen_kappa_score(a1, a3), abs=1e-12)
    a2 = [r[1] for r in GOOD]
    assert cohen_kappa(a1, a2) == pytest.approx(cohen_kappa_score(a1, a2), abs=1e-12)


def test_agreement_table_and_careless_annotator_detected():
    t = agreement(_ann_table(GOOD), n_boot=200, seed=1)
    codes = _codes(GOOD)
    assert value(t, "fleiss_kappa") == pytest.approx(sm_fleiss(aggregate_raters(codes.astype(int))[0]), abs=1e-12)
    assert value(t, "krippendorff_alpha_nominal") == pytest.approx(
        krippendorff.alpha(reliability_data=codes.T, level_of_measurement="nominal"), abs=1e-12
    )
    assert value(t, "krippendorff_alpha_ordinal") == pytest.approx(
        krippendorff.alpha(reliability_data=codes.T, level_of_measurement="ordinal", value_domain=[0, 1, 2]), abs=1e-12
    )
    for a, b, i, j in (("a1", "a2", 0, 1), ("a1", "a3", 0, 2), ("a2", "a3", 1, 2)):
        ref = cohen_kappa_score([r[i] for r in GOOD], [r[j] for r in GOOD])
        assert value(t, "cohen_kappa", annotator=a, annotator_b=b) == pytest.approx(ref, abs=1e-12)
    # leave-one-out majority: a3 agrees with the (a1, a2) majority only on items 3 and 8 (of 9 with a clear majority)
    assert value(t, "annotator_majority_agreement", annotator="a3") == pytest.approx(2 / 9)
    assert value(t, "annotator_majority_kappa", annotator="a1") > 0.6
    assert careless_annotators(t) == ["a3"]
    row = [r for r in t.to_pylist() if r["measure"] == "fleiss_kappa"][0]
    assert row["n_items"] == 10 and row["n_annotators"] == 3
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"]


def test_fleiss_uses_fully_rated_items_only():
    rows = [list(r) for r in GOOD] + [["positive", "positive", None]]
    t = agreement(_ann_table(rows), n_boot=0)
    row = [r for r in t.to_pylist() if r["measure"] == "fleiss_kappa"][0]
    assert row["n_items"] == 10
    assert row["estimate"] == pytest.approx(sm_fleiss(aggregate_raters(_codes(GOOD).astype(int))[0]), abs=1e-12)


def test_gold_items_leave_agreement_and_score_annotators():
    ann = _ann_table(GOOD)
    samples = pa.table(
        {
            "sample_id": [f"s{i:02d}" for i in range(10)],
            "round": ["r1"] * 10,
            "task_type": ["sentiment"] * 10,
            "text": ["x"] * 10,
            "is_gold": [i < 2 for i in range(10)],
            "gold_label": ["positive", "positive"] + [None] * 8,
        }
    )
    t = agreement(ann, samples=samples, n_boot=0)
    assert value(t, "annotator_gold_accuracy", annotator="a1") == 1.0
    assert value(t, "annotator_gold_accuracy", annotator="a3") == 0.0
    assert [r for r in t.to_pylist() if r["measure"] == "fleiss_kappa"][0]["n_items"] == 8


def test_majority_vote_tie_policies():
    rows = [["positive", "positive", "negative"], ["positive", "negative", "neutral"], ["other", "other", "positive"]]
    ann = _ann_table(rows, task="regard")
    drop = majority_vote(ann, task=get_task_type("regard")).to_pylist()
    assert [r["label"] for r in drop] == ["positive", None, "other"]
    assert [r["tie"] for r in drop] == [False, True, False]
    assert drop[1]["reason"] == "tie"
    neutral = majority_vote(ann, task=get_task_type("regard"), rule=VoteRule(tie_policy="label:neutral", exclude_labels=["other"])).to_pylist()
    assert [r["label"] for r in neutral] == ["positive", "neutral", "other"]
    assert [r["kept"] for r in neutral] == [True, True, False]  # Sheng et al. dropped 'other' majorities
    rnd = majority_vote(ann, rule=VoteRule(tie_policy="random", seed=3)).to_pylist()
    assert rnd[1]["label"] in {"positive", "negative", "neutral"}
    assert rnd == majority_vote(ann, rule=VoteRule(tie_policy="random", seed=3)).to_pylist()  # seeded


def test_bad_tie_policy_and_conflicting_labels_are_coded_errors():
    with pytest.raises(BiaskitError) as e:
        majority_vote(_ann_table(GOOD), rule=VoteRule(tie_policy="coin"))
    assert e.value.code == "E091" and "coin" in str(e.value) and "fix:" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        majority_vote(_ann_table(GOOD), task=get_task_type("sentiment"), rule=VoteRule(tie_policy="label:meh"))
    assert "meh" in str(e.value)
    dup = pa.concat_tables([_ann_table(GOOD), _ann_table([["negative"] + [None, None]])])
    with pytest.raises(BiaskitError) as e:
        agreement(dup)
    assert e.value.code == "E091" and "s00" in str(e.value)


def test_several_rounds_need_a_round_choice():
    both = pa.concat_tables([_ann_table(GOOD, round_="r1"), _ann_table(GOOD[:5], round_="r2")])
    with pytest.raises(BiaskitError) as e:
        agreement(both, n_boot=0)
    assert "several rounds" in str(e.value) and "--round" in str(e.value)
    assert value(agreement(both, round="r1", n_boot=0), "fleiss_kappa") == pytest.approx(41 / 296)
    with pytest.raises(BiaskitError) as e:
        agreement(both, round="r9", n_boot=0)
    assert "r9" in str(e.value) and "'r1', 'r2'" in str(e.value)
