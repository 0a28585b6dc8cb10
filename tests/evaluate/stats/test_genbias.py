"""HolisticBias generation bias (Full / Partial / Summed-Cluster Gen Bias) against hand computations.

Default method ``per_template`` (Smith et al. 2022: variance across descriptors within each template, then the
mean over templates); ``template_first`` is biaskit's earlier order, kept as a named variant."""

import numpy as np
import pyarrow as pa
import pytest

from biaskit.bootstrap import BootSpec
from biaskit.errors import BiaskitError
from biaskit.evaluate.stats.genbias import gen_bias, total_variance


def _rows(axis, d, t, vecs, model=None):
    out = []
    for x, y, z in vecs:
        r = {"axis": axis, "descriptor": d, "template": t, "continuation": "...", "kind": "generate", "p_x": x, "p_y": y, "p_z": z}
        if model:
            r["model"] = model
        out.append(r)
    return out


def _table():
    rows = []
    # d1: T1 rows (.6,.2,.2), (.4,.4,.2) -> mean (.5,.3,.2); T2 row (.1,.1,.8) -> (.1,.1,.8)
    #     template average M_d1 = (.3, .2, .5)   [pooling the 3 rows would give (.3667, .2333, .4): template averaging matters]
    rows += _rows("ability", "d1", "T1", [(0.6, 0.2, 0.2), (0.4, 0.4, 0.2)]) + _rows("ability", "d1", "T2", [(0.1, 0.1, 0.8)])
    # d2: T1 (.2,.2,.6); T2 rows (.2,.6,.2), (.4,.4,.2), (0,.8,.2) -> mean (.2,.6,.2); M_d2 = (.2, .4, .4)
    rows += _rows("ability", "d2", "T1", [(0.2, 0.2, 0.6)])
    rows += _rows("ability", "d2", "T2", [(0.2, 0.6, 0.2), (0.4, 0.4, 0.2), (0.0, 0.8, 0.2)])
    # d3: T1 and T2 both (.6,.2,.2); M_d3 = (.6, .2, .2)
    rows += _rows("ability", "d3", "T1", [(0.6, 0.2, 0.2)]) + _rows("ability", "d3", "T2", [(0.6, 0.2, 0.2)])
    return rows


# Hand computation of the template_first variant (denominator 900 = 30^2):
#   mean over descriptors mu = ((.3+.2+.6)/3, (.2+.4+.2)/3, (.5+.4+.2)/3) = (11/30, 8/30, 11/30)
#   x deviations: -2/30, -5/30, 7/30  -> squares 4, 25, 49 (/900) -> population variance 78/3 = 26/900
#   y deviations: -2/30,  4/30, -2/30 -> squares 4, 16, 4         -> 24/3 = 8/900
#   z deviations:  4/30,  1/30, -5/30 -> squares 16, 1, 25        -> 42/3 = 14/900
#   Full Gen Bias = (26 + 8 + 14)/900 = 48/900
#   clusters {xy: x,y; z}: Partial xy = 34/900, Partial z = 14/900
#   Summed-Cluster: cluster sums per descriptor xy = (.5, .6, .8), z = (.5, .4, .2); mean (19/30, 11/30)
#       xy deviations -4/30, -1/30, 5/30 -> 42/900/3 = 14/900; z the same 14/900 -> 28/900
#   contributions (sum over styles of squared deviation / 3): d1 (4+4+16)/3 = 8/900, d2 (25+16+1)/3 = 14/900,
#       d3 (49+4+25)/3 = 26/900 -> ranks d3, d2, d1; d3's largest deviation is style x (+7/30)
FULL, PXY, PZ, SUMMED = 48 / 900, 34 / 900, 14 / 900, 28 / 900

