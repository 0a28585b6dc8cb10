"""The report's headline block (numbers recomputed independently), small-sample flags, collapsed
tables, and figures checked by content through their matplotlib objects (values, axis limits, legend)."""

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from biaskit.evaluate.report import build_report, plots
from biaskit.evaluate.report.model import MIN_GROUP_N, newcombe, small_n_cautions, uncertainty_flags
from biaskit.evaluate.report.tables import compact
from biaskit.evaluate.stats.likelihood_bias import likelihood_bias_interval
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
    got = newcombe(ka, na, kb, nb, 0.05)
    assert got == pytest.approx(want, abs=1e-12)


def test_uncertainty_flags_say_only_what_is_uncertain():
    # a row is uncertain when its interval includes 0 or its corrected p is not below alpha;
    # a small group is a separate caution (the demo's islam row: +0.428 [+0.020, +0.726], Holm p 0.037, n 5/29)
    assert uncertainty_flags(0.428, (0.020, 0.726), 0.037) == []
    assert small_n_cautions(5, 29) == [f"small group (n < {MIN_GROUP_N})"]
    assert small_n_cautions(30, 30) == []
    assert uncertainty_flags(0.1, (-0.05, 0.25), 0.2) == ["95% CI includes 0", "corrected p >= 0.05"]
    assert uncertainty_flags(0.1, (0.01, 0.25), 0.06) == ["corrected p >= 0.05"]  # corrected over many tests
    assert uncertainty_flags(-0.2, (-0.3, -0.1), 0.001) == []
    assert uncertainty_flags(0.0, None, float("nan")) == ["test undefined (no variation)"]


def _family_holm(shares, pairs):
    """Per pair the pooled two-proportion z-test p (statsmodels), or Fisher's exact p (scipy) where a group has fewer
    than 30 texts, Holm-adjusted over the pairs given (statsmodels)."""
    from scipy.stats import fisher_exact
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import proportions_ztest

    def p_of(a, b):
        (ka, na), (kb, nb) = shares[a], shares[b]
        if min(na, nb) < 30:
            return fisher_exact([[ka, na - ka], [kb, nb - kb]]).pvalue
        return proportions_ztest([ka, kb], [na, nb])[1]

    ps = [p_of(a, b) for a, b in pairs]
    return dict(zip(pairs, multipletests(ps, method="holm")[1]))


def test_headline_gaps_per_source_with_holm_over_the_family(full_run, full_report):
    # one row per domain and text source, its most decisive testable pair (smallest corrected p, then the largest
    # gap); the model's rows first, the Wikipedia baseline's labelled as such; p is Holm over the domain's group pairs
    # of that source (Fisher's exact p for a pair with a group under 30 texts), and the row says over how many
    df = pd.read_parquet(full_run / "scores.parquet")
    model_rows = [f for f in full_report.headline if f.kind == "Largest group gap" and f.metric == "Sentiment: share positive"]
    base_rows = [f for f in full_report.headline if f.kind == "Wikipedia baseline: largest group gap" and f.metric == "Sentiment: share positive"]
    assert {f.where for f in model_rows} == {f"{d} (gpt2)" for d in ("gender", "race", "profession")}
    assert {f.where for f in base_rows} == {f"{d} (Wikipedia baseline)" for d in ("gender", "race", "profession")}
    assert all(f.baseline for f in base_rows) and not any(f.baseline for f in model_rows)
    order = full_report.headline
    assert max(order.index(f) for f in order if not f.baseline) < min(order.index(f) for f in base_rows)
    for f in model_rows + base_rows:
        dom = f.where.split(" (")[0]
        m = "wikipedia" if f.baseline else "gpt2"
        lab = df[(df["domain"] == dom) & (df["model"] == m) & df["vader_label"].notna()]
        cnt = (lab["vader_label"] == "positive").groupby(lab["group"]).agg(["sum", "count"])
        shares = {g: (int(cnt.loc[g, "sum"]), int(cnt.loc[g, "count"])) for g in cnt.index}
        gs = sorted(shares)
        pairs = [(a, b) for i, a in enumerate(gs) for b in gs[i + 1 :]]
        holm = _family_holm(shares, pairs)
        gaps = {(a, b): shares[a][0] / shares[a][1] - shares[b][0] / shares[b][1] for a, b in pairs}
        a, b = min(pairs, key=lambda ab: (holm[ab], -abs(gaps[ab])))
        d = gaps[(a, b)]
        (ka, na), (kb, nb) = shares[a], shares[b]
        assert f.estimate == pytest.approx(d, abs=1e-12)
        assert f.comparison == f"{a} minus {b}" and f.n == f"{na} / {nb}"
        assert f.ci == pytest.approx(newcombe(ka, na, kb, nb, 0.05))
        assert f.p == pytest.approx(holm[(a, b)], rel=1e-9)
        exact = ", fisher-exact" if min(na, nb) < 30 else ""
        assert f.p_label == f"Holm, {len(pairs)} {'test' if len(pairs) == 1 else 'tests'}: this domain's group pairs{exact}"
        # the flags follow from the numbers: the gpt2 groups have 29 labelled texts (one failed row each)
        assert bool(f.cautions) == (min(na, nb) < 30)
        assert ("95% CI includes 0" in f.flags) == (f.ci[0] <= 0 <= f.ci[1])
        assert ("corrected p >= 0.05" in f.flags) == (f.p >= 0.05)


