"""build_report on a hand-built run: its numbers equal independent computations; missing tables are named."""

import re
import struct

import pandas as pd
import pytest
from scipy.stats import chi2_contingency, fisher_exact, mannwhitneyu
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from biaskit.errors import BiaskitError
from biaskit.evaluate.report import build_report, discover_tables
from biaskit.evaluate.report.model import SECTIONS


def _scores(run):
    return pd.read_parquet(run / "scores.parquet")


def _png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_every_section_figure_and_table_is_written(full_report):
    assert full_report.sections == [
        "sentiment",
        "toxicity",
        "regard",
        "gender",
        "norms",
        "likelihood_bias",
        "honest",
        "validity",
        "agreement",
        "fairness",
    ]
    # the fixture run has no HolisticBias generations with class probabilities (tests/evaluate/stats/test_genbias.py covers that section)
    # nor counterfactual pairs, prompt formats or an annotation round (test_counterfactual_section.py, test_format_section.py
    # and test_ppi_section.py)
    assert [w for w, _ in full_report.skipped] == [
        "HolisticBias generation bias",
        "Counterfactual pairs",
        "Prompt format",
        "The metric corrected by human labels",
    ]
    names = {p.name for p in full_report.figures}
    assert {
        "sentiment_gender.png",
        "male_minus_female.png",
        "honest_categories.png",
        "likelihood_bias_tiny_lm.png",
        "metric_vs_human.png",
        "inter_annotator_agreement.png",
        "regard_race.png",
        "toxicity_profession.png",
        "fairness_vader.png",
    } <= names
    for p in full_report.figures:
        w, h = _png_size(p)
        assert w >= 400 and h >= 200
    for name, csv in full_report.tables.items():
        assert csv.exists() and csv.with_suffix(".md").exists()


def test_sentiment_shares_equal_a_pandas_crosstab(full_run, full_report):
    df = _scores(full_run)
    rep = pd.read_csv(full_report.tables["sentiment_proportions"]).set_index(["domain", "group", "model"])
    for (dom, g, m), sub in df.groupby(["domain", "group", "model"]):
        valid = sub["vader_label"].dropna()
        row = rep.loc[(dom, g, m)]
        assert row["n"] == len(sub) and row["n_null"] == sub["vader_label"].isna().sum()
        for lab in ("positive", "neutral", "negative"):
            assert row[f"prop_{lab}"] == pytest.approx((valid == lab).mean())
    # nulls are shown, not dropped: 1 failed gpt2 row per group, 7 groups
    assert rep["n_null"].sum() == 7 and rep["n"].sum() == len(df)


def test_ztests_in_the_report_equal_statsmodels_with_holm(full_run, full_report):
    df = _scores(full_run)
    z = pd.read_csv(full_report.tables["sentiment_positive_ztests"])
    fam = z[(z.domain == "profession") & (z.model == "gpt2")]
    raw = []
    for _, r in fam.iterrows():
        a = df[(df.domain == "profession") & (df.model == "gpt2") & (df.group == r.group_a)]["vader_label"].dropna()
        b = df[(df.domain == "profession") & (df.model == "gpt2") & (df.group == r.group_b)]["vader_label"].dropna()
        ka, kb = int((a == "positive").sum()), int((b == "positive").sum())
        if min(len(a), len(b)) < 30:  # a group under 30 texts: Fisher's exact test, not the pooled z-test
            p = fisher_exact([[ka, len(a) - ka], [kb, len(b) - kb]]).pvalue
        else:
            _, p = proportions_ztest([ka, kb], [len(a), len(b)])
        raw.append(p)
    assert list(fam.p_value) == pytest.approx(raw)
    assert list(fam.p_holm) == pytest.approx(list(multipletests(raw, method="holm")[1]))
    assert list(fam.p_bh) == pytest.approx(list(multipletests(raw, method="fdr_bh")[1]))


def test_chi2_and_mann_whitney_in_the_report_equal_scipy(full_run, full_report):
    df = _scores(full_run)
    c = pd.read_csv(full_report.tables["sentiment_chi2_sources"]).set_index("domain")
    sub = df[df.domain == "race"].dropna(subset=["vader_label"])
    ref = chi2_contingency(pd.crosstab(sub.model, sub.vader_label).values, correction=False)
    assert c.loc["race", "chi2"] == pytest.approx(ref.statistic) and c.loc["race", "p_value"] == pytest.approx(ref.pvalue)
    mw = pd.read_csv(full_report.tables["sentiment_vader_compound_mannwhitney"])
    r = mw[(mw.domain == "gender") & (mw.model == "wikipedia")].iloc[0]
    g = df[(df.domain == "gender") & (df.model == "wikipedia")]
    ref = mannwhitneyu(g[g.group == r.group_a].vader_compound, g[g.group == r.group_b].vader_compound, alternative="two-sided")
    assert r.u == ref.statistic and r.p_value == pytest.approx(ref.pvalue)


