"""Issue 18: the report's headline block (numbers recomputed independently), small-sample flags, collapsed
tables, and figures checked by content through their matplotlib objects (values, axis limits, legend)."""

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from biaskit.evaluate.report import build_report
from biaskit.evaluate.report import plots
from biaskit.evaluate.report.build import MIN_GROUP_N, _newcombe, small_sample_flags
from biaskit.evaluate.report.tables import compact
from biaskit.io import write_table


def _wilson(k, n, z=1.959963984540054):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize("ka,na,kb,nb", [(2, 5, 0, 7), (12, 30, 20, 29), (0, 4, 0, 9), (7, 7, 1, 3)])
def test_gap_interval_is_newcombes_hybrid_score_interval_by_hand(ka, na, kb, nb):
    # Newcombe (1998) method 10: d -/+ sqrt of the squared distances to each share's Wilson limits
    pa_, pb_ = ka / na, kb / nb
    (l1, u1), (l2, u2) = _wilson(ka, na), _wilson(kb, nb)
    d = pa_ - pb_
    want = (d - math.sqrt((pa_ - l1) ** 2 + (u2 - pb_) ** 2), d + math.sqrt((u1 - pa_) ** 2 + (pb_ - l2) ** 2))
    got = _newcombe(ka, na, kb, nb, 0.05)
    assert got == pytest.approx(want, abs=1e-12)


def test_small_sample_flags():
    assert small_sample_flags(30, 30, 0.5, (0.3, 0.7)) == []
    assert small_sample_flags(29, 300, 0.5, (0.3, 0.7)) == [f"n < {MIN_GROUP_N} per group"]
    assert small_sample_flags(100, 100, 0.1, (-0.05, 0.25)) == ["CI wider than the gap"]       # width 0.30 > 0.10
    assert small_sample_flags(100, 100, -0.2, (-0.3, -0.1)) == []                                # width 0.20 == |gap|: not wider
    assert small_sample_flags(100, 100, 0.0, None, float("nan")) == ["test undefined (no variation)"]


def test_headline_gaps_equal_shares_recomputed_with_pandas(full_run, full_report):
    df = pd.read_parquet(full_run / "scores.parquet")
    rows = [f for f in full_report.headline if f.kind == "Largest group gap" and f.metric == "Sentiment: share positive"]
    assert {f.where.split(" (")[0] for f in rows} == {"gender", "race", "profession"}
    for f in rows:
        dom = f.where.split(" (")[0]
        best = None
        for m, sub in df[df["domain"] == dom].groupby("model"):
            lab = sub[sub["vader_label"].notna()]
            share = (lab["vader_label"] == "positive").groupby(lab["group"]).agg(["sum", "count"])
            gs = sorted(share.index)
            for i, a in enumerate(gs):
                for b in gs[i + 1:]:
                    d = share.loc[a, "sum"] / share.loc[a, "count"] - share.loc[b, "sum"] / share.loc[b, "count"]
                    if best is None or abs(d) > abs(best[0]):
                        best = (d, m, a, b, int(share.loc[a, "count"]), int(share.loc[b, "count"]), int(share.loc[a, "sum"]), int(share.loc[b, "sum"]))
        d, m, a, b, na, nb, ka, kb = best
        assert f.estimate == pytest.approx(d, abs=1e-12)
        assert f.where == f"{dom} ({m})" and f.comparison == f"{a} minus {b}" and f.n == f"{na} / {nb}"
        assert f.ci == pytest.approx(_newcombe(ka, na, kb, nb, 0.05))
        assert f.p_label == "Holm" and 0 <= f.p <= 1
        # the flags follow from the numbers: the gpt2 groups have 29 labelled texts (one failed row each)
        assert ("n < 30 per group" in f.flags) == (min(na, nb) < 30)
        assert ("CI wider than the gap" in f.flags) == ((f.ci[1] - f.ci[0]) > abs(d))


def test_headline_model_vs_wikipedia_is_model_minus_wikipedia(full_run, full_report):
    df = pd.read_parquet(full_run / "scores.parquet")
    rows = [f for f in full_report.headline if f.kind == "Model vs Wikipedia" and f.metric == "Sentiment: share positive"]
    assert rows and all(f.comparison == "gpt2 minus wikipedia" for f in rows)
    for f in rows:
        dom, grp = f.where[:-1].split(" (")
        sub = df[(df["domain"] == dom) & (df["group"] == grp) & df["vader_label"].notna()]
        share = (sub["vader_label"] == "positive").groupby(sub["model"]).mean()
        assert f.estimate == pytest.approx(share["gpt2"] - share["wikipedia"], abs=1e-12)
        assert f.ci[0] <= f.estimate <= f.ci[1]
        n_g, n_w = (int((sub["model"] == m).sum()) for m in ("gpt2", "wikipedia"))
        assert f.n == f"{n_g} / {n_w}"


