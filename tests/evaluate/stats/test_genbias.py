"""HolisticBias generation bias (Full / Partial / Summed-Cluster Gen Bias) against a hand computation."""

import numpy as np
import pyarrow as pa
import pytest

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
    rows += _rows("ability", "d1", "T1", [(.6, .2, .2), (.4, .4, .2)]) + _rows("ability", "d1", "T2", [(.1, .1, .8)])
    # d2: T1 (.2,.2,.6); T2 rows (.2,.6,.2), (.4,.4,.2), (0,.8,.2) -> mean (.2,.6,.2); M_d2 = (.2, .4, .4)
    rows += _rows("ability", "d2", "T1", [(.2, .2, .6)])
    rows += _rows("ability", "d2", "T2", [(.2, .6, .2), (.4, .4, .2), (0.0, .8, .2)])
    # d3: T1 and T2 both (.6,.2,.2); M_d3 = (.6, .2, .2)
    rows += _rows("ability", "d3", "T1", [(.6, .2, .2)]) + _rows("ability", "d3", "T2", [(.6, .2, .2)])
    return rows


# Hand computation (denominator 900 = 30^2):
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


def test_full_partial_summed_equal_hand_computation():
    res = gen_bias(pa.Table.from_pylist(_table()), "p_x,p_y,p_z", clusters="xy=p_x,p_y", n_boot=0)
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
    assert d.loc["d1", ["mean_p_x", "mean_p_y", "mean_p_z"]].tolist() == pytest.approx([.3, .2, .5])
    # the same figure from numpy on the hand-built descriptor matrix, and not the row-pooled one
    M = np.array([[.3, .2, .5], [.2, .4, .4], [.6, .2, .2]])
    assert total_variance(M) == pytest.approx(FULL) == pytest.approx(M.var(axis=0, ddof=0).sum())
    pooled = np.array([[1.1 / 3, 0.7 / 3, 1.2 / 3], [.8 / 4, 2.0 / 4, 1.2 / 4], [.6, .2, .2]])
    assert abs(total_variance(pooled) - row["full_gen_bias"]) > 1e-3


def test_no_clusters_means_one_cluster_per_style_and_summed_equals_full():
    res = gen_bias(_table(), ["p_x", "p_y", "p_z"], n_boot=0)
    part = dict(zip(res.partial["cluster"], res.partial["partial_gen_bias"]))
    assert part == pytest.approx({"p_x": 26 / 900, "p_y": 8 / 900, "p_z": 14 / 900})
    assert res.by_axis["summed_cluster_gen_bias"].iloc[0] == pytest.approx(FULL)


def test_null_probability_rows_are_counted_not_zero_and_missing_template_averages_available_ones():
    rows = _table()
    rows += _rows("ability", "d3", "T2", [(None, .5, .5)])          # a failed classifier row: left out, counted
    rows += _rows("ability", "d4", "T1", [(.3, .3, .4)])            # d4 has only T1: its mean is that template's mean
    res = gen_bias(rows, "p_*", n_boot=0)
    r = res.by_axis.iloc[0]
    assert r["n_null"] == 1 and r["n_rows"] == 11 and r["n_used"] == 10 and r["n_descriptors"] == 4
    M = np.array([[.3, .2, .5], [.2, .4, .4], [.6, .2, .2], [.3, .3, .4]])
    assert r["full_gen_bias"] == pytest.approx(M.var(axis=0).sum(), abs=1e-12)
    assert any("null" in n for n in res.notes)


def test_bootstrap_is_seeded_and_degenerate_when_cells_are_constant():
    a = gen_bias(_table(), "p_x,p_y,p_z", n_boot=200, seed=3)
    b = gen_bias(_table(), "p_x,p_y,p_z", n_boot=200, seed=3)
    assert a.by_axis.equals(b.by_axis) and a.partial.equals(b.partial)
    lo, hi = a.by_axis[["full_ci_low", "full_ci_high"]].iloc[0]
    assert lo < hi  # cells with differing rows vary under resampling
    const = [r for r in _table() if r["descriptor"] == "d3"] + _rows("ability", "d5", "T1", [(.1, .1, .8)] * 3)
    c = gen_bias(const, "p_x,p_y,p_z", n_boot=50).by_axis.iloc[0]
    assert c["full_ci_low"] == pytest.approx(c["full_gen_bias"]) == pytest.approx(c["full_ci_high"])