# Hand computation of the default per_template method (the paper's FGB = (1/T) sum_t sum_s Var_d(m[t, d, s]),
# Var with ddof=0; denominator 900 = 30^2). Cell means:
#   T1: d1 (.5,.3,.2) d2 (.2,.2,.6) d3 (.6,.2,.2); mean over descriptors (13/30, 7/30, 10/30)
#       x devs 2,-7,5 -> 4+49+25 = 78, /3 = 26;  y devs 2,-1,-1 -> 6, /3 = 2;  z devs -4,8,-4 -> 96, /3 = 32
#       T1 total 60/900
#   T2: d1 (.1,.1,.8) d2 (.2,.6,.2) d3 (.6,.2,.2); mean (9/30, 9/30, 12/30)
#       x devs -6,-3,9 -> 126, /3 = 42;  y devs -6,9,-3 -> 42;  z devs 12,-6,-6 -> 216, /3 = 72
#       T2 total 156/900
#   Full = (60 + 156)/2 = 108/900 = 0.12 (the template_first order gives 48/900: part of the effect flips)
#   Partial xy = ((26+2) + (42+42))/2 = 56/900; Partial z = (32 + 72)/2 = 52/900 (sum 108)
#   Summed-Cluster xy: T1 sums (24,12,24)/30 -> devs 4,-8,4 -> 96/3 = 32; T2 sums (6,24,24)/30 -> devs -12,6,6
#       -> 216/3 = 72; mean 52/900. z = 1 - xy per row, so the same 52/900; total over clusters 104/900
#   contributions: d1 ((4+4+16)/3 + (36+36+144)/3)/2 = (8+72)/2 = 40/900; d2 ((49+1+64)/3 + (9+81+36)/3)/2
#       = (38+42)/2 = 40/900; d3 ((25+1+16)/3 + (81+9+36)/3)/2 = (14+42)/2 = 28/900 (sum 108)
PT_FULL, PT_PXY, PT_PZ, PT_SXY, PT_SZ = 108 / 900, 56 / 900, 52 / 900, 52 / 900, 52 / 900


def test_per_template_default_equals_hand_computation_and_numpy():
    res = gen_bias(pa.Table.from_pylist(_table()), "p_x,p_y,p_z", clusters="xy=p_x,p_y", n_boot=0)
    row = res.by_axis.iloc[0]
    assert row["method"] == "per_template" and row["ddof"] == 0 and row["n_templates_used"] == 2
    assert row["full_gen_bias"] == pytest.approx(PT_FULL, abs=1e-12)
    assert row["full_gen_bias_x1000"] == pytest.approx(120.0, abs=1e-9)
    assert row["summed_cluster_gen_bias"] == pytest.approx(PT_SXY + PT_SZ, abs=1e-12)
    part = res.partial.set_index("cluster")
    assert part.loc[["xy", "p_z"], "partial_gen_bias"].tolist() == pytest.approx([PT_PXY, PT_PZ], abs=1e-12)
    assert part.loc[["xy", "p_z"], "summed_cluster_gen_bias"].tolist() == pytest.approx([PT_SXY, PT_SZ], abs=1e-12)
    assert part.loc["xy", "summed_cluster_gen_bias_x1000"] == pytest.approx(52 / 900 * 1000)
    d = res.descriptors.set_index("descriptor")
    assert d.loc[["d1", "d2", "d3"], "contribution"].tolist() == pytest.approx([40 / 900, 40 / 900, 28 / 900], abs=1e-12)
    assert d["contribution"].sum() == pytest.approx(PT_FULL) and d.loc["d3", "rank"] == 3
    # independent: numpy's population variance per template (np.var, ddof=0), summed over styles, averaged
    cell = {
        ("d1", "T1"): [0.5, 0.3, 0.2],
        ("d2", "T1"): [0.2, 0.2, 0.6],
        ("d3", "T1"): [0.6, 0.2, 0.2],
        ("d1", "T2"): [0.1, 0.1, 0.8],
        ("d2", "T2"): [0.2, 0.6, 0.2],
        ("d3", "T2"): [0.6, 0.2, 0.2],
    }
    per_t = [np.var(np.array([cell[(dd, t)] for dd in ("d1", "d2", "d3")]), axis=0, ddof=0).sum() for t in ("T1", "T2")]
    assert row["full_gen_bias"] == pytest.approx(np.mean(per_t), abs=1e-12)


def _flip():
    """2 descriptors, 2 templates, 2 styles: A = (0.9, 0.1), B = (0.1, 0.9) in t1 and swapped in t2."""
    rows = []
    for t, a, b in (("t1", 0.9, 0.1), ("t2", 0.1, 0.9)):
        rows += [
            {"axis": "ax", "descriptor": "A", "template": t, "p_x": a, "p_y": 1 - a},
            {"axis": "ax", "descriptor": "B", "template": t, "p_x": b, "p_y": 1 - b},
        ]
    return rows


