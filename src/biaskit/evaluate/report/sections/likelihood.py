"""Report section: HolisticBias Likelihood Bias (Mann-Whitney U between descriptor pairs per axis and template)."""

from __future__ import annotations

from biaskit.evaluate.report.model import MIN_GROUP_N, Finding, Section, SkipAnalysis, find_table, register_section, slug
from biaskit.evaluate.report.plots import Axes, BarColumns, fraction_bars
from biaskit.evaluate.report.sections.paired import add_paired
from biaskit.evaluate.stats import likelihood_bias
from biaskit.evaluate.stats.likelihood_bias import likelihood_bias_interval


def _likelihood_section(b, loaded) -> Section:
    import pandas as pd

    name, df = _likelihood_table(loaded)
    sec = Section(
        "likelihood_bias",
        "HolisticBias Likelihood Bias",
        [
            f"From table `{name}`. For each axis and template every pair of descriptors is compared with a two-sided "
            f"Mann-Whitney U test on their sentences' perplexities; a pair differs at p < {b.alpha}. The axis score is the "
            "fraction of differing pairs."
        ],
    )
    df = _drop_controls(sec, df)
    models = _likelihood_models(df)
    axes, pairs, ranks = _bias_per_model(b, sec, df, models)
    by_axis = pd.concat(axes, ignore_index=True)
    b.table(
        sec,
        "likelihood_bias_by_axis",
        by_axis,
        "Likelihood Bias per axis: differing pairs / tested pairs (exploratory: the pairs are tested without correction).",
    )
    all_pairs = pd.concat(pairs, ignore_index=True)
    sec.text.append(
        f"Each pair is tested on its own, without correction: with no real difference about {b.alpha:.0%} of pairs still "
        f"differ by chance, so compare a score with {b.alpha:g}, not with 0. The interval of each axis' score is a "
        f"percentile bootstrap over its descriptors ({b.n_boot} resamples; pairs sharing a descriptor are not independent)."
    )
    for _, r in by_axis.iterrows():
        sec.headline.append(_axis_finding(b, r, all_pairs))
    _axis_figures(b, sec, by_axis, models)
    _paired(b, sec, df, models)
    b.table(sec, "likelihood_bias_pairs", all_pairs, "Every descriptor pair per axis and template.", max_rows=20)
    b.table(
        sec,
        "likelihood_ranking",
        pd.concat(ranks, ignore_index=True),
        "Descriptors ranked by median perplexity per template (1 = most likely).",
        max_rows=20,
    )
    return sec


def _paired(b, sec: Section, df, models: list) -> None:
    """The paired analysis by template of each model's perplexities (see :mod:`.paired`)."""
    value = "perplexity" if "perplexity" in df.columns else "nll_mean"
    rows = df[df["kind"] == "likelihood"] if "kind" in df.columns else df
    for m in models:
        sub = rows[rows["model"] == m] if m is not None and "model" in rows.columns else rows
        add_paired(b, sec, sub, value, what=value, name="likelihood" + (f"_{slug(m)}" if m else ""), model=m)


def _likelihood_table(loaded):
    """(name, df) of the table with HolisticBias likelihoods; skips when it has only other kinds of rows."""
    name, df = find_table(loaded, ["axis", "template", "descriptor"], "likelihood", any_of=["perplexity", "nll_mean"])
    if "kind" in df.columns and not (df["kind"] == "likelihood").any():
        raise SkipAnalysis(f"table `{name}` has no rows with kind == likelihood")
    return name, df


def _drop_controls(sec: Section, df):
    """Leave out (and say so) the control sentences: HolisticBias sentences without a descriptor have no axis, so
    they are no group to compare."""
    control = df["axis"].isna() | df["descriptor"].isna()
    if control.any():
        sec.text.append(
            f"Left out: {int(control.sum())} control sentence(s) without a descriptor (null `axis`/`descriptor`); "
            "they belong to no axis, so they are not part of any Likelihood Bias score, chart or ranking."
        )
        df = df[~control]
    return df


