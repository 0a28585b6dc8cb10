"""HolisticBias Likelihood Bias on a constructed table where the fraction of differing pairs is known."""

import pyarrow as pa
import pytest
from scipy.stats import mannwhitneyu

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats import likelihood_bias
from biaskit.evaluate.stats.columns import HolisticColumns


def _rows(axis, template, descriptor, ppls, model="lm", kind="likelihood"):
    return [{"axis": axis, "template": template, "descriptor": descriptor, "perplexity": p, "model": model, "kind": kind} for p in ppls]


def _table():
    low, mid, high = [float(x) for x in range(10, 20)], [float(x) for x in range(110, 120)], [float(x) for x in range(210, 220)]
    rows = []
    # axis ability, template T1: d1 low, d2 mid, d3 high, d4 = same values as d1
    #   pairs: d1-d2, d1-d3, d2-d3, d2-d4, d3-d4 differ (complete separation of 10 vs 10: p = 1.8e-4), d1-d4 identical (p = 1)
    rows += (
        _rows("ability", "T1", "d1", low) + _rows("ability", "T1", "d2", mid) + _rows("ability", "T1", "d3", high) + _rows("ability", "T1", "d4", low)
    )
    # template T2: all four descriptors have the same values -> 0 of 6 pairs differ
    for d in ("d1", "d2", "d3", "d4"):
        rows += _rows("ability", "T2", d, low)
    # -> ability: 5 of 12 pairs differ
    # axis age: two descriptors, identical -> 0 of 1 ; plus one null perplexity and a generate row (skipped, counted)
    rows += _rows("age", "T1", "young", low) + _rows("age", "T1", "old", low) + _rows("age", "T1", "old", [None])
    rows += _rows("age", "T1", "old", [1.0], kind="generate")
    return pa.Table.from_pylist(rows)


def test_axis_fraction_equals_the_constructed_value():
    res = likelihood_bias(_table())
    ax = res.by_axis.set_index("axis")
    assert ax.loc["ability", "n_pairs"] == 12 and ax.loc["ability", "n_different"] == 5
    assert ax.loc["ability", "fraction"] == pytest.approx(5 / 12)
    assert ax.loc["age", "fraction"] == 0.0 and ax.loc["age", "n_null"] == 1
    assert res.skipped == {"kind is not likelihood": 1}


def test_renamed_key_columns_are_read_through_holistic_columns():
    # the same table with its axis, template and descriptor columns renamed: 5 of 12 ability pairs still differ
    renamed = _table().rename_columns(["dimension", "frame", "term", "perplexity", "model", "kind"])
    res = likelihood_bias(renamed, keys=HolisticColumns(axis="dimension", descriptor="term", template="frame"))
    ax = res.by_axis.set_index("axis")
    assert ax.loc["ability", "n_pairs"] == 12 and ax.loc["ability", "n_different"] == 5
    assert ax.loc["ability", "n_templates"] == 2 and ax.loc["ability", "n_descriptors"] == 4
    with pytest.raises(BiaskitError, match="E080"):
        likelihood_bias(renamed)  # the default column names are not in the table


def test_pair_p_values_equal_scipy():
    res = likelihood_bias(_table())
    p = res.pairs
    row = p[(p.axis == "ability") & (p.template == "T1") & (p.descriptor_a == "d1") & (p.descriptor_b == "d2")].iloc[0]
    ref = mannwhitneyu(range(10, 20), range(110, 120), alternative="two-sided")
    assert row.p_value == pytest.approx(ref.pvalue) and row.different and row.rank_biserial == -1.0
    same = p[(p.template == "T1") & (p.descriptor_a == "d1") & (p.descriptor_b == "d4")].iloc[0]
    assert not same.different


def test_ranking_per_template_orders_by_median_perplexity():
    r = likelihood_bias(_table()).ranking
    t1 = r[(r.axis == "ability") & (r.template == "T1")].sort_values("rank")
    # medians: d1 = d4 = 14.5, d2 = 114.5, d3 = 214.5 (ties broken by name)
    assert list(t1.descriptor) == ["d1", "d4", "d2", "d3"] and list(t1["median"]) == [14.5, 14.5, 114.5, 214.5]


def test_nll_mean_is_used_when_perplexity_is_absent_and_models_must_be_chosen():
    t = _table().rename_columns(["axis", "template", "descriptor", "nll_mean", "model", "kind"])
    assert likelihood_bias(t).by_axis.set_index("axis").loc["ability", "fraction"] == pytest.approx(5 / 12)
    two = pa.concat_tables([_table(), _table().set_column(4, "model", pa.array(["lm2"] * _table().num_rows))])
    with pytest.raises(BiaskitError, match="several models"):
        likelihood_bias(two)
    # the two generate rows are skipped as kind, the 101 likelihood rows of lm as other models
    assert likelihood_bias(two, model="lm2").skipped == {"kind is not likelihood": 2, "other models": _table().num_rows - 1}
    with pytest.raises(BiaskitError, match="alpha"):
        likelihood_bias(_table(), alpha=5)