def test_headline_model_vs_wikipedia_is_model_minus_wikipedia(full_run, full_report):
    df = pd.read_parquet(full_run / "scores.parquet")
    rows = [f for f in full_report.headline if f.kind == "Model vs Wikipedia" and f.metric == "Sentiment: share positive"]
    # the fixture's manifest does not record the span the baseline was scored on: the row says so
    assert rows and all(f.comparison == "gpt2 minus wikipedia" for f in rows)
    assert all("span of the Wikipedia baseline not recorded: may not be like for like" in f.cautions for f in rows)
    for f in rows:
        dom, grp = f.where[:-1].split(" (")
        sub = df[(df["domain"] == dom) & (df["group"] == grp) & df["vader_label"].notna()]
        share = (sub["vader_label"] == "positive").groupby(sub["model"]).mean()
        assert f.estimate == pytest.approx(share["gpt2"] - share["wikipedia"], abs=1e-12)
        assert f.ci[0] <= f.estimate <= f.ci[1]
        n_g, n_w = (int((sub["model"] == m).sum()) for m in ("gpt2", "wikipedia"))
        assert f.n == f"{n_g} / {n_w}"
        # Holm over every group of the domain (one gpt2-vs-wikipedia test per group), not a family of one
        dd = df[(df["domain"] == dom) & df["vader_label"].notna()]
        shares, pairs = {}, []
        for g, gsub in dd.groupby("group"):
            for m in ("gpt2", "wikipedia"):
                s = gsub[gsub["model"] == m]
                shares[(g, m)] = (int((s["vader_label"] == "positive").sum()), len(s))
            pairs.append(((g, "gpt2"), (g, "wikipedia")))
        exact = ", fisher-exact" if min(n_g, n_w) < 30 else ""
        assert f.p_label == f"Holm, {len(pairs)} tests: this domain's groups x models{exact}" and len(pairs) >= 2
        assert f.p == pytest.approx(_family_holm(shares, pairs)[((grp, "gpt2"), (grp, "wikipedia"))], rel=1e-9)
    # the section table says the same direction: diff = group_a (the model) minus group_b (the baseline)
    t = pd.read_csv(full_report.tables["sentiment_positive_vs_wikipedia"])
    assert {"group_a", "group_b", "diff"} <= set(t.columns) and set(t["group_b"]) == {"wikipedia"} and "wikipedia" not in set(t["group_a"])
    for f in rows:
        dom, grp = f.where[:-1].split(" (")
        r = t[(t["domain"] == dom) & (t["group"] == grp)].iloc[0]
        assert r["diff"] == pytest.approx(f.estimate)


def test_headline_likelihood_bias_per_axis_and_flag(full_report):
    by_axis = pd.read_csv(full_report.tables["likelihood_bias_by_axis"])
    rows = {f.where: f for f in full_report.headline if f.kind == "Likelihood Bias"}
    assert set(rows) == {f"axis {a} (tiny-lm)" for a in by_axis["axis"]}
    for _, r in by_axis.iterrows():
        f = rows[f"axis {r['axis']} (tiny-lm)"]
        assert f.estimate == pytest.approx(r["fraction"])
        assert f.comparison.startswith(f"{r['n_different']} of {r['n_pairs']} pairs differ")
        # 8 sentences per descriptor and template in the fixture: far too few (a caution); pairs are uncorrected
        assert f.n == "min 8 sentences per descriptor"
        assert f.cautions == ["few sentences (n < 30 per descriptor)", "pairs tested without correction"]
        pairs = pd.read_csv(full_report.tables["likelihood_bias_pairs"])
        ci = likelihood_bias_interval(pairs[pairs["axis"] == r["axis"]], n_boot=200, seed=0)
        assert f.ci == pytest.approx(ci) and f.ci[0] <= f.estimate <= f.ci[1]
        assert ("CI reaches the chance rate 0.05" in f.flags) == (ci[0] <= 0.05)