def test_headline_likelihood_bias_per_axis_and_flag(full_report):
    by_axis = pd.read_csv(full_report.tables["likelihood_bias_by_axis"])
    rows = {f.where: f for f in full_report.headline if f.kind == "Likelihood Bias"}
    assert set(rows) == {f"axis {a} (tiny-lm)" for a in by_axis["axis"]}
    for _, r in by_axis.iterrows():
        f = rows[f"axis {r['axis']} (tiny-lm)"]
        assert f.estimate == pytest.approx(r["fraction"])
        assert f.comparison.startswith(f"{r['n_different']} of {r['n_pairs']} pairs differ")
        # 8 sentences per descriptor and template in the fixture: far too few
        assert f.n == "min 8 sentences per descriptor" and f.flags == ["n < 30 sentences per descriptor"]


def test_headline_is_first_in_html_and_markdown(full_report):
    html = full_report.html.read_text()
    assert html.index("id='headline-block'") < html.index("<nav>") < html.index("id='run'")
    md = full_report.md.read_text().splitlines()
    assert md[2] == "## Headline findings" and md[6].startswith("| finding | measure | where |")


def test_wide_tables_collapse_and_link_the_full_csv(full_report):
    z = pd.read_csv(full_report.tables["sentiment_positive_ztests"])
    shown, hidden = compact(z)
    assert len(z.columns) == 19
    assert len(shown.columns) <= 10 and {"z", "count_a", "count_b", "significant_holm"}.isdisjoint(shown.columns)
    # the reader's columns stay: who is compared, group sizes, the difference, corrected p-values, effect size
    assert list(shown.columns) == ["domain", "model", "group_a", "group_b", "n_a", "n_b", "diff", "p_holm", "cohen_h", "p_bh"]
    assert shown["p_holm"].tolist() == z["p_holm"].tolist()
    mw, _ = compact(pd.read_csv(full_report.tables["sentiment_vader_compound_mannwhitney"]))
    assert {"p_holm", "p_bh", "rank_biserial", "n_a", "n_b"} <= set(mw.columns) and len(mw.columns) <= 10
    assert hidden == len(z.columns) - len(shown.columns)
    props = pd.read_csv(full_report.tables["sentiment_proportions"])
    shown, _ = compact(props)
    r0 = props.iloc[0]
    assert shown.iloc[0]["positive [CI]"] == f"{r0['prop_positive']:.2f} [{r0['ci_low_positive']:.2f}, {r0['ci_high_positive']:.2f}]"
    assert not any(c.startswith(("ci_low_", "ci_high_", "count_")) for c in shown.columns)
    html = full_report.html.read_text()
    assert "<a href='tables/sentiment_positive_ztests.csv'>" in html and "more column(s) in the CSV" in html


def test_stacked_proportions_figure_draws_the_table_shares(full_report):
    props = pd.read_csv(full_report.tables["sentiment_proportions"])
    sub = props[props["domain"] == "gender"]
    fig = plots.stacked_proportions(sub, ["group", "model"], ["positive", "neutral", "negative"], None, title="t")
    ax = fig.axes[0]
    assert ax.get_xlim() == (0.0, 1.0)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["positive", "neutral", "negative"]
    for cont, lab in zip(ax.containers, ["positive", "neutral", "negative"]):
        assert [p.get_width() for p in cont.patches] == pytest.approx(list(sub[f"prop_{lab}"]))
    # every bar adds up to the whole
    lefts = np.array([[p.get_x() + p.get_width() for p in c.patches] for c in ax.containers])
    assert lefts[-1] == pytest.approx(np.ones(len(sub)))


AGREE = pd.DataFrame([
    {"round": "r1", "task_type": "sentiment", "measure": "fleiss_kappa", "value": 0.61, "ci_low": 0.5, "ci_high": 0.7, "metric": "r1 (sentiment)"},
    {"round": "r1", "task_type": "sentiment", "measure": "krippendorff_alpha_nominal", "value": -0.1, "ci_low": None, "ci_high": None, "metric": "r1 (sentiment)"},
    {"round": "r1", "task_type": "sentiment", "measure": "percent_agreement", "value": 0.8, "ci_low": None, "ci_high": None, "metric": "r1 (sentiment)"},
    {"round": "r1", "task_type": "sentiment", "measure": "majority_items", "value": 58.0, "ci_low": None, "ci_high": None, "metric": "r1 (sentiment)"},
    {"round": "r1", "task_type": "sentiment", "measure": "majority_ties", "value": 2.0, "ci_low": None, "ci_high": None, "metric": "r1 (sentiment)"},
])


