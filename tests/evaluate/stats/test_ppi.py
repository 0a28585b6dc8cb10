"""Prediction-powered inference: equality with ppi_py 0.2.3, the round join, and coverage by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats.ppi import PPIShare, gap, ppi_gap_rows, ppi_lambda, ppi_mean, ppi_mean_batch, ppi_shares, ppi_table

ppi_py = pytest.importorskip("ppi_py")  # the dev extra installs ppi-python 0.2.3 (scripts/setup.sh); CI fails on a skip


def _data(rng, n, big_n, p=0.3, acc=0.8):
    y = (rng.random(n) < p).astype(float)
    yh = np.where(rng.random(n) < acc, y, 1 - y)
    yu = (rng.random(big_n) < p + 0.05).astype(float)
    return y, yh, yu


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.37])
@pytest.mark.parametrize("seed", range(4))
def test_ppi_mean_equals_ppi_py(lam, seed):
    rng = np.random.default_rng(seed)
    y, yh, yu = _data(rng, int(rng.integers(10, 300)), int(rng.integers(20, 3000)))
    r = ppi_mean(y, yh, yu, lam=lam)
    pe = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yh, yu, lam=lam)))
    lo, hi = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y, yh, yu, alpha=0.05, lam=lam))
    assert abs(r["estimate"] - pe) < 1e-9
    assert abs(r["ci_low"] - lo) < 1e-9 and abs(r["ci_high"] - hi) < 1e-9
    assert r["method"] == ("ppi++-wald" if lam is None else "ppi-wald")
    if lam is None:
        # PPI++'s lambda by hand (statistics.md): cov (1/n) / ((1 + n/N) var of all predictions, ddof 1), clipped
        n, big_n = y.size, yu.size
        cov = np.mean((y - y.mean()) * (yh - yh.mean()))
        want = np.clip(cov / ((1 + n / big_n) * np.var(np.concatenate([yh, yu]), ddof=1)), 0, 1)
        assert r["lam"] == pytest.approx(want, abs=1e-15) == ppi_lambda(y, yh, yu)


def _frame(rng, groups, n_rows=400, n_lab=80, recall=None):
    rows = []
    for g in groups:
        truth = rng.random(n_rows) < 0.3
        rec = (recall or {}).get(g, 0.9)
        pred = np.where(truth, rng.random(n_rows) < rec, rng.random(n_rows) < 0.05)
        lab = np.zeros(n_rows, bool)
        lab[rng.choice(n_rows, n_lab, replace=False)] = True
        for t, p, l in zip(truth, pred, lab):
            rows.append({"group": g, "vader_label": "negative" if p else "positive", "human": ("negative" if t else "positive") if l else None})
    return pd.DataFrame(rows)


def test_stats_ppi_cli_rows_equal_ppi_py(tmp_path):
    from typer.testing import CliRunner

    from biaskit.cli import app

    df = _frame(np.random.default_rng(1), ["a", "b", "c"])
    src = tmp_path / "scores.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "ppi.csv"
    args = [
        "stats",
        "ppi",
        str(src),
        "--metric-column",
        "vader_label",
        "--human-column",
        "human",
        "--label",
        "negative",
        "--by",
        "group",
        "--out",
        str(out),
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    t = pd.read_csv(out)
    assert set(t["measure"]) == {"share_metric", "share_human", "share_ppi", "gap_metric", "gap_human", "gap_ppi"}
    se = {}
    for g in ("a", "b", "c"):
        sub = df[df["group"] == g]
        lab = sub["human"].notna()
        y = (sub.loc[lab, "human"] == "negative").to_numpy(float)
        yh = (sub.loc[lab, "vader_label"] == "negative").to_numpy(float)
        yu = (sub.loc[~lab, "vader_label"] == "negative").to_numpy(float)
        row = t[(t["group"] == g) & (t["measure"] == "share_ppi")].iloc[0]
        lo, hi = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y, yh, yu, alpha=0.05))
        assert abs(row["estimate"] - float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yh, yu)))) < 1e-9
        assert abs(row["ci_low"] - lo) < 1e-9 and abs(row["ci_high"] - hi) < 1e-9
        assert row["n_labelled"] == 80 and row["n_unlabelled"] == 320 and row["method"] == "ppi++-wald"
        se[g] = (row["estimate"], (hi - lo) / (2 * 1.959963984540054))
    g = t[(t["measure"] == "gap_ppi") & (t["group_a"] == "a") & (t["group_b"] == "b")].iloc[0]
    assert abs(g["estimate"] - (se["a"][0] - se["b"][0])) < 1e-12
    assert abs(g["ci_high"] - g["estimate"] - 1.959963984540054 * np.hypot(se["a"][1], se["b"][1])) < 1e-9
    # classic PPI with --lam 1
    res = CliRunner().invoke(app, [*args, "--lam", "1"])
    assert res.exit_code == 0, res.output
    t1 = pd.read_csv(out)
    assert set(t1.loc[t1["measure"] == "share_ppi", "lam"]) == {1.0}


def test_stats_ppi_from_a_round_joins_samples_by_biaskit_ids(tmp_path):
    from typer.testing import CliRunner

    from biaskit.annotate.sampling import make_sample_id
    from biaskit.cli import app

    rng = np.random.default_rng(2)
    df = _frame(rng, ["a", "b"], n_rows=120, n_lab=30)
    df["prompt_id"] = [f"p{i}" for i in range(len(df))]
    df["model"] = "m"
    scored = df.drop(columns="human")
    lab = df[df["human"].notna()]
    samples = pd.DataFrame(
        {
            "sample_id": [make_sample_id(p) for p in lab["prompt_id"]],
            "prompt_id": lab["prompt_id"],
            "model": "m",
            "round": "r1",
            "task_type": "sentiment",
            "text": "x",
        }
    )
    ann = pd.DataFrame(
        [{"sample_id": s, "round": "r1", "annotator": f"ann{k}", "label": h} for s, h in zip(samples["sample_id"], lab["human"]) for k in range(3)]
    )
    for name, d in (("scores", scored), ("samples", samples), ("annotations", ann)):
        d.to_parquet(tmp_path / f"{name}.parquet")
    out = tmp_path / "ppi.csv"
    res = CliRunner().invoke(
        app,
        ["stats", "ppi", str(tmp_path / "scores.parquet"), "--metric-column", "vader_label", "--label", "negative", "--by", "group",
         "--samples", str(tmp_path / "samples.parquet"), "--annotations", str(tmp_path / "annotations.parquet"), "--out", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "60 labelled samples joined on prompt_id, model" in res.output
    from_round = pd.read_csv(out)
    direct = ppi_table(df, PPIShare(metric_column="vader_label", human_column="human", label="negative", by="group"))
    a = from_round.sort_values(["measure", "group"]).reset_index(drop=True)
    b = direct.sort_values(["measure", "group"]).reset_index(drop=True)
    assert np.allclose(a["estimate"], b["estimate"], atol=1e-12, equal_nan=True)
    assert (a["n_labelled"] == b["n_labelled"]).all()


@pytest.mark.parametrize(
    "args, code",
    [
        (["--human-column", "human", "--label", "nope"], "E344"),
        (["--label", "negative"], "E346"),
        (["--human-column", "human", "--label", "negative", "--lam", "2"], "E342"),
        (["--human-column", "human", "--label", "negative", "--samples", "s.parquet"], "E346"),
    ],
)
def test_stats_ppi_bad_input_gets_a_coded_error(tmp_path, args, code):
    from typer.testing import CliRunner

    from biaskit.cli import app

    src = tmp_path / "scores.csv"
    _frame(np.random.default_rng(0), ["a", "b"], n_rows=40, n_lab=10).to_csv(src, index=False)
    res = CliRunner().invoke(app, ["stats", "ppi", str(src), "--metric-column", "vader_label", "--by", "group", *args])
    assert res.exit_code == 1 and f"[{code}]" in res.output, res.output


def test_a_group_too_small_for_ppi_gets_null_and_an_error_not_a_number():
    df = _frame(np.random.default_rng(0), ["a", "b"], n_rows=30, n_lab=1)
    t = ppi_table(df, PPIShare(metric_column="vader_label", human_column="human", label="negative", by="group"))
    row = t[(t["measure"] == "share_ppi")].iloc[0]
    assert pd.isna(row["estimate"]) and "at least 2 labelled" in row["reason"]
    assert ppi_gap_rows(t)["estimate"].isna().all()
    with pytest.raises(BiaskitError) as e:
        ppi_mean([1.0], [1.0], [0.0, 1.0])
    assert e.value.code == "E342"


def _simulate_group(rng, sims, n_rows, n_lab, p, recall, fpr=0.05):
    """sims x rows: truth ~ Bernoulli(p), metric = truth seen with ``recall`` / false alarms ``fpr``; the first
    ``n_lab`` rows are the labelled ones (a uniform sample: the rows are exchangeable)."""
    truth = rng.random((sims, n_rows)) < p
    pred = np.where(truth, rng.random((sims, n_rows)) < recall, rng.random((sims, n_rows)) < fpr)
    return truth.astype(float), pred.astype(float)


def test_metric_that_misses_positives_in_one_group_biases_its_gap_and_ppi_does_not():
    rng = np.random.default_rng(33)
    ya, pa = _simulate_group(rng, 1, 3000, 300, 0.3, 0.9)
    yb, pb = _simulate_group(rng, 1, 3000, 300, 0.3, 0.5)  # same true share, the metric misses half of b's positives
    groups = {"a": (ya[0, :300], pa[0, :300], pa[0, 300:]), "b": (yb[0, :300], pb[0, :300], pb[0, 300:])}
    t = ppi_shares(groups).set_index("measure")
    metric, ppi = t.loc["gap_metric"], t.loc["gap_ppi"]
    assert metric["ci_low"] > 0  # the metric claims a gap of about 0.12
    assert ppi["ci_low"] <= 0 <= ppi["ci_high"]  # the true gap is 0


def test_ppi_covers_per_group_and_is_narrower_than_human_only(capsys):
    from scipy.stats import norm

    rng = np.random.default_rng(2026)
    sims, n_rows, n_lab = 2000, 2000, 300
    res = {}
    for g, (p, recall) in {"a": (0.3, 0.9), "b": (0.2, 0.6)}.items():
        y, yh = _simulate_group(rng, sims, n_rows, n_lab, p, recall)
        r = ppi_mean_batch(y[:, :n_lab], yh[:, :n_lab], yh[:, n_lab:])
        for s in (0, 1, sims - 1):  # the batch is ppi_mean on each set
            one = ppi_mean(y[s, :n_lab], yh[s, :n_lab], yh[s, n_lab:])
            assert abs(one["ci_low"] - r["ci_low"][s]) < 1e-12 and abs(one["estimate"] - r["estimate"][s]) < 1e-12
        cover = np.mean((r["ci_low"] <= p) & (p <= r["ci_high"]))
        # human-only Wilson interval on the labelled rows (vectorised Wilson: statsmodels' formula)
        z = norm.isf(0.025)
        ph = y[:, :n_lab].mean(axis=1)
        w_h = 2 * z / (1 + z * z / n_lab) * np.sqrt(ph * (1 - ph) / n_lab + z * z / (4 * n_lab**2))
        res[g] = (cover, float(np.mean(r["ci_high"] - r["ci_low"])), float(np.mean(w_h)))
    with capsys.disabled():
        for g, (c, wp, wh) in res.items():
            print(f"\ngroup {g}: PPI++ coverage {c:.3f} over {sims} sets, mean width {wp:.4f} vs human-only Wilson {wh:.4f}")
    for c, wp, wh in res.values():
        assert c >= 0.94
        assert wp < wh


def test_ppi_gap_covers_the_true_gap_when_the_metric_is_unfair():
    rng = np.random.default_rng(7)
    sims = 1000
    ya, pa = _simulate_group(rng, sims, 1500, 200, 0.3, 0.9)
    yb, pb = _simulate_group(rng, sims, 1500, 200, 0.3, 0.5)
    ra = ppi_mean_batch(ya[:, :200], pa[:, :200], pa[:, 200:])
    rb = ppi_mean_batch(yb[:, :200], pb[:, :200], pb[:, 200:])
    d = ra["estimate"] - rb["estimate"]
    half = 1.959963984540054 * np.hypot(ra["se"], rb["se"])
    one = gap({"estimate": ra["estimate"][0], "se": ra["se"][0]}, {"estimate": rb["estimate"][0], "se": rb["se"][0]})
    assert abs(one["ci_low"] - (d[0] - half[0])) < 1e-12
    assert np.mean(np.abs(d) <= half) >= 0.93  # the true gap is 0
    metric_gap = pa.mean(axis=1) - pb.mean(axis=1)
    assert np.mean(metric_gap) > 0.1  # the metric alone sees a gap of 0.3 * (0.9 - 0.5) = 0.12


def _labelled_csv(path, human_value: str) -> None:
    rows = ["group,vader_label,human"]
    for g in "ab":
        for i in range(60):
            rows.append(f"{g},{('positive', 'negative', 'neutral')[i % 3]},{human_value if i < 40 else ''}")
    path.write_text("\n".join(rows) + "\n")


@pytest.mark.parametrize(
    ("value", "code", "shown"), [("POSITIVE", "E151", "POSITIVE"), ("SUPER", "E151", "SUPER"), ("NaN", "E350", "null"), ('"nan"', "E350", "null")]
)
def test_stats_ppi_refuses_human_labels_outside_the_label_set(tmp_path, value, code, shown):
    # before: POSITIVE / SUPER counted as "not the label" (share_human 0.0, share_ppi 0.0 [0.0, 0.0]); a CSV's NaN or
    # "nan" read as null made every row unlabelled without a word
    from typer.testing import CliRunner

    from biaskit.cli import app

    src = tmp_path / "t.csv"
    _labelled_csv(src, value)
    res = CliRunner().invoke(
        app, ["stats", "ppi", str(src), "--metric-column", "vader_label", "--human-column", "human", "--label", "positive", "--by", "group"]
    )
    assert res.exit_code == 1 and f"[{code}]" in res.output and shown in res.output, res.output
    assert "'positive', 'neutral', 'negative'" in res.output  # the expected set, from vader's declaration


def test_nan_strings_among_human_labels_are_named_not_counted_as_another_label():
    df = _frame(np.random.default_rng(1), ["a", "b"])
    df.loc[df["human"].notna().to_numpy().nonzero()[0][:3], "human"] = "nan"
    with pytest.raises(BiaskitError) as e:
        ppi_table(df, PPIShare(metric_column="vader_label", human_column="human", label="negative", by="group"))
    assert e.value.code == "E151" and "'nan'" in str(e.value) and "3 of 160" in str(e.value)