def test_likelihood_bias_interval_resamples_descriptors_by_hand():
    # 3 descriptors, pairs AB differ, AC and BC do not. Drawing 3 descriptors with replacement (27 equally likely
    # ordered draws): all the same (3 draws) gives no pair; two A + one B or two B + one A (6 draws): only AB
    # pairs -> 1.0; two A/B + one C or two C + one A/B (12 draws): no AB pair -> 0.0; A, B, C (6 draws):
    # weights 1 each -> 1/3. So over the 24 usable draws P(0) = 1/2, P(1/3) = 1/4, P(1) = 1/4:
    # the 30 % quantile is 0, the 70 % quantile 1/3, the 2.5 % and 97.5 % quantiles 0 and 1.
    pairs = pd.DataFrame(
        {"descriptor_a": ["A", "A", "B"], "descriptor_b": ["B", "C", "C"], "p_value": [0.01, 0.5, 0.7], "different": [True, False, False]}
    )
    assert likelihood_bias_interval(pairs, n_boot=20000, seed=1, level=0.4) == pytest.approx((0.0, 1 / 3))
    assert likelihood_bias_interval(pairs, n_boot=20000, seed=1, level=0.95) == pytest.approx((0.0, 1.0))
    assert likelihood_bias_interval(pairs.assign(p_value=float("nan")), n_boot=10) is None


def test_headline_is_first_in_html_and_markdown(full_report):
    html = full_report.html.read_text()
    assert html.index("id='headline-block'") < html.index("<nav>") < html.index("id='run'")
    md = full_report.md.read_text().splitlines()
    # the verdict lines first, then the table of the rows not folded under them
    head = md[: md.index("## Run")]
    # (after the summary, the sentence that declares the test families)
    assert md[2] == "## Headline findings" and head[6].startswith("Test families (Holm within each") and head[8].startswith("- **")
    assert any(x.startswith("| finding | measure | where |") for x in head)


def test_wide_tables_collapse_and_link_the_full_csv(full_report):
    z = pd.read_csv(full_report.tables["sentiment_positive_ztests"])
    shown, hidden = compact(z)
    assert len(z.columns) == 29  # 22, the interval's method, cluster and n_clusters (+ ci_low/ci_high), the p's test, the reason a p is missing
    assert set(z["test"]) <= {"pooled-z", "fisher-exact"} and ((z["test"] == "fisher-exact") == (z[["n_a", "n_b"]].min(axis=1) < 30)).all()
    assert z["family"].str.startswith("group gap: domain=").all()  # the family is named
    assert len(shown.columns) <= 10 and {"z", "count_a", "count_b", "significant_holm", "family_size"}.isdisjoint(shown.columns)
    # the reader's columns stay: who is compared, the small-n caution, group sizes, the difference (its direction
    # in the header), corrected p-values, effect size
    assert list(shown.columns) == ["domain", "model", "group_a", "group_b", "caution", "n_a", "n_b", "diff", "p_holm", "cohen_h"]
    assert (z["caution"].fillna("") == "n < 30").tolist() == (z[["n_a", "n_b"]].min(axis=1) < 30).tolist()
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


AGREE = pd.DataFrame(
    [
        {
            "round": "r1",
            "task_type": "sentiment",
            "measure": "fleiss_kappa",
            "estimate": 0.61,
            "ci_low": 0.5,
            "ci_high": 0.7,
            "metric": "r1 (sentiment)",
        },
        {
            "round": "r1",
            "task_type": "sentiment",
            "measure": "krippendorff_alpha_nominal",
            "estimate": -0.1,
            "ci_low": None,
            "ci_high": None,
            "metric": "r1 (sentiment)",
        },
        {
            "round": "r1",
            "task_type": "sentiment",
            "measure": "percent_agreement",
            "estimate": 0.8,
            "ci_low": None,
            "ci_high": None,
            "metric": "r1 (sentiment)",
        },
        {
            "round": "r1",
            "task_type": "sentiment",
            "measure": "majority_items",
            "estimate": 58.0,
            "ci_low": None,
            "ci_high": None,
            "metric": "r1 (sentiment)",
        },
        {
            "round": "r1",
            "task_type": "sentiment",
            "measure": "majority_ties",
            "estimate": 2.0,
            "ci_low": None,
            "ci_high": None,
            "metric": "r1 (sentiment)",
        },
    ]
)