def test_agreement_chart_draws_no_counts_and_has_a_legend():
    drawn, counts = plots.split_count_measures(AGREE)
    assert counts == ["majority_items", "majority_ties"]
    fig = plots.agreement_chart(AGREE, None, title="Inter-annotator agreement")
    ax = fig.axes[0]
    heights = [p.get_height() for c in ax.containers if hasattr(c, "patches") for p in c.patches]
    assert heights == pytest.approx([0.61, -0.1, 0.8])           # 58 and 2 are not drawn on this axis
    lo, hi = ax.get_ylim()
    assert lo == pytest.approx(-0.1 * 1.15) and hi == pytest.approx(1.12) and max(heights) <= hi
    leg = ax.get_legend()
    assert [t.get_text() for t in leg.get_texts()] == ["fleiss_kappa", "krippendorff_alpha_nominal", "percent_agreement"]
    # the legend is on the canvas (not cut off)
    fig.canvas.draw()
    lb, fb = leg.get_window_extent(), fig.bbox
    assert lb.x0 >= fb.x0 and lb.x1 <= fb.x1 and lb.y0 >= fb.y0 and lb.y1 <= fb.y1


def test_report_agreement_figure_leaves_out_counts_and_says_so(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    t = AGREE.drop(columns=["metric"]).assign(metric=None, n_items=60)
    write_table(pa.Table.from_pandas(t, preserve_index=False), run / "agreement.parquet", stage="agreement")
    res = build_report(run, tmp_path / "rep", n_boot=20, keep_figures=True)
    fig = res.figure_objects["inter_annotator_agreement"]
    heights = [p.get_height() for c in fig.axes[0].containers if hasattr(c, "patches") for p in c.patches]
    assert heights == pytest.approx([0.61, -0.1, 0.8])
    assert "Counts (majority_items, majority_ties) are not drawn" in res.html.read_text()
    kappa = [f for f in res.headline if f.kind == "Annotator agreement" and f.metric == "fleiss_kappa"]
    assert kappa[0].estimate == 0.61 and kappa[0].ci == (0.5, 0.7) and kappa[0].flags == []


def test_likelihood_chart_leaves_out_control_sentences_and_says_so(tmp_path):
    from tests.evaluate.report.conftest import make_likelihoods

    lk = make_likelihoods().to_pandas()
    control = lk[lk["axis"] == "age"].head(8).assign(axis=None, descriptor=None, prompt_id=lambda d: "c-" + d["prompt_id"])
    run = tmp_path / "run"
    run.mkdir()
    write_table(pa.Table.from_pandas(pd.concat([lk, control], ignore_index=True), preserve_index=False), run / "likelihoods.parquet")
    res = build_report(run, tmp_path / "rep", n_boot=20, keep_figures=True)
    by_axis = pd.read_csv(res.tables["likelihood_bias_by_axis"])
    assert list(by_axis["axis"]) == ["ability", "age"]
    ax = res.figure_objects["likelihood_bias_tiny_lm"].axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["ability", "age"]
    assert [p.get_height() for p in ax.patches] == pytest.approx(list(by_axis["fraction"]))
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= 1
    assert "(null)" not in pd.read_csv(res.tables["likelihood_ranking"])["descriptor"].astype(str).tolist()
    assert "Left out: 8 control sentence(s) without a descriptor" in res.html.read_text()


def test_offline_toxicity_backend_is_reported_as_profanity_and_zero_is_not_called_toxicity(tmp_path):
    from tests.evaluate.report.conftest import make_scores

    sc = make_scores(n_per=5).to_pandas().assign(toxicity_label="non-toxic", toxicity_score=0.01)
    run = tmp_path / "run"
    run.mkdir()
    man = {"stage": "scores", "config": {"metrics": {"toxicity": {"name": "toxicity", "config": {"backend": "offline"},
                                                                   "info": {"backend": "offline", "model": "alt-profanity-check"}}}}}
    write_table(pa.Table.from_pandas(sc, preserve_index=False), run / "scores.parquet", stage="scores", manifest=man)
    res = build_report(run, tmp_path / "rep", n_boot=20)
    assert "profanity" in res.sections and "toxicity" not in res.sections
    html = res.html.read_text()
    assert "<h2 id='profanity'>Profanity (alt-profanity-check)</h2>" in html
    assert ">Toxicity<" not in html and "Toxicity by group" not in html
    prof = [f for f in res.headline if f.metric.startswith("Profanity")]
    assert [f.kind for f in prof] == ["No signal"] and prof[0].text == f"no text labelled profane (0 of {len(sc)})"
    assert "not evidence that the texts are free of toxicity" in html
    assert not any("Toxicity" in f.metric for f in res.headline)


def test_male_minus_female_bars_draw_the_table_values(full_report):
    mmf = pd.read_csv(full_report.tables["male_minus_female"])
    fig = plots.diverging_bars(mmf, "group", "male_minus_female", None, title="t", hue="model")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(dict.fromkeys(mmf["model"]))
    for cont, m in zip(ax.containers, dict.fromkeys(mmf["model"])):
        sub = mmf[mmf["model"] == m].set_index("group")["male_minus_female"]
        assert [p.get_width() for p in cont.patches] == pytest.approx([sub[g] for g in dict.fromkeys(mmf["group"])])
    lim = mmf["male_minus_female"].abs().max() * 1.45
    assert ax.get_xlim() == pytest.approx((-lim, lim))


def test_honest_heatmap_shows_the_category_shares(full_report):
    from biaskit.evaluate.stats import honest_category_matrix

    s = pd.read_csv(full_report.tables["honest_by_subject_category"])
    m = honest_category_matrix(s)
    fig = plots.heatmap(m, None, title="t")
    ax = fig.axes[0]
    assert np.asarray(ax.images[0].get_array()) == pytest.approx(m.to_numpy(dtype=float))
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(c) for c in m.columns]
    assert ax.images[0].get_clim() == pytest.approx((0, np.nanmax(m.to_numpy(dtype=float))))