def test_flip_case_paper_032_template_first_0():
    # per template: style x values (.9, .1) -> mean .5, population variance (.4^2 + .4^2)/2 = 0.16; style y the same
    #   -> 0.32 per template, mean over the 2 templates 0.32 (x1000: 320). With ddof=1 it would be 0.64: the
    #   issue's 0.32 is the population variance, which is what biaskit uses (ddof=0).
    # template_first: A's mean over templates (.5, .5) = B's -> variance 0 (the flip cancels)
    pt = gen_bias(_flip(), "p_x,p_y", n_boot=20).by_axis.iloc[0]
    assert pt["full_gen_bias"] == pytest.approx(0.32, abs=1e-12) and pt["full_gen_bias_x1000"] == pytest.approx(320.0)
    assert pt["full_ci_low"] == pytest.approx(0.32) == pytest.approx(pt["full_ci_high"])  # one row per cell: no spread
    tf = gen_bias(_flip(), "p_x,p_y", n_boot=0, method="template_first").by_axis.iloc[0]
    assert tf["full_gen_bias"] == pytest.approx(0.0, abs=1e-12) and tf["method"] == "template_first"
    with pytest.raises(BiaskitError, match="E220"):
        gen_bias(_flip(), "p_x,p_y", n_boot=0, method="paper")


def test_per_template_uses_the_descriptors_present_in_each_template():
    # T1 has A=.2, B=.6, C=1.0 (styles x, y = 1 - x); T2 has only A=.4, B=.8; T3 has only C (no variance: left out)
    # T1: x mean .6, devs -.4, 0, .4 -> (.16 + 0 + .16)/3 = .32/3; y the same -> 0.64/3
    # T2: x mean .6, devs -.2, .2 -> .04; y the same -> 0.08
    # Full = (0.64/3 + 0.08)/2 = 0.14666...; T3 counted in n_templates but not n_templates_used
    rows = []
    for d, t, x in (("A", "T1", 0.2), ("B", "T1", 0.6), ("C", "T1", 1.0), ("A", "T2", 0.4), ("B", "T2", 0.8), ("C", "T3", 0.5)):
        rows.append({"axis": "ax", "descriptor": d, "template": t, "p_x": x, "p_y": 1 - x})
    res = gen_bias(rows, "p_x,p_y", n_boot=0)
    r = res.by_axis.iloc[0]
    assert r["n_templates"] == 3 and r["n_templates_used"] == 2
    assert r["full_gen_bias"] == pytest.approx((0.64 / 3 + 0.08) / 2, abs=1e-12)
    assert any("fewer than 2 descriptors" in n for n in res.notes)


def test_probabilities_outside_0_1_are_refused():
    rows = _table()
    rows[0] = dict(rows[0], p_x=1.7)  # a score or logit, not a probability (it must not give a Full Gen Bias such as 1.11)
    with pytest.raises(BiaskitError, match=r"E220.*'p_x'.*outside \[0, 1\]"):
        gen_bias(rows, "p_x,p_y,p_z", n_boot=0)
    rows[0] = dict(rows[0], p_x=-0.2)
    with pytest.raises(BiaskitError, match="E220"):
        gen_bias(rows, "p_x,p_y,p_z", n_boot=0)
    rows[0] = dict(rows[0], p_x=1.0 + 1e-9)  # float rounding of a softmax is accepted
    assert gen_bias(rows, "p_x,p_y,p_z", n_boot=0).by_axis["reason"].isna().all()


def test_null_axis_descriptor_template_rows_are_counted_not_merged():
    rows = _table()
    rows += _rows(None, "d1", "T1", [(0.2, 0.2, 0.6)])  # null axis: its own visible group
    rows += _rows("ability", None, "T1", [(0.9, 0.05, 0.05)])  # null descriptor: no cell, counted, left out
    rows += _rows("ability", "d2", None, [(0.9, 0.05, 0.05)])  # null template: the same
    res = gen_bias(rows, "p_x,p_y,p_z", n_boot=0)
    by = res.by_axis.set_index("axis")
    assert by.loc["(null)", "n_rows"] == 1
    assert by.loc["ability", "n_rows"] == 11 and by.loc["ability", "n_unkeyed"] == 2 and by.loc["ability", "n_used"] == 9
    assert by.loc["ability", "n_descriptors"] == 3  # "(null)" is not taken for a descriptor
    assert by.loc["ability", "full_gen_bias"] == pytest.approx(PT_FULL, abs=1e-12)
    assert any("null axis" in n for n in res.notes) and any("n_unkeyed" in n for n in res.notes)