def _likelihood_models(df) -> list:
    """The models with likelihood rows, sorted; ``[None]`` for a table without (or with an all-null) model column."""
    models = sorted(df["model"].dropna().unique()) if "model" in df.columns else [None]
    if "kind" in df.columns:
        models = sorted(df.loc[df["kind"] == "likelihood", "model"].dropna().unique()) if "model" in df.columns else [None]
    return models or [None]  # a model column that is all null: one unnamed model, not an empty report crash


def _bias_per_model(b, sec: Section, df, models: list):
    """:func:`likelihood_bias` of each model: its by-axis, pairs and ranking tables (lists of frames with a ``model``
    column first), saying in the section which rows each model left out."""
    axes: list = []
    pairs: list = []
    ranks: list = []
    for m in models:
        res = likelihood_bias(df, alpha=b.alpha, model=m)
        for part, acc in ((res.by_axis, axes), (res.pairs, pairs), (res.ranking, ranks)):
            part = part.copy()
            part.insert(0, "model", m if m is not None else "")
            acc.append(part)
        left = {k: v for k, v in res.skipped.items() if v and k != "other models"}  # other models' rows are theirs, not lost
        if left:
            sec.text.append(f"Model {m}: " + "; ".join(f"{v} row(s) left out ({k})" for k, v in left.items()) + ".")
    return axes, pairs, ranks


def _axis_finding(b, r, all_pairs) -> Finding:
    """The headline finding of one axis (row ``r`` of the by-axis table): its score with the descriptor-bootstrap
    interval, flagged when no pair was testable or the interval reaches the chance rate."""
    pr = all_pairs[(all_pairs["model"] == r["model"]) & (all_pairs["axis"] == r["axis"])] if len(all_pairs) else all_pairs
    n_min = int(min(pr["n_a"].min(), pr["n_b"].min())) if len(pr) else 0
    frac = float(r["fraction"]) if r["fraction"] == r["fraction"] else None
    ci = likelihood_bias_interval(pr, n_boot=b.n_boot, seed=b.seed, level=1 - b.alpha) if len(pr) else None
    flags = []
    if not r["n_pairs"]:
        flags.append("no testable descriptor pair")
    elif ci is not None and ci[0] <= b.alpha:
        flags.append(f"CI reaches the chance rate {b.alpha:g}")
    cautions = [f"few sentences (n < {MIN_GROUP_N} per descriptor)"] if n_min < MIN_GROUP_N else []
    cautions.append("pairs tested without correction")
    return Finding(
        "Likelihood Bias",
        "share of descriptor pairs whose perplexities differ",
        f"axis {r['axis']}" + (f" ({r['model']})" if r["model"] else ""),
        f"{int(r['n_different'])} of {int(r['n_pairs'])} pairs differ (Mann-Whitney p < {b.alpha} per pair, uncorrected; "
        f"chance alone: about {b.alpha:g})",
        frac,
        ci,
        None,
        "",
        f"min {n_min} sentences per descriptor",
        flags,
        "likelihood_bias",
        cautions=cautions,
    )


def _axis_figures(b, sec: Section, by_axis, models: list) -> None:
    """One bar chart per model: the fraction of differing descriptor pairs per axis."""
    for m in models:
        sub = by_axis[by_axis["model"] == (m if m is not None else "")]
        b.figure(
            sec,
            f"likelihood_bias_{slug(m or 'model')}",
            fraction_bars,
            sub,
            BarColumns("fraction", label="axis", num="n_different", den="n_pairs"),
            axes=Axes(f"Likelihood Bias per axis ({m})" if m else "Likelihood Bias per axis", ylabel="fraction of descriptor pairs that differ"),
            caption=f"Likelihood Bias per axis for {m or 'the model'} (labels: fraction, differing/tested pairs).",
        )


register_section("HolisticBias Likelihood Bias", _likelihood_section)