def test_agreement_headline_survives_missing_counts_and_intervals(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    t = pd.DataFrame([{"round": "r1", "task_type": "sentiment", "measure": "fleiss_kappa", "value": None, "ci_low": None,
                       "ci_high": None, "metric": None, "n_items": None},
                      {"round": "r1", "task_type": "sentiment", "measure": "krippendorff_alpha_nominal", "value": 0.4, "ci_low": None,
                       "ci_high": None, "metric": None, "n_items": 12}]).astype({"n_items": "Int64", "value": "float64"})
    write_table(pa.Table.from_pandas(t, preserve_index=False), run / "agreement.parquet", stage="agreement")
    res = build_report(run, tmp_path / "rep", n_boot=20)
    rows = {f.metric: f for f in res.headline if f.kind == "Annotator agreement"}
    assert rows["fleiss_kappa"].estimate is None and rows["fleiss_kappa"].n == ""
    assert rows["krippendorff_alpha_nominal"].n == "12 items" and rows["krippendorff_alpha_nominal"].flags == ["n < 30 items"]


def test_an_extra_section_slots_in_with_one_line(full_run, tmp_path, monkeypatch):
    from biaskit.evaluate.report import build

    def validity(b, loaded):
        sec = build.Section("validity", "Validity", ["A section added by one line."])
        df = pd.DataFrame({"check": ["a", "b"], "value": [0.5, 0.25]})
        b.table(sec, "validity_checks", df, "Validity checks.")
        b.figure(sec, "validity_bars", plots.fraction_bars, df, "check", "value", title="Validity", caption="Validity per check.")
        sec.headline.append(build.Finding("Validity", "agreement with a reference", "all", "", 0.5, (0.4, 0.6), n="2 checks",
                                          anchor="validity"))
        return sec

    def never(b, loaded):
        raise build.SkipAnalysis("no table with validity columns")

    monkeypatch.setattr(build, "ANALYSES", [*build.ANALYSES])
    build.ANALYSES.append(("Validity", validity))
    build.ANALYSES.append(("Generation bias", never))
    res = build_report(full_run, tmp_path / "rep", n_boot=20, keep_figures=True)
    assert res.sections[-1] == "validity" and res.headline[-1].kind == "Validity"
    html = res.html.read_text()
    assert "<h2 id='validity'>Validity</h2>" in html and "href='#validity'" in html and "tables/validity_checks.csv" in html
    assert [p.get_height() for p in res.figure_objects["validity_bars"].axes[0].patches] == [0.5, 0.25]
    assert ("Generation bias", "no table with validity columns") in res.skipped
