"""`biaskit stats pairs`: the share of pairs whose first variant scores higher, with Clopper-Pearson intervals, an
exact binomial test and Holm over bias types; ties and missing scores counted, never dropped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint
from typer.testing import CliRunner

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats.inference import binomial_p_half
from biaskit.evaluate.stats.pairs import pair_stats


def _pairs(spec: dict[str, list[tuple[float | None, float | None]]], *, swap_every: int = 0) -> pa.Table:
    """A pairs table from {bias_type: [(score of more, score of less), ...]}; with swap_every=k every k-th pair has
    its 'less' row first in the table (the first variant is still 'more')."""
    rows = []
    i = 0
    for bt, pairs in spec.items():
        for more, less in pairs:
            pr = [
                {"pair_id": f"p{i}", "variant": "more", "s": more, "bias_type": bt},
                {"pair_id": f"p{i}", "variant": "less", "s": less, "bias_type": bt},
            ]
            if swap_every and i % swap_every == 0:
                pr.reverse()
            rows += pr
            i += 1
    return pa.Table.from_pylist(rows)


SPEC = {
    # gender: 9 higher, 1 tie, 2 lower of 12 pairs
    "gender": [(2.0, 1.0)] * 9 + [(1.0, 1.0)] + [(0.0, 1.0)] * 2,
    # race-color: 3 higher, 5 lower, one pair with a null score (a failed row) left out and counted
    "race-color": [(-1.0, -2.0)] * 3 + [(-3.0, -2.0)] * 5 + [(None, -1.0)],
    # age: 4 of 4 higher
    "age": [(5.0, 4.5)] * 4,
}


def test_counts_share_clopper_pearson_binomial_and_holm_equal_the_reference_packages():
    res = pair_stats(_pairs(SPEC, swap_every=3), "s", by="bias_type").set_index("bias_type")
    assert list(res.index) == ["gender", "race-color", "age", "all"]
    expect = {"gender": (12, 9, 1, 2, 0), "race-color": (8, 3, 0, 5, 1), "age": (4, 4, 0, 0, 0), "all": (24, 16, 1, 7, 1)}
    for bt, (n, hi, tie, lo, miss) in expect.items():
        row = res.loc[bt]
        assert (row.n_pairs, row.n_higher, row.n_ties, row.n_lower, row.n_missing, row.n_incomplete) == (n, hi, tie, lo, miss, 0)
        assert row.estimate == pytest.approx(hi / n, abs=1e-15)  # a tie counts as not higher (CrowS-Pairs, lm-eval)
        ref_lo, ref_hi = proportion_confint(hi, n, alpha=0.05, method="beta")
        assert (row.ci_low, row.ci_high) == (pytest.approx(ref_lo, abs=1e-12), pytest.approx(ref_hi, abs=1e-12))
        # the sign test: higher against lower, ties left out of the test
        assert row.p_value == pytest.approx(binomtest(hi, hi + lo, 0.5).pvalue, rel=1e-12)
    groups = ["gender", "race-color", "age"]
    holm = multipletests([binomtest(expect[g][1], expect[g][1] + expect[g][3], p=0.5).pvalue for g in groups], method="holm")[1]
    assert list(res.loc[groups, "p_holm"]) == pytest.approx(list(holm), rel=1e-12)
    assert list(res.loc[groups, "family_size"]) == [3, 3, 3]
    assert res.loc["all", "p_holm"] == res.loc["all", "p_value"] and res.loc["all", "family_size"] == 1
    assert set(res["method"]) == {"clopper-pearson"} and set(res["score_column"]) == {"s"}


def test_a_pair_without_its_partner_is_counted_as_incomplete_and_the_first_row_is_first_without_more_less():
    t = pa.Table.from_pylist(
        [
            {"pair_id": "a", "variant": "original", "s": 1.0, "bias_type": "gender"},
            {"pair_id": "a", "variant": "female", "s": 0.5, "bias_type": "gender"},  # original scores higher
            {"pair_id": "b", "variant": "female", "s": 0.0, "bias_type": "gender"},
            {"pair_id": "b", "variant": "original", "s": 2.0, "bias_type": "gender"},  # b's first row (female) scores lower
            {"pair_id": "c", "variant": "original", "s": 3.0, "bias_type": "gender"},  # partner missing
        ]
    )
    row = pair_stats(t, "s").set_index("bias_type").loc["gender"]
    assert (row.n_pairs, row.n_higher, row.n_lower, row.n_incomplete) == (2, 1, 1, 1)


def test_one_set_of_rows_per_model_with_holm_within_each_model():
    a = _pairs({"x": [(1.0, 0.0)] * 6, "y": [(0.0, 1.0)] * 2}).append_column("model", pa.array(["m1"] * 16))
    b = _pairs({"x": [(0.0, 1.0)] * 3, "y": [(1.0, 0.0)] * 5}).append_column("model", pa.array(["m2"] * 16))
    res = pair_stats(pa.concat_tables([a, b]), "s")
    got = {(m, g): (n, k) for m, g, n, k in res[["model", "bias_type", "n_pairs", "n_higher"]].itertuples(index=False)}
    assert got == {("m1", "x"): (6, 6), ("m1", "y"): (2, 0), ("m1", "all"): (8, 6), ("m2", "x"): (3, 0), ("m2", "y"): (5, 5), ("m2", "all"): (8, 5)}
    m1 = res[(res.model == "m1") & (res.bias_type != "all")]
    ref = multipletests([binomtest(6, 6).pvalue, binomtest(0, 2).pvalue], method="holm")[1]
    assert list(m1.p_holm) == pytest.approx(list(ref), rel=1e-12)


@pytest.mark.parametrize(
    "table, code, says",
    [
        (pa.table({"pair_id": ["a", "a"], "s": [1.0, 2.0]}), "E431", "variant"),
        (pa.table({"pair_id": ["a", "a"], "variant": ["more", "less"], "s": ["1", "2"]}), "E432", "not numeric"),
        (pa.table({"pair_id": ["a"] * 3, "variant": ["more", "less", "x"], "s": [1.0, 2.0, 3.0]}), "E433", "3 rows"),
        (pa.table({"pair_id": ["a", "a"], "variant": ["more", "less"], "s": [1.0, 2.0], "bias_type": ["age", "gender"]}), "E434", "different"),
    ],
)
def test_tables_that_are_not_pairs_are_refused_with_a_coded_error(table, code, says):
    with pytest.raises(BiaskitError) as ei:
        pair_stats(table, "s", by="bias_type" if "bias_type" in table.column_names else None)
    assert ei.value.code == code and says in str(ei.value)


def test_ties_lower_the_share_but_never_make_an_unbiased_model_significant():
    # 10 higher, 10 lower, 30 ties: estimate = 10/50 = 0.2, yet higher and lower are equally frequent, so the sign test
    # gives p = 1; a binomial test of 10 of 50 against 1/2 would give p = 2.4e-5
    row = pair_stats(_pairs({"x": [(1.0, 0.0)] * 10 + [(0.0, 1.0)] * 10 + [(0.5, 0.5)] * 30}), "s").set_index("bias_type").loc["x"]
    assert (row.n_pairs, row.n_higher, row.n_ties, row.estimate) == (50, 10, 30, 0.2)
    assert row.p_value == 1.0 and binomtest(10, 50, 0.5).pvalue < 1e-4


def test_binomial_p_half_equals_scipy_binomtest():
    ks, ns = np.array([0, 1, 3, 5, 7, 50, 1000, 61, 2]), np.array([1, 1, 10, 10, 10, 120, 1900, 100, 3])
    assert list(binomial_p_half(ks, ns)) == pytest.approx([binomtest(int(k), int(n), 0.5).pvalue for k, n in zip(ks, ns)], rel=1e-12)
    assert np.isnan(binomial_p_half(0, 0))


def test_cli_stats_pairs_writes_one_row_per_bias_type_and_all(tmp_path):
    from biaskit.cli import app
    from biaskit.io import write_table

    src = tmp_path / "scored.parquet"
    write_table(_pairs(SPEC), src)
    out = tmp_path / "pairs.csv"
    res = CliRunner().invoke(app, ["stats", "pairs", str(src), "--score-column", "s", "--by", "bias_type", "--out", str(out)])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(out)
    assert list(df["bias_type"]) == ["gender", "race-color", "age", "all"] and list(df["n_ties"]) == [1, 0, 0, 1]