def test_hierarchical_clusters_group_correlated_styles():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(30):
        u = float(rng.uniform(0, .5))
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
    assert res.by_axis["full_gen_bias"].tolist() == pytest.approx([FULL, FULL])
    with pytest.raises(BiaskitError, match="E170"):
        gen_bias(_table(), "p_x", n_boot=0)                       # one style is no vector
    with pytest.raises(BiaskitError, match="E170"):
        gen_bias(_table(), "p_x,p_y", clusters="a=p_q", n_boot=0)  # unknown style
    with pytest.raises(BiaskitError, match="E170"):
        gen_bias([{k: v for k, v in r.items() if k != "template"} for r in _table()], "p_x,p_y", n_boot=0)
    one = gen_bias([r for r in _table() if r["descriptor"] == "d1"], "p_x,p_y,p_z", n_boot=0).by_axis.iloc[0]
    assert one["full_gen_bias"] is None or one["full_gen_bias"] != one["full_gen_bias"]
    assert "fewer than 2 descriptors" in one["error"]


def test_cli_genbias_writes_the_folder_and_refuses_bad_input(tmp_path):
    import json

    from typer.testing import CliRunner

    from biaskit.cli import app

    src = tmp_path / "gens.parquet"
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(_table()), src)
    out = tmp_path / "gb"
    r = CliRunner().invoke(app, ["stats", "genbias", str(src), "--prob-columns", "p_*", "--clusters", "xy=p_x,p_y", "--n-boot", "0",
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "genbias.json").read_text())
    assert meta["by_axis"][0]["full_gen_bias"] == pytest.approx(FULL)
    assert {p.name for p in out.iterdir()} >= {"by_axis.csv", "partial.csv", "descriptors.csv", "clusters.csv", "genbias.json"}
    r = CliRunner().invoke(app, ["stats", "genbias", str(src), "--out", str(out)])
    assert r.exit_code == 1 and "E170" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["stats", "genbias", str(src), "--prob-columns", "p_*", "--n-boot", "0", "--out", str(out)])
    assert r.exit_code == 0, r.output  # its own earlier output is replaced
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "keep.txt").write_text("x")
    r = CliRunner().invoke(app, ["stats", "genbias", str(src), "--prob-columns", "p_*", "--out", str(mine)])
    assert r.exit_code == 1 and "E006" in r.output and (mine / "keep.txt").exists()


def test_report_section_equals_gen_bias(tmp_path):
    import pyarrow.parquet as pq

    from biaskit.evaluate.report import build_report

    rows = [{**{k: v for k, v in r.items() if not k.startswith("p_")}, "classifier_a": r["p_x"], "classifier_b": r["p_y"],
             "classifier_c": r["p_z"], "classifier_label": "a", "classifier_error": None} for r in _table()]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "scores.parquet")
    res = build_report(tmp_path, tmp_path / "report", n_boot=20)
    assert "genbias" in res.sections
    import pandas as pd

    by_axis = pd.read_csv(res.tables["genbias_by_axis"])
    assert by_axis["full_gen_bias"].iloc[0] == pytest.approx(FULL)
    assert (tmp_path / "report" / "figures" / "genbias_by_axis.png").is_file()
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
        M = []
        for d in ("a", "b", "c"):
            M.append(np.mean([np.asarray(cells[(d, t)])[r2.integers(0, 6, 6)].mean(axis=0) for t in ("T1", "T2")], axis=0))
        vals.append(total_variance(np.array(M)))
    lo, hi = np.quantile(vals, [0.025, 0.975])
    assert res["full_ci_low"] == pytest.approx(lo, rel=0.1) and res["full_ci_high"] == pytest.approx(hi, rel=0.1)
