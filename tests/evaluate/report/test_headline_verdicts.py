"""Verdicts a reader can act on: per family the most decisive testable comparison, untestable pairs with their true
reason (all texts from one page, no variation), an exact test for tiny groups, and the families named on the first
screen."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest
import scipy.stats

from biaskit.evaluate.report.build import build_report
from biaskit.evaluate.report.headline import verdicts
from biaskit.io import write_table


def _texts(model: str, group: str, positives: int, n: int, pages: list[str]) -> list[dict]:
    """``n`` texts of ``group`` from ``model``, the first ``positives`` labelled positive, spread over ``pages`` three at a time in turn."""
    return [
        {
            "domain": "religious_ideology",
            "group": group,
            "model": model,
            "page_id": pages[(i // 3) % len(pages)],
            "vader_label": "positive" if i < positives else "negative",
            "vader_compound": 0.5 if i < positives else -0.5,
        }
        for i in range(n)
    ]


def _demo_like_rows(islam_pages: list[str]) -> list[dict]:
    """The demo's religion domain: the model wrote 5 continuations about islam (3 positive), the Wikipedia baseline has
    29 islam sentences (4 positive), all from ``islam_pages``; judaism (6 pages) and sikhism (4 pages) are large, atheism
    is one page."""
    rows = _texts("gpt2", "islam", 3, 5, islam_pages) + _texts("wikipedia", "islam", 4, 29, islam_pages)
    rows += _texts("wikipedia", "judaism", 30, 60, [f"Judaism_{k}" for k in range(6)])
    rows += _texts("wikipedia", "sikhism", 8, 40, [f"Sikhism_{k}" for k in range(4)])
    rows += _texts("wikipedia", "atheism", 0, 12, ["Atheism"])
    return rows


def _report(tmp_path, rows):
    run = tmp_path / "run"
    write_table(pa.Table.from_pylist(rows), run / "scores.parquet")
    return build_report(run, tmp_path / "report", n_boot=20)


def _line(res, kind: str):
    return next(v for v in verdicts(res.headline) if v.kind == kind and v.measure == "Sentiment: share positive")


def test_a_group_whose_texts_all_come_from_one_page_is_not_testable_and_makes_no_claim(tmp_path):
    res = _report(tmp_path, _demo_like_rows(["Islam"]))
    # main: "evidence of a gap" from a pooled z-test of 3/5 vs 4/29 (p = 0.018), every text from the one Islam page
    mv = _line(res, "Model vs Wikipedia")
    assert mv.verdict == "not enough data: islam: gpt2 vs wikipedia: all texts of islam from one page (Islam)"
    [f] = mv.findings
    assert f.p != f.p and f.flags == ["not testable: islam: gpt2 vs wikipedia: all texts of islam from one page (Islam)"]
    # the first screen's only evidence is judaism vs sikhism (10 pages), never a comparison with a one-page group
    first_screen = res.html.read_text().split("id='contents'")[0]
    assert "Model vs Wikipedia · Sentiment: share positive · religious_ideology</b>: <span class='verdict'>not enough data" in first_screen
    assert [(v.kind, v.lead.comparison) for v in verdicts(res.headline) if v.verdict == "evidence of a gap"] == [
        ("Wikipedia baseline: largest group gap", "judaism minus sikhism")
    ]
    csv = pd.read_csv(res.tables["headline"])
    assert csv.loc[csv["verdict"] == "evidence of a gap", "comparison"].tolist() == ["judaism minus sikhism"]


def test_the_headline_picks_the_most_decisive_testable_pair_and_lists_the_untestable_ones_with_their_reason(tmp_path):
    res = _report(tmp_path, _demo_like_rows(["Islam"]))
    gap = _line(res, "Wikipedia baseline: largest group gap")
    # main picked atheism (one page, the largest gap) and said "not enough data"; judaism - sikhism is testable
    assert gap.lead is not None and gap.lead.comparison == "judaism minus sikhism"
    assert gap.lead.p < 0.05 and gap.verdict == "evidence of a gap"
    assert "atheism vs islam: all texts of atheism from one page (Atheism); all texts of islam from one page (Islam)" in gap.untestable
    assert "atheism vs judaism: all texts of atheism from one page (Atheism)" in gap.untestable
    assert "judaism vs sikhism" not in " ".join(gap.untestable)
    md = (tmp_path / "report" / "report.md").read_text()
    assert "not testable: atheism vs islam: all texts of atheism from one page (Atheism)" in md
    # the family is named on the line and the families on the first screen
    assert gap.family.startswith("group gap: domain=religious_ideology; model=wikipedia") and gap.family.endswith(
        "(1 test)"
    )  # the 5 untestable pairs have no p
    assert "Test families (Holm within each; each verdict names its family): model vs Wikipedia: every group x model" in md
    assert "; group gap: every pair of groups of one domain and text source, for one measure (1 family here)." in md
    assert f"[family: {gap.family}]" in md


def test_a_tiny_group_gets_fishers_exact_test_not_the_pooled_z_test(tmp_path):
    # the same counts with islam's texts from three pages: testable, and 5 continuations are too few for a normal
    # approximation: the p is Fisher's exact p of [[3, 2], [4, 25]] (a family of one test: Holm leaves it)
    res = _report(tmp_path, _demo_like_rows(["Islam", "Islam_in_India", "Sunni_Islam"]))
    [f] = _line(res, "Model vs Wikipedia").findings
    fisher = scipy.stats.fisher_exact([[3, 2], [4, 25]]).pvalue
    pooled = scipy.stats.norm.sf(abs((3 / 5 - 4 / 29) / (7 / 34 * 27 / 34 * (1 / 5 + 1 / 29)) ** 0.5)) * 2
    assert f.p == pytest.approx(fisher, rel=1e-12) and fisher == pytest.approx(0.048, abs=5e-4) and pooled == pytest.approx(0.018, abs=5e-4)
    assert "fisher-exact" in f.p_label
    table = pd.read_csv(res.tables["sentiment_positive_vs_wikipedia"])
    row = table[table["group"] == "islam"].iloc[0]
    assert row["test"] == "fisher-exact" and row["p_value"] == pytest.approx(fisher, rel=1e-12)


def test_demo_first_screen_claims_no_gap_from_a_group_whose_texts_all_come_from_one_page(quick_demo):
    import json

    run_dir, ctx = quick_demo
    man = json.loads((run_dir / "manifest.json").read_text())
    scores = pd.read_parquet(run_dir / man["tables"]["scores"])
    csv = pd.read_csv(run_dir / "report" / "tables" / "headline.csv")
    pages = scores[scores["page_id"].notna()].groupby(["domain", "group"])["page_id"].nunique() if "page_id" in scores.columns else None
    for _, r in csv[csv["verdict"] == "evidence of a gap"].iterrows():
        dom, inner = r["where"].split(" (", 1)
        if r["finding"] == "Model vs Wikipedia":
            groups = [inner.rstrip(")")]
        elif r["finding"].endswith("largest group gap") or r["finding"] == "Largest group gap":
            groups = r["comparison"].split(" minus ")
        else:
            continue
        for g in groups:
            assert pages is None or pages.get((dom, g), 2) > 1, (r["finding"], r["where"], r["comparison"], g)
    # every verdict line the demo records names its family
    assert all(v["family"] for v in ctx.info["report"]["verdicts"])


def test_a_pair_whose_groups_lie_in_two_pages_each_says_not_enough_data_with_the_cluster_methods_reason():
    from biaskit.evaluate.report.sections.labels import group_gap_findings

    # 2 pages per group: the cluster-robust methods need 3 (cluster.MIN_CLUSTERS_PER_GROUP), so the test gives no p; the
    # verdict must say why, as it does for one page, not a bare "not enough data"
    rows = _texts("gpt2", "judaism", 12, 30, ["J1", "J2"]) + _texts("gpt2", "sikhism", 4, 30, ["S1", "S2"])
    found = group_gap_findings(pd.DataFrame(rows), "vader_label", "positive")
    (line,) = verdicts(found)
    assert line.lead is None
    assert line.verdict.startswith("not enough data: judaism vs sikhism: a group's rows lie in fewer than 3 clusters (2 and 2)")
    assert found[0].flags == ["not testable: " + line.untestable[0]]


def test_group_gap_findings_give_the_verdict_of_the_clustered_test_by_hand():
    from biaskit.evaluate.report.sections.labels import group_gap_findings

    # 4 pages of 9 texts per group. judaism: 6 of 9 positive on every page (page means 2/3, variance 0); sikhism: its 3
    # positives all on one page (page means 1/3, 0, 0, 0: mean 1/12, sample variance (1/16 + 3/144) / 3 = 1/36). With
    # equal pages CR2 with Bell-McCaffrey df is Welch's test on the page means with G - 2 = 6 df:
    # diff = 2/3 - 1/12 = 7/12, se = sqrt(0 / 4 + (1/36) / 4) = 1/12, t = 7
    df = pd.DataFrame(_texts("gpt2", "judaism", 24, 36, [f"J{k}" for k in range(4)]) + _texts("gpt2", "sikhism", 3, 36, [f"S{k}" for k in range(4)]))
    (f,) = group_gap_findings(df, "vader_label", "positive")
    t975 = scipy.stats.t.ppf(0.975, 6)
    assert f.estimate == pytest.approx(7 / 12)
    assert f.ci == pytest.approx((7 / 12 - t975 / 12, 7 / 12 + t975 / 12))
    assert f.p == pytest.approx(2 * scipy.stats.t.sf(7.0, 6))  # a family of one pair: Holm changes nothing
    (line,) = verdicts([f])
    assert line.lead is f and line.verdict == "evidence of a gap" and line.family.endswith("(1 test)")