def test_gender_and_likelihood_and_honest_tables_equal_hand_counts(full_run, full_report):
    df = _scores(full_run)
    g = pd.read_csv(full_report.tables["gender_polarity_by_source"]).set_index("model")
    w = df[df.model == "wikipedia"]["gender_wavg_label"]
    assert g.loc["wikipedia", "wavg_male"] == (w == "male").sum()
    assert g.loc["wikipedia", "wavg_ratio"] == pytest.approx((w == "male").sum() / (w == "female").sum())
    lb = pd.read_csv(full_report.tables["likelihood_bias_by_axis"]).set_index("axis")
    # the fixture separates ability descriptors by 0.5 in log-perplexity (sd 0.2, 8 nouns) and gives age none:
    # every ability pair differs in both templates (6/6); age pairs come from one distribution
    assert lb.loc["ability", "n_different"] == 6 and lb.loc["ability", "n_pairs"] == 6
    assert lb.loc["age", "n_pairs"] == 12
    h = pd.read_csv(full_report.tables["honest_by_subject_category"]).set_index(["language", "subject_category"])
    f = pd.read_parquet(full_run / "fillins.parquet")
    sub = f[(f.language == "en") & (f.subject_category == "female")]
    assert h.loc[("en", "female"), "honest_score"] == pytest.approx(sub.honest_hurtful.mean())


def test_bootstrap_cis_in_the_report_are_reproducible(full_run, full_report, tmp_path):
    again = build_report(full_run, tmp_path / "again", n_boot=200)  # same seed (0) and n_boot as full_report
    for name in ("toxicity_proportions", "sentiment_proportions"):
        a, b = (pd.read_csv(r.tables[name]) for r in (full_report, again))
        assert a.equals(b) and a["ci_low_toxic" if name.startswith("tox") else "ci_low_positive"].notna().all()


def test_missing_tables_are_named_in_the_report(make_run, tmp_path):
    run = make_run(tmp_path / "run", likelihoods=False, fillins=False, agreement=False)
    res = build_report(run, tmp_path / "rep", n_boot=50)
    skipped = dict(res.skipped)
    assert set(skipped) == {
        "HolisticBias Likelihood Bias",
        "HolisticBias generation bias",
        "Counterfactual pairs",
        "HONEST",
        "Completion validity",
        "Agreement",
        "Metric fairness",
        "Prompt format",
        "The metric corrected by human labels",
    }
    assert "honest_hurtful" in skipped["HONEST"] and "scores: 420 rows" in skipped["HONEST"]
    page = res.html.read_text()
    assert "Not made" in page and "honest_hurtful" in page
    md = res.md.read_text()
    assert "- **HONEST**: no table has column(s) honest_hurtful" in md


def test_html_is_self_contained_and_markdown_points_at_existing_files(full_report):
    page = full_report.html.read_text()
    srcs = re.findall(r"<img src='([^']*)'", page)
    assert len(srcs) == len(full_report.figures) and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert "<script" not in page and "http://" not in page and "https://" not in page.split("<pre>")[0]
    assert "Run manifest" in page and "&quot;command&quot;: &quot;test run&quot;" in page
    for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", full_report.md.read_text()):
        assert (full_report.out / target).exists()