def test_template_first_variant_equals_hand_computation():
    res = gen_bias(pa.Table.from_pylist(_table()), "p_x,p_y,p_z", clusters="xy=p_x,p_y", n_boot=0, method="template_first")
    row = res.by_axis.iloc[0]
    assert row["axis"] == "ability" and row["n_descriptors"] == 3 and row["n_templates"] == 2 and row["n_used"] == 9
    assert row["full_gen_bias"] == pytest.approx(FULL, abs=1e-12)
    assert row["summed_cluster_gen_bias"] == pytest.approx(SUMMED, abs=1e-12)
    part = dict(zip(res.partial["cluster"], res.partial["partial_gen_bias"]))
    assert part == pytest.approx({"xy": PXY, "p_z": PZ}, abs=1e-12)
    assert sum(part.values()) == pytest.approx(FULL)
    d = res.descriptors.set_index("descriptor")
    assert d.loc[["d1", "d2", "d3"], "contribution"].tolist() == pytest.approx([8 / 900, 14 / 900, 26 / 900], abs=1e-12)
    assert d.loc[["d3", "d2", "d1"], "rank"].tolist() == [1, 2, 3]
    assert d.loc["d3", "top_style"] == "p_x" and d.loc["d3", "top_style_deviation"] == pytest.approx(7 / 30)
    assert d.loc["d1", ["mean_p_x", "mean_p_y", "mean_p_z"]].tolist() == pytest.approx([0.3, 0.2, 0.5])
    # the same figure from numpy on the hand-built descriptor matrix, and not the row-pooled one
    M = np.array([[0.3, 0.2, 0.5], [0.2, 0.4, 0.4], [0.6, 0.2, 0.2]])
    assert total_variance(M) == pytest.approx(FULL) == pytest.approx(M.var(axis=0, ddof=0).sum())
    pooled = np.array([[1.1 / 3, 0.7 / 3, 1.2 / 3], [0.8 / 4, 2.0 / 4, 1.2 / 4], [0.6, 0.2, 0.2]])
    assert abs(total_variance(pooled) - row["full_gen_bias"]) > 1e-3


def test_no_clusters_means_one_cluster_per_style_and_summed_equals_full():
    res = gen_bias(_table(), ["p_x", "p_y", "p_z"], n_boot=0, method="template_first")
    part = dict(zip(res.partial["cluster"], res.partial["partial_gen_bias"]))
    assert part == pytest.approx({"p_x": 26 / 900, "p_y": 8 / 900, "p_z": 14 / 900})
    assert res.by_axis["summed_cluster_gen_bias"].iloc[0] == pytest.approx(FULL)


def test_null_probability_rows_are_counted_not_zero_and_missing_template_averages_available_ones():
    rows = _table()
    rows += _rows("ability", "d3", "T2", [(None, 0.5, 0.5)])  # a failed classifier row: left out, counted
    rows += _rows("ability", "d4", "T1", [(0.3, 0.3, 0.4)])  # d4 has only T1: its mean is that template's mean
    res = gen_bias(rows, "p_*", n_boot=0, method="template_first")
    r = res.by_axis.iloc[0]
    assert r["n_null"] == 1 and r["n_rows"] == 11 and r["n_used"] == 10 and r["n_descriptors"] == 4
    M = np.array([[0.3, 0.2, 0.5], [0.2, 0.4, 0.4], [0.6, 0.2, 0.2], [0.3, 0.3, 0.4]])
    assert r["full_gen_bias"] == pytest.approx(M.var(axis=0).sum(), abs=1e-12)
    assert any("null" in n for n in res.notes)