def test_agreement_chart_draws_no_counts_and_has_a_legend():
    drawn, counts = plots.split_count_measures(AGREE)
    assert counts == ["majority_items", "majority_ties"]
    fig = plots.agreement_chart(AGREE, None, title="Inter-annotator agreement")
    ax = fig.axes[0]
    heights = [p.get_height() for c in ax.containers if hasattr(c, "patches") for p in c.patches]
    assert heights == pytest.approx([0.61, -0.1, 0.8])  # 58 and 2 are not drawn on this axis
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
    man = {
        "stage": "scores",
        "config": {
            "metrics": {
                "toxicity": {"name": "toxicity", "config": {"backend": "offline"}, "info": {"backend": "offline", "model": "alt-profanity-check"}}
            }
        },
    }
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
    fig = plots.diverging_bars(mmf, plots.BarColumns("male_minus_female", label="group", hue="model"), None, axes=plots.Axes("t"))
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
    fig = plots.heatmap(m, None, axes=plots.Axes("t"))
    ax = fig.axes[0]
    assert np.asarray(ax.images[0].get_array()) == pytest.approx(m.to_numpy(dtype=float))
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(c) for c in m.columns]
    assert ax.images[0].get_clim() == pytest.approx((0, np.nanmax(m.to_numpy(dtype=float))))


def test_agreement_headline_survives_missing_counts_and_intervals(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    t = pd.DataFrame(
        [
            {
                "round": "r1",
                "task_type": "sentiment",
                "measure": "fleiss_kappa",
                "estimate": None,
                "ci_low": None,
                "ci_high": None,
                "metric": None,
                "n_items": None,
            },
            {
                "round": "r1",
                "task_type": "sentiment",
                "measure": "krippendorff_alpha_nominal",
                "estimate": 0.4,
                "ci_low": None,
                "ci_high": None,
                "metric": None,
                "n_items": 12,
            },
        ]
    ).astype({"n_items": "Int64", "estimate": "float64"})
    write_table(pa.Table.from_pandas(t, preserve_index=False), run / "agreement.parquet", stage="agreement")
    res = build_report(run, tmp_path / "rep", n_boot=20)
    rows = {f.metric: f for f in res.headline if f.kind == "Annotator agreement"}
    assert rows["fleiss_kappa"].estimate is None and rows["fleiss_kappa"].n == ""
    assert rows["krippendorff_alpha_nominal"].n == "12 items" and rows["krippendorff_alpha_nominal"].cautions == ["few items (n < 30)"]


def test_an_extra_section_slots_in_with_one_line(full_run, tmp_path, monkeypatch):
    from biaskit.evaluate.report import build

    def validity(b, loaded):
        sec = build.Section("validity", "Validity", ["A section added by one line."])
        df = pd.DataFrame({"check": ["a", "b"], "value": [0.5, 0.25]})
        b.table(sec, "validity_checks", df, "Validity checks.")
        b.figure(
            sec,
            "validity_bars",
            plots.fraction_bars,
            df,
            plots.BarColumns("value", label="check"),
            axes=plots.Axes("Validity"),
            caption="Validity per check.",
        )
        sec.headline.append(build.Finding("Validity", "agreement with a reference", "all", "", 0.5, (0.4, 0.6), n="2 checks", anchor="validity"))
        return sec

    def never(b, loaded):
        raise build.SkipAnalysis("no table with validity columns")

    monkeypatch.setattr(build.model, "SECTIONS", [*build.model.SECTIONS])
    build.model.SECTIONS.append(("Validity", validity))
    build.model.SECTIONS.append(("Generation bias", never))
    res = build_report(full_run, tmp_path / "rep", n_boot=20, keep_figures=True)
    # the new section's finding comes last among the model findings (the Wikipedia-baseline rows follow them)
    assert res.sections[-1] == "validity" and [f for f in res.headline if not f.baseline][-1].kind == "Validity"
    html = res.html.read_text()
    assert "<h2 id='validity'>Validity</h2>" in html and "href='#validity'" in html and "tables/validity_checks.csv" in html
    assert [p.get_height() for p in res.figure_objects["validity_bars"].axes[0].patches] == [0.5, 0.25]
    assert ("Generation bias", "no table with validity columns") in res.skipped