def test_run_folder_errors_are_coded(tmp_path):
    with pytest.raises(BiaskitError) as ei:
        build_report(tmp_path / "nope")
    assert ei.value.code == "E081" and "nope" in str(ei.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(BiaskitError, match="no readable tables"):
        build_report(tmp_path / "empty")
    res = build_report(tmp_path / "empty", allow_empty=True)
    # every analysis but the judge and BBQ sections (left out of a run without judge columns or an answered BBQ
    # table) is listed as not made
    assert res.sections == [] and len(res.skipped) == len(SECTIONS) - 2 == 14 and res.html.exists()


def test_discover_tables_without_manifest_uses_table_files(full_run, tmp_path):
    import shutil

    run = tmp_path / "copy"
    shutil.copytree(full_run, run)
    (run / "manifest.json").unlink()
    assert sorted(discover_tables(run)) == ["agreement", "fillins", "likelihoods", "scores"]


def test_cli_report_writes_the_report_and_lists_what_was_not_made(make_run, full_run, tmp_path):
    from typer.testing import CliRunner

    from biaskit.cli import app

    run = make_run(tmp_path / "run", scores=False)  # no scores: sentiment ... norms are "not made"
    r = CliRunner().invoke(app, ["report", str(run), "--out", str(tmp_path / "rep"), "--n-boot", "50"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "rep" / "report.html").exists() and "7 figures" in r.output  # 6, and the template-sensitivity figure
    assert "not made: Sentiment (VADER): no table has column(s) vader_label" in r.output
    r = CliRunner().invoke(app, ["report", str(tmp_path / "missing")])
    assert r.exit_code == 1 and "E081" in r.output
    r = CliRunner().invoke(app, ["stats", "ztest", str(full_run / "scores.parquet"), "--within", "domain,model"])
    assert r.exit_code == 0 and "| domain | model | group_a |" in r.output
    r = CliRunner().invoke(app, ["stats", "aggregate", str(full_run / "scores.parquet"), "--labels", "nope_label"])
    assert r.exit_code == 1 and "nope_label" in r.output


def test_importing_stats_and_report_loads_no_heavy_library():
    import subprocess
    import sys

    code = "import sys, biaskit.evaluate.stats, biaskit.evaluate.report; print(sorted(m for m in ('scipy','matplotlib','pandas','statsmodels') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_agreement_and_validation_tables_are_read_together(make_run, tmp_path):
    from biaskit.evaluate.report.build import _Builder
    from biaskit.evaluate.report.sections.agreement import _agreement_section

    run = make_run(tmp_path / "run", scores=False, likelihoods=False, fillins=False)
    agr = pd.read_parquet(run / "agreement.parquet")
    loaded = {"agreement": agr[agr.metric.isna()], "validation": agr[agr.metric.notna()]}
    b = _Builder(tmp_path / "rep", 0, 10, 0.05)
    sec = _agreement_section(b, loaded)
    assert len(sec.tables[0].df) == 8 and set(sec.tables[0].df["table"]) == {"agreement", "validation"}  # 5 + 3 per-group rows
    assert [f.path.name for f in sec.figures] == ["metric_vs_human.png", "inter_annotator_agreement.png"]


def test_markdown_table_escapes_pipes_formats_numbers_and_notes_cut_rows():
    from biaskit.evaluate.report.tables import markdown_table

    df = pd.DataFrame({"group": ["a|b", "c"], "p": [0.00001234, float("nan")], "ok": [True, False], "n": [3, 4]})
    md = markdown_table(df, max_rows=1)
    assert md.splitlines()[:3] == ["| group | p | ok | n |", "|---|---|---|---|", "| a\\|b | 1.23e-05 | yes | 3 |"]
    assert "1 more rows in the CSV file" in md
    assert "| c | n/a | no | 4 |" in markdown_table(df)


def test_a_single_table_file_is_a_run_of_one_table(full_run, tmp_path):
    res = build_report(full_run / "fillins.parquet", tmp_path / "rep", n_boot=20)
    assert res.sections == ["honest", "validity"] and len(res.skipped) == 12  # 9, the prompt-format, PPI and counterfactual sections


def test_a_column_that_is_null_everywhere_is_reported_not_plotted(tmp_path):
    import pyarrow as pa

    from biaskit.io import write_table

    run = tmp_path / "run"
    t = pa.table(
        {
            "prompt_id": ["a", "b"],
            "group": ["x", "y"],
            "model": ["m", "m"],
            "vader_label": ["positive", "neutral"],
            "regard_label": pa.array([None, None], pa.string()),
            "regard_error": ["no classifier", "no classifier"],
        }
    )
    write_table(t, run / "scores.parquet")
    res = build_report(run, n_boot=10)
    why = dict(res.skipped)["Regard"]
    assert "`scores` has regard_label but every one of its 2 rows is null" in why
    assert "sentiment" in res.sections


def test_likelihood_table_whose_model_column_is_all_null_still_gets_its_section(tmp_path):
    # a model column with only nulls (e.g. a CSV without model names) still gives the section, not pandas'
    # "No objects to concatenate" for want of a model to loop over
    run = tmp_path / "run"
    run.mkdir()
    rows = [
        {
            "axis": "age",
            "template": "I am {noun}.",
            "descriptor": d,
            "perplexity": float(i + 1 + (10 if d == "old" else 0)),
            "kind": "likelihood",
            "model": None,
        }
        for d in ("old", "young")
        for i in range(9)
    ]
    pd.DataFrame(rows).to_csv(run / "likelihoods.csv", index=False)
    res = build_report(run, n_boot=10)
    assert "likelihood_bias" in res.sections
    by_axis = pd.read_csv(res.tables["likelihood_bias_by_axis"])
    assert by_axis["n_pairs"].tolist() == [1] and by_axis["n_different"].tolist() == [1]


def test_cli_ztest_with_a_label_that_occurs_nowhere_is_a_coded_error(full_run):
    # a typo in --label is a coded error, not a table of zero shares (every test undefined) and exit code 0
    from typer.testing import CliRunner

    from biaskit.cli import app

    r = CliRunner().invoke(app, ["stats", "ztest", str(full_run / "scores.parquet"), "--label", "positve"])
    assert r.exit_code == 1 and "E080" in r.output and "'positve'" in r.output and "'positive'" in r.output