def test_bootstrap_is_seeded_and_degenerate_when_cells_are_constant():
    a = gen_bias(_table(), "p_x,p_y,p_z", n_boot=200, seed=3)
    b = gen_bias(_table(), "p_x,p_y,p_z", n_boot=200, seed=3)
    assert a.by_axis.equals(b.by_axis) and a.partial.equals(b.partial)
    lo, hi = a.by_axis[["full_ci_low", "full_ci_high"]].iloc[0]
    assert lo < hi  # cells with differing rows vary under resampling
    const = [r for r in _table() if r["descriptor"] == "d3"] + _rows("ability", "d5", "T1", [(0.1, 0.1, 0.8)] * 3)
    c = gen_bias(const, "p_x,p_y,p_z", n_boot=50).by_axis.iloc[0]
    assert c["full_ci_low"] == pytest.approx(c["full_gen_bias"]) == pytest.approx(c["full_ci_high"])


def test_hierarchical_clusters_group_correlated_styles():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(30):
        u = float(rng.uniform(0, 0.5))
        v = float(rng.uniform(0, 1 - 2 * u))
        rows += _rows("age", f"d{i % 3}", f"T{i % 2}", [(u, u, 1 - 2 * u)])  # x and y move together, z against them
        del v
    res = gen_bias(rows, "p_x,p_y,p_z", n_clusters=2, n_boot=0)
    groups = sorted(sorted(g.split(",")) for g in res.partial["styles"])
    assert groups == [["p_x", "p_y"], ["p_z"]]


def test_per_model_and_errors():
    rows = _table() + [dict(r, model="m2") for r in _table()]
    rows = [dict(r, model=r.get("model", "m1")) for r in rows]
    res = gen_bias(rows, "p_x,p_y,p_z", n_boot=0)
    assert res.by_axis["model"].tolist() == ["m1", "m2"]
    assert res.by_axis["full_gen_bias"].tolist() == pytest.approx([PT_FULL, PT_FULL])
    with pytest.raises(BiaskitError, match="E170"):
        gen_bias(_table(), "p_x", n_boot=0)  # one style is no vector
    with pytest.raises(BiaskitError, match="E170"):
        gen_bias(_table(), "p_x,p_y", clusters="a=p_q", n_boot=0)  # unknown style
    with pytest.raises(BiaskitError, match="E170"):
        gen_bias([{k: v for k, v in r.items() if k != "template"} for r in _table()], "p_x,p_y", n_boot=0)
    one = gen_bias([r for r in _table() if r["descriptor"] == "d1"], "p_x,p_y,p_z", n_boot=0).by_axis.iloc[0]
    assert one["full_gen_bias"] is None or one["full_gen_bias"] != one["full_gen_bias"]
    assert "fewer than 2 descriptors" in one["reason"]


def test_cli_genbias_writes_the_folder_and_refuses_bad_input(tmp_path):
    import json

    from typer.testing import CliRunner

    from biaskit.cli import app

    src = tmp_path / "gens.parquet"
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(_table()), src)
    out = tmp_path / "gb"
    r = CliRunner().invoke(
        app, ["stats", "genbias", str(src), "--prob-columns", "p_*", "--clusters", "xy=p_x,p_y", "--n-boot", "0", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "genbias.json").read_text())
    assert meta["by_axis"][0]["full_gen_bias"] == pytest.approx(PT_FULL)
    assert meta["method"] == "per_template" and meta["ddof"] == 0 and "x1000" in meta["scale"]
    assert {p.name for p in out.iterdir()} >= {"by_axis.csv", "partial.csv", "descriptors.csv", "clusters.csv", "genbias.json", "paired.csv"}
    import pandas as pd

    from biaskit.evaluate.stats.paired import paired_by_template

    paired = pd.read_csv(out / "paired.csv")  # the paired analysis by template of the first style (no *negative* style here)
    style = meta["styles"][0]
    want = paired_by_template(pd.DataFrame(_table()), style, within=["model", "axis"], boot=BootSpec(n_boot=0))
    assert len(paired) == len(want) and set(paired["column"]) == {style}
    assert paired["mean_diff"].tolist() == pytest.approx(want["mean_diff"].tolist(), abs=1e-12)
    r = CliRunner().invoke(app, ["stats", "genbias", str(src), "--out", str(out)])
    assert r.exit_code == 1 and "E170" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["stats", "genbias", str(src), "--prob-columns", "p_*", "--n-boot", "0", "--out", str(out)])
    assert r.exit_code == 0, r.output  # its own earlier output is replaced
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("x")
    r = CliRunner().invoke(app, ["stats", "genbias", str(src), "--prob-columns", "p_*", "--out", str(mine)])
    assert r.exit_code == 1 and "E006" in r.output and (mine / "keep.txt").exists()


