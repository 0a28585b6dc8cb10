"""``biaskit report`` (the run report) and ``biaskit stats`` (group statistics of one table)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from biaskit.bootstrap import BootSpec
from biaskit.cli import sub_app
from biaskit.cli.options import DeviceOpt
from biaskit.errors import BiaskitError, check_choice
from biaskit.evaluate.report import build_report
from biaskit.evaluate.report.tables import markdown_table
from biaskit.evaluate.stats import aggregate, families, likelihood_bias, pairwise_proportion_tests, validity_summary, validity_tests
from biaskit.evaluate.stats.aggregate import label_strings, metric_labels
from biaskit.evaluate.stats.bbq import LikelihoodAnswers, score_files
from biaskit.evaluate.stats.families import proportion_family_tests
from biaskit.evaluate.stats.genbias import DDOF, SCALE, check_method, gen_bias, style_probabilities
from biaskit.evaluate.stats.inference import check_level
from biaskit.evaluate.stats.paired import paired_by_template
from biaskit.evaluate.stats.pairs import pair_stats
from biaskit.evaluate.stats.ppi import PPIShare, ppi_table
from biaskit.evaluate.stats.ppiround import HUMAN_COLUMN, join_round_files
from biaskit.io import output_lock, read_table, write_frame, write_table
from biaskit.output import write_frame_csv
from biaskit.ownership import claim_folder, write_owned_folder
from biaskit.spreadsheet import neutralize_frame


def report(
    run_dir: Path = typer.Argument(..., help="Run folder (written by `biaskit demo` or by the stages) holding the tables, or one table file."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Report folder to write (default: RUN_DIR/report)."),
    seed: int = typer.Option(0, help="Seed of the bootstrap confidence intervals."),
    n_boot: int = typer.Option(1000, "--n-boot", help="Bootstrap resamples per confidence interval."),
    alpha: float = typer.Option(0.05, help="Significance level (Likelihood Bias pairs)."),
    title: str = typer.Option("biaskit report", help="Title of the report."),
    min_gap: float = typer.Option(
        0.05, "--min-gap", help="Smallest gap of interest (a share difference): the headline says when the groups are too small to see it."
    ),
) -> None:
    """Write the statistical report of a run: report.html (self-contained, opens offline), report.md,
    figures/*.png and tables/*.csv + *.md. Figures whose tables or columns are missing are listed under
    "Not made" with the reason.

    Example: biaskit report runs/demo --out runs/demo/report

    Example: biaskit report runs/demo --out /tmp/report --n-boot 2000 --seed 1

    Example: biaskit report runs/demo/scores.parquet --out /tmp/scores-report

    Example: biaskit report runs/demo --out /tmp/report --min-gap 0.1
    """
    # --out is locked by the CLI; the default folder (RUN_DIR/report) too, so two reports never write it at once
    target = out if out is not None else (run_dir.parent if run_dir.is_file() else run_dir) / "report"
    with output_lock(target, command="biaskit report"):
        res = build_report(run_dir, out, seed=seed, n_boot=n_boot, alpha=alpha, title=title, min_gap=min_gap)
    typer.echo(f"report written to {res.html}")
    typer.echo(f"  {len(res.figures)} figures, {len(res.tables)} tables; sections: {', '.join(res.sections) or 'none'}")
    for what, why in res.skipped:
        typer.echo(f"  not made: {what}: {why}")


def aggregate_cmd(
    table: Path = typer.Argument(..., help="Scored table (.parquet, .jsonl, .csv or a datasets folder)."),
    by: str = typer.Option("group,model", "--by", help="Comma-separated grouping columns."),
    labels: str = typer.Option("", "--labels", help="Comma-separated label columns (e.g. vader_label,regard_label)."),
    means: str = typer.Option("", "--means", help="Comma-separated numeric columns to average (e.g. vader_compound)."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write the result here (.csv, .parquet or .jsonl: the suffix picks the format; default: print Markdown)."
    ),
    seed: int = typer.Option(0, help="Bootstrap seed."),
    n_boot: int = typer.Option(1000, "--n-boot", help="Bootstrap resamples (means; proportions with --prop-ci bootstrap)."),
    prop_ci: str = typer.Option("wilson", "--prop-ci", help="Interval of a label share: wilson (default), clopper-pearson or bootstrap."),
    cluster: str = typer.Option(
        "auto",
        "--cluster",
        help="Column of clusters of dependent texts: shares get Wilson on n / design effect (CR1), means a cluster bootstrap; auto = page_id, else template_id / template; none = independent.",
    ),
) -> None:
    """Counts, label shares (Wilson CIs) and means (bootstrap CIs) per group; nulls counted in n_null.
    With clusters (the default when the table has page_id or a template column) the intervals account for
    texts of one page or template being alike; the method column names the interval.

    Example: biaskit stats aggregate runs/demo/scores.parquet --by domain,group,model --labels vader_label --means vader_compound

    Example: biaskit stats aggregate scores.parquet --by group --labels vader_label --cluster page_id
    """
    res = aggregate(read_table(table), by, labels=labels, means=means, n_boot=n_boot, seed=seed, prop_ci=prop_ci, cluster=cluster)
    _emit(res, out)


def ztest_cmd(
    table: Path = typer.Argument(..., help="Scored table."),
    column: str = typer.Option("vader_label", help="Label column."),
    label: str = typer.Option("positive", help="Label whose share is compared."),
    group: str = typer.Option("group", help="Column whose values are compared pairwise."),
    within: str = typer.Option("", help="Comma-separated columns: one test family per value (e.g. domain,model)."),
    correction: str = typer.Option("holm", help="holm, bh or none."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write table here (.csv, .parquet or .jsonl: the suffix picks the format; default: print Markdown)."
    ),
    cluster: str = typer.Option(
        "auto",
        "--cluster",
        help="Column whose values are clusters of dependent texts (cluster-robust interval, z and p: CR1 with 30+ clusters per group, else CR2 with Bell-McCaffrey df): auto = page_id for scraped prompts, else template_id / template; none = independent texts (Newcombe interval).",
    ),
) -> None:
    """Two-proportion tests of a label's share between every pair of groups, with corrected p and Cohen's h,
    and the difference diff = p_a - p_b with its 95% interval (ci_low, ci_high). The method column names the method
    used: newcombe (z-test), fisher-exact (few texts), cr1-wald or cr2-bm-t (clustered; few clusters get CR2), none
    with a reason where the data support no test. The corrected p is named by its correction, as in the report:
    p_holm / significant_holm (holm), p_bh / significant_bh (bh). caution: n < 30 where either group has fewer than 30 texts
    (the report's small-group caution: read such a test with care).

    Example: biaskit stats ztest runs/demo/scores.parquet --column vader_label --label positive --within domain,model

    Example: biaskit stats ztest scores.parquet --column vader_label --label positive --cluster page_id
    """
    t = read_table(table)
    if column in t.column_names and metric_labels(column) is None:  # a metric's column: checked against its labels (E151)
        # a label that occurs nowhere (a typo) would give a table of 0 shares with every test undefined
        seen = sorted(set(label_strings(t.column(column).to_pandas()).dropna()))
        check_choice("E080", f"label {label!r} does not occur in column {column!r}", label, seen, fix="pass --label with one of the column's labels")
    tests = pairwise_proportion_tests(t, group, column, label, within=within, correction=correction, cluster=cluster)
    _emit(families.add_caution(families.name_by_correction(tests, correction)), out)


def family_cmd(
    table: Path = typer.Argument(..., help="Scored table (with domain, group and model columns; the Wikipedia baseline as model == wikipedia)."),
    kind: str = typer.Option("model-vs-wikipedia", "--kind", help="Family kind: group-gap or model-vs-wikipedia (see docs/report.md, Families)."),
    column: str = typer.Option("vader_label", help="Label column."),
    label: str = typer.Option("positive", help="Label whose share is compared."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write table here (.csv, .parquet or .jsonl: the suffix picks the format; default: print Markdown)."
    ),
) -> None:
    """The tests of one headline family, Holm-corrected within it: the same tests, families and corrected p (p_holm)
    that the report's tables and headline show. group-gap: every pair of groups of one domain and text source;
    model-vs-wikipedia: every group x model of one domain against the Wikipedia baseline.

    Example: biaskit stats family runs/demo/scores.parquet --kind model-vs-wikipedia --column vader_label --label positive

    Example: biaskit stats family runs/demo/scores.parquet --kind group-gap --column regard_label --label negative --out gaps.csv
    """
    res = proportion_family_tests(read_table(table), kind, column, label)
    _emit(res, out)
    if out is None and len(res):
        sizes = res.groupby("family", sort=False)["family_size"].first()
        for fam, k in sizes.items():
            typer.echo(f"family {fam}: {int(k)} tests (p_holm is Holm-corrected within it)")


def likelihood_bias_cmd(
    table: Path = typer.Argument(..., help="Likelihood table (kind == likelihood, columns axis, template, descriptor, perplexity)."),
    model: str | None = typer.Option(None, help="Model to use when the table holds several."),
    alpha: float = typer.Option(0.05, help="A descriptor pair differs at p < alpha."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write the per-axis table here (.csv, .parquet or .jsonl: the suffix picks the format; default: print Markdown)."
    ),
    paired_out: Path | None = typer.Option(
        None,
        "--paired-out",
        help="Also write the paired analysis by template (Wilcoxon signed-rank per descriptor pair, paired bootstrap, spread across templates) as CSV.",
    ),
) -> None:
    """HolisticBias Likelihood Bias: fraction of descriptor pairs per axis whose perplexities differ (Mann-Whitney U).

    Example: biaskit stats likelihood-bias runs/demo/likelihoods.parquet

    Example: biaskit stats likelihood-bias runs/demo/likelihoods.parquet --paired-out paired.csv
    """
    t = read_table(table)
    res = likelihood_bias(t, model=model, alpha=alpha)
    _emit(res.by_axis, out)
    if paired_out is not None:
        df = t.to_pandas()
        if "kind" in df.columns:
            df = df[df["kind"].isna() | (df["kind"] == "likelihood")]
        if model is not None and "model" in df.columns:
            df = df[df["model"] == model]
        value = "perplexity" if "perplexity" in df.columns else "nll_mean"
        _emit(paired_by_template(df[df["axis"].notna()], value), paired_out)


def genbias_cmd(
    generations: Path = typer.Argument(..., help="Generations of HolisticBias prompts (columns axis, descriptor, template, continuation)."),
    style_model: str | None = typer.Option(
        None,
        "--style-model",
        help="Any HF sequence classifier (folder or Hub id) whose class probabilities are the style vector (e.g. a `biaskit train classifier` folder).",
    ),
    prob_columns: str | None = typer.Option(
        None, "--prob-columns", help="Or: the table's style probability columns, names or patterns (e.g. 'regard_*' or a,b,c)."
    ),
    clusters: str | None = typer.Option(None, "--clusters", help="Style clusters NAME=style,style;NAME=style (styles not named: one cluster each)."),
    n_clusters: int | None = typer.Option(None, "--n-clusters", help="Or: cluster the styles hierarchically into this many clusters."),
    text_column: str = typer.Option("continuation", "--text-column", help="Text the style model reads (with --style-model)."),
    device: DeviceOpt = "auto",
    n_boot: int = typer.Option(1000, "--n-boot", help="Bootstrap resamples over generations (0 = no CIs)."),
    seed: int = typer.Option(0, help="Bootstrap seed."),
    top: int = typer.Option(10, "--top", help="Descriptors flagged as top contributors per axis."),
    method: str = typer.Option(
        "per_template",
        "--method",
        help="per_template (the paper's: variance across descriptors within each template, averaged over templates) or template_first (descriptor means averaged over templates first; flipped effects cancel).",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Folder for by_axis.csv, partial.csv, descriptors.csv, clusters.csv, genbias.json (and styles.parquet with --style-model).",
    ),
) -> None:
    """HolisticBias generation bias per axis (Smith et al. 2022): Full Gen Bias = (1/T) sum_t sum_s Var_d (variance
    across descriptors within each template, ddof=0, averaged over templates; also x1000 as the paper reports it),
    Partial Gen Bias and Summed-Cluster Gen Bias per style cluster, bootstrap CIs, the descriptors that contribute most.

    Example (the demo's HolisticBias prompts continued, styled by a classifier of yours in models/regard, e.g. from `biaskit train classifier`; biaskit ships none): biaskit generate runs/demo/prompts_holistic.parquet --model smollm2-135m --max-new-tokens 12 --out hb_gens.parquet && biaskit stats genbias hb_gens.parquet --style-model models/regard --n-clusters 2 --out hb_genbias

    Example: biaskit stats genbias scores.parquet --prob-columns 'regard_*' --clusters 'polar=regard_positive,regard_negative' --out /tmp/gb
    """
    check_method(method)
    if (style_model is None) == (prob_columns is None):
        raise BiaskitError(
            "E170",
            "give exactly one of --style-model and --prob-columns",
            value={"style_model": style_model, "prob_columns": prob_columns},
            fix="--style-model FOLDER_OR_ID scores the texts; --prob-columns uses probabilities already in the table",
        )
    claim = None if out is None else claim_folder(out, GENBIAS_MARKER, "stats genbias")  # before any work: E006 for a folder not ours
    t = read_table(generations)
    names = None
    if style_model is not None:
        t, cols, names = style_probabilities(t, style_model, text_column=text_column, device=device)
    else:
        cols = prob_columns
    res = gen_bias(t, cols, clusters=clusters, n_clusters=n_clusters, n_boot=n_boot, seed=seed, top=top, style_names=names, method=method)

    scale = (
        f"method {method}; variances are population variances (ddof={DDOF}); *_x1000 columns = the figure x{SCALE}, the scale of the paper's tables"
    )
    typer.echo(markdown_table(res.by_axis))
    typer.echo(f"note: {scale}")
    for n in res.notes:
        typer.echo(f"note: {n}")
    if out is not None:
        meta = {
            "generations": str(generations),
            "style_model": style_model,
            "prob_columns": cols,
            "styles": res.styles,
            "method": method,
            "ddof": DDOF,
            "scale": scale,
            "clusters": clusters,
            "n_clusters": n_clusters,
            "n_boot": n_boot,
            "seed": seed,
            "notes": res.notes,
        }
        _write_genbias(claim, res, meta, t if style_model is not None else None, paired=_genbias_paired(t, res.styles, n_boot, seed))
        typer.echo(f"wrote {out}/ (by_axis, partial, descriptors, clusters, paired)")


def _genbias_paired(t, styles: list, n_boot: int, seed: int):
    """The paired analysis by template of one style's probability (the first style named *negative*, else the first):
    within-template differences per descriptor pair (see :mod:`biaskit.evaluate.stats.paired`)."""
    df = t.to_pandas() if hasattr(t, "to_pandas") else t
    style = next((c for c in styles if "negative" in str(c)), styles[0] if styles else None)
    if style is None or style not in df.columns:
        return None
    if "kind" in df.columns:
        df = df[df["kind"].isna() | (df["kind"] == "generate")]
    keep = df["axis"].notna() if "axis" in df.columns else slice(None)
    return paired_by_template(df[keep], style, within=["model", "axis"], boot=BootSpec(n_boot=n_boot, seed=seed))


#: the `stats genbias --out` folder's metadata, also its ownership marker (:mod:`biaskit.ownership`)
GENBIAS_MARKER = "genbias.json"


def _write_genbias(claim, res, meta: dict, styles=None, paired=None) -> None:
    """The `stats genbias --out` folder, through the ownership layer: the four CSVs (and paired.csv), styles.parquet
    and genbias.json (the settings and the by-axis figures; the marker listing the files, written last)."""

    def fill(tmp: Path) -> None:
        parts = [("by_axis", res.by_axis), ("partial", res.partial), ("descriptors", res.descriptors), ("clusters", res.clusters)]
        for name, df in parts + ([("paired", paired)] if paired is not None else []):
            # opened in spreadsheets: text cells that would be formulas get a leading ' (OWASP)
            write_frame_csv(tmp / f"{name}.csv", neutralize_frame(df))
        if styles is not None:
            write_table(styles, tmp / "styles.parquet")

    write_owned_folder(claim, fill, {**meta, "by_axis": json.loads(res.by_axis.to_json(orient="records"))})


def register(app: typer.Typer) -> None:
    """Attach ``report`` and the ``stats`` group to the root app."""
    sub_app(
        app,
        "stats",
        {
            "aggregate": aggregate_cmd,
            "ztest": ztest_cmd,
            "family": family_cmd,
            "likelihood-bias": likelihood_bias_cmd,
            "genbias": genbias_cmd,
            "validity": validity_cmd,
            "ppi": ppi_cmd,
            "bbq": bbq_cmd,
            "pairs": pairs_cmd,
        },
    )
    app.command("report")(report)


def ppi_cmd(
    table: Path = typer.Argument(..., help="Scored table: the metric's label on every row (and the human label on some, or a round)."),
    metric_column: str = typer.Option(..., "--metric-column", help="The metric's label column (e.g. vader_label)."),
    label: str = typer.Option(..., "--label", help="Label whose share is estimated (e.g. negative)."),
    by: str = typer.Option("group", "--by", help="Group column: one PPI estimate per value, and a gap per pair."),
    human_column: str | None = typer.Option(None, "--human-column", help="Human label column of TABLE (null = unlabelled row)."),
    samples: Path | None = typer.Option(None, "--samples", help="Or: the round's samples table (annotate sample), with --annotations or --labels."),
    annotations: Path | None = typer.Option(None, "--annotations", help="The round's annotations (majority vote; ties and gold items left out)."),
    labels: Path | None = typer.Option(None, "--labels", help="Or: the round's labels table (annotate aggregate)."),
    lam: float | None = typer.Option(None, "--lam", help="Fixed λ in [0, 1] (1 = classic PPI); default: PPI++ power-tuned λ."),
    ci: float = typer.Option(0.95, "--ci", help="Confidence level of the intervals."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write the rows here (.csv, .parquet or .jsonl: the suffix picks the format; default: print Markdown)."
    ),
) -> None:
    """Prediction-powered inference (PPI++): the metric's share of a label per group corrected by human labels.

    Rows: share_metric (metric on all rows, Wilson), share_human (labelled rows, Wilson), share_ppi
    (PPI++ or PPI with --lam, normal interval) per group; gap_metric, gap_human (Newcombe) and gap_ppi
    (SE = sqrt(se_a^2 + se_b^2)) per pair of groups. Unlabelled rows = rows without a human label.

    Example: biaskit stats ppi scores.parquet --metric-column vader_label --human-column human_label --label negative --by group --out ppi.csv

    Example: biaskit stats ppi runs/demo/scores.parquet --metric-column vader_label --label negative --by group --samples r1/samples.parquet --annotations r1/annotations.parquet

    Example: biaskit stats ppi scores.parquet --metric-column vader_label --label negative --samples r1/samples.parquet --labels r1/labels.parquet --lam 1
    """
    t = read_table(table)
    if (human_column is None) == (samples is None):
        raise BiaskitError(
            "E346",
            "give exactly one of --human-column and --samples (with --annotations or --labels)",
            value={"human_column": human_column, "samples": None if samples is None else str(samples)},
            fix="--human-column COL when TABLE holds the human labels; else --samples S --annotations A (or --labels L)",
        )
    info = None
    if samples is not None:
        t, info = join_round_files(t, samples, annotations=annotations, labels=labels)
        human_column = HUMAN_COLUMN
    elif annotations is not None or labels is not None:
        raise BiaskitError("E346", "--annotations and --labels need --samples", fix="add --samples SAMPLES (the round's samples table)")
    assert human_column is not None  # exactly one of --human-column and --samples, checked above
    res = ppi_table(t, PPIShare(metric_column=metric_column, human_column=human_column, label=label, by=by), lam=lam, level=ci)
    if info is not None:
        typer.echo(f"round: {info['matched']} labelled samples joined on {', '.join(info['keys'])}; {info['unmatched']} matched no scored row")
        if info["stratified"]:
            typer.echo("note: the round was drawn in strata; PPI assumes the labelled rows are a uniform random sample of each group")
    _emit(res, out)


def pairs_cmd(
    table: Path = typer.Argument(..., help="Scored pairs table: two rows per pair_id (variant more/less, or a pair's two rows), a score per row."),
    score_column: str = typer.Option(..., "--score-column", help="Numeric score of each row, e.g. sum_logprob from `biaskit likelihood`."),
    by: str = typer.Option("bias_type", "--by", help="Group column (one row per value, plus the row 'all'); '' for the all row only."),
    ci: float = typer.Option(0.95, "--ci", help="Confidence level of the Clopper-Pearson intervals."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the rows as CSV here (default: print Markdown)."),
) -> None:
    """Share of pairs whose 'more' (or first) variant scores higher, per group and for all pairs (CrowS-Pairs' metric).

    Columns: n_pairs, n_higher, n_ties, n_lower (ties count as not higher, as in CrowS-Pairs and lm-eval; never
    dropped), estimate = n_higher / n_pairs, ci_low/ci_high (Clopper-Pearson, method), p_value (sign test: exact binomial of
    n_higher of n_higher + n_lower against 0.5, ties left out),
    p_holm (Holm over the groups; the all row is its own test), n_missing (a null score), n_incomplete (a pair
    with one row). One set of rows per model when the table has a model column.

    Example: biaskit hub load src/biaskit/data/crows_pairs/crows_pairs_anonymized.csv --out crows.parquet && biaskit likelihood crows.parquet --model smollm2-135m --out crows_ll.parquet && biaskit stats pairs crows_ll.parquet --score-column sum_logprob --by bias_type --out crows_stats.csv
    """
    res = pair_stats(read_table(table), score_column, by=by.strip() or None, level=check_level(ci))
    _emit(res, out)


def validity_cmd(
    table: Path = typer.Argument(..., help="Fill-ins scored with the validity metric (validity_valid)."),
    by: str = typer.Option("model,language,subject_category", "--by", help="Comma-separated grouping columns (missing ones are left out)."),
    category: str = typer.Option("subject_category", "--category", help="Column whose values the chi-square test compares."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Write the per-group shares here (.csv, .parquet or .jsonl: the suffix picks the format; default: print Markdown)."
    ),
    tests_out: Path | None = typer.Option(
        None, "--tests-out", help="Write the chi-square tests here (.csv, .parquet or .jsonl: the suffix picks the format; default: print Markdown)."
    ),
    method: str = typer.Option("wilson", "--ci", help="Interval of the share: wilson or clopper-pearson."),
) -> None:
    """Completion validity: share of fill-ins that are real words per group (Wilson CI), and a chi-square
    test of valid / not valid across --category within each model and language (Holm-adjusted p).

    Example: biaskit score fillins.parquet --metrics validity --text-column token --out fillins_valid.parquet && biaskit stats validity fillins_valid.parquet

    Example: biaskit stats validity fillins_valid.parquet --by model,language --category subject_category --out shares.csv --tests-out tests.csv
    """
    t = read_table(table)
    _emit(validity_summary(t, by, method=method), out)
    within = [c for c in by.split(",") if c.strip() and c.strip() != category]
    _emit(validity_tests(t, category, within), tests_out)


def bbq_cmd(
    table: Path = typer.Argument(..., help="BBQ examples with a prediction column (expand bbq or hub load, then answered)."),
    prediction_column: str | None = typer.Option(None, "--prediction-column", help="Predicted option (0-2 or ans0-ans2) or the answer as text."),
    likelihoods: Path | None = typer.Option(
        None, "--likelihoods", help="Or: `biaskit likelihood` of `expand bbq-choices` (--span-column answer_span): the lowest-NLL option."
    ),
    normalisation: str = typer.Option("sum", "--normalisation", help="With --likelihoods: sum (total NLL of the option) or per-token."),
    answers_out: Path | None = typer.Option(None, "--answers-out", help="With --likelihoods: also write the examples with their prediction."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write the rows as CSV here (default: print Markdown)."),
    ci: float = typer.Option(0.95, "--ci", help="Confidence level of the intervals."),
    n_boot: int = typer.Option(1000, "--n-boot", help="Cluster-bootstrap replicates of the ambiguous-context bias score."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
) -> None:
    """BBQ accuracy and bias score (s_DIS, s_AMB; x100) per category x context condition, "(names)" rows apart.

    Example: biaskit stats bbq bbq_answered.parquet --prediction-column prediction --out bbq_scores.csv

    Example: biaskit stats bbq bbq_age_predictions.parquet --prediction-column model_answer --ci 0.9

    Example: biaskit stats bbq bbq.parquet --likelihoods bbq_ll.parquet --normalisation per-token --answers-out answered.parquet --out scores.csv
    """
    answers = LikelihoodAnswers(likelihoods, normalisation, answers_out) if likelihoods is not None else None
    df = score_files(table, prediction_column, likelihoods=answers, boot=BootSpec(n_boot=n_boot, level=ci, seed=seed))
    unmatched = int(df["n_unmatched"].sum()) if len(df) else 0
    if unmatched:
        typer.echo(f"{unmatched} predictions matched no option: counted in n_unmatched, not scored", err=True)
    _emit(df, out)


def _emit(df, out: Path | None) -> None:
    if out is not None:
        write_frame(df, out)  # the format its suffix names (.csv for spreadsheets: formula-like cells get a leading ')
        typer.echo(f"wrote {len(df)} rows to {out}")
    else:
        typer.echo(markdown_table(df))
