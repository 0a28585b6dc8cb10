"""The demo's report stage runs on whatever tables the run has and says what it could not make."""

from biaskit.demo import DemoContext, stage_report


def test_report_stage_on_a_partial_run_names_what_is_missing(full_run, tmp_path):
    ctx = DemoContext(run_dir=full_run.parent / "partial", quick=True)
    ctx.run_dir.mkdir(exist_ok=True)
    ctx.add("scores", full_run / "scores.parquet")  # only scores: no likelihoods, fill-ins or agreement
    ctx.note("score", "hand-built")
    stage_report.run(ctx)
    assert ctx.tables["report_html"].exists()
    note = ctx.summary[-1]
    assert note[0] == "report" and "; not made: " in note[1]
    # every section whose table is missing is named (in registry order; Metric fairness needs validation rows)
    assert set(note[1].split("; not made: ")[1].split(", ")) == {
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
    info = ctx.info["report"]
    assert info["sections"] == ["sentiment", "toxicity", "regard", "gender", "norms"]
    assert any(x.startswith("HONEST: no table has column(s) honest_hurtful") for x in info["not_made"])
    page = ctx.tables["report_html"].read_text()
    assert "hand-built" in page and "biaskit demo report" in page


def test_report_stage_with_no_tables_still_writes_a_report(tmp_path):
    ctx = DemoContext(run_dir=tmp_path / "run", quick=True)
    ctx.run_dir.mkdir()
    stage_report.run(ctx)
    assert ctx.tables["report_html"].exists() and "0 figures" in ctx.summary[-1][1]
    from biaskit.evaluate.report.model import SECTIONS

    # with no tables every analysis is listed as not made, except the judge and BBQ sections, which a run without
    # judge columns or an answered BBQ table leaves out altogether
    assert len(ctx.info["report"]["not_made"]) == len(SECTIONS) - 2 == 14
    assert not any("judge" in x or "BBQ" in x for x in ctx.info["report"]["not_made"])