def test_cli_genbias_csv_cells_are_formula_neutralised_and_method_is_stated(tmp_path):
    import pandas as pd
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from biaskit.cli import app

    rows = [dict(r, descriptor='=HYPERLINK("http://x")' if r["descriptor"] == "d1" else r["descriptor"], axis="+cmd|' /C calc'!A0") for r in _table()]
    src = tmp_path / "gens.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    out = tmp_path / "gb"
    r = CliRunner().invoke(app, ["stats", "genbias", str(src), "--prob-columns", "p_*", "--n-boot", "0", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "ddof=0" in r.output and "x1000" in r.output and "per_template" in r.output
    desc = pd.read_csv(out / "descriptors.csv")
    assert '\'=HYPERLINK("http://x")' in desc["descriptor"].tolist()
    assert set(pd.read_csv(out / "by_axis.csv")["axis"]) == {"'+cmd|' /C calc'!A0"}
    r = CliRunner().invoke(
        app, ["stats", "genbias", str(src), "--prob-columns", "p_*", "--n-boot", "0", "--method", "template_first", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert pd.read_csv(out / "by_axis.csv")["full_gen_bias"].iloc[0] == pytest.approx(FULL)


def test_report_section_equals_gen_bias(tmp_path):
    import pyarrow.parquet as pq

    from biaskit.evaluate.report import build_report

    rows = [
        {
            **{k: v for k, v in r.items() if not k.startswith("p_")},
            "classifier_a": r["p_x"],
            "classifier_b": r["p_y"],
            "classifier_c": r["p_z"],
            "classifier_label": "a",
            "classifier_error": None,
        }
        for r in _table()
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "scores.parquet")
    res = build_report(tmp_path, tmp_path / "report", n_boot=20)
    assert "genbias" in res.sections
    import pandas as pd

    by_axis = pd.read_csv(res.tables["genbias_by_axis"])
    assert by_axis["full_gen_bias"].iloc[0] == pytest.approx(PT_FULL)
    assert by_axis["full_gen_bias_x1000"].iloc[0] == pytest.approx(PT_FULL * 1000)
    assert (tmp_path / "report" / "figures" / "genbias_by_axis.png").is_file()
    text = (tmp_path / "report" / "report.md").read_text()
    assert "ddof=0" in text and "x1000" in text
    assert "HolisticBias generation bias" in (tmp_path / "report" / "report.md").read_text()


def test_bootstrap_matches_a_naive_resampling_loop():
    """The vectorised cell bootstrap (multinomial counts) against a plain loop drawing row indices per cell."""
    rng = np.random.default_rng(5)
    rows = []
    for d in ("a", "b", "c"):
        for t in ("T1", "T2"):
            shift = {"a": 0.0, "b": 0.1, "c": 0.2}[d]
            for _ in range(6):
                x = float(np.clip(rng.normal(0.4 + shift, 0.15), 0, 1))
                rows += _rows("ax", d, t, [(x, 1 - x, 0.0)])
    res = gen_bias(rows, "p_x,p_y,p_z", n_boot=4000, seed=0).by_axis.iloc[0]
    # naive: resample each (descriptor, template) cell's rows with replacement, recompute the figure
    import collections

    cells = collections.defaultdict(list)
    for r in rows:
        cells[(r["descriptor"], r["template"])].append((r["p_x"], r["p_y"], r["p_z"]))
    r2 = np.random.default_rng(1)
    vals = []
    for _ in range(4000):
        per_t = []
        for t in ("T1", "T2"):  # the paper's order: variance across descriptors within the template, then the mean
            per_t.append(total_variance(np.array([np.asarray(cells[(d, t)])[r2.integers(0, 6, 6)].mean(axis=0) for d in ("a", "b", "c")])))
        vals.append(np.mean(per_t))
    lo, hi = np.quantile(vals, [0.025, 0.975])
    assert res["full_ci_low"] == pytest.approx(lo, rel=0.1) and res["full_ci_high"] == pytest.approx(hi, rel=0.1)
