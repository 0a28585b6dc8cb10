"""Report sections of the label metrics, one per label output a metric declares with a ``report_label``
(:class:`biaskit.evaluate.metrics.base.LabelOutput`): today sentiment (VADER), toxicity (or profanity, for
the offline backend) and regard, and any plugin metric that asks for one: label shares per group with
Wilson CIs, z-tests and chi-square tests between groups, each model against the Wikipedia baseline, and
the largest gaps as headline findings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from biaskit.bootstrap import BootSpec
from biaskit.evaluate.baseline import SPAN_WORDS
from biaskit.evaluate.metrics.base import LabelOutput
from biaskit.evaluate.metrics.catalog import label_outputs
from biaskit.evaluate.report.model import (
    MIN_GROUP_N,
    Finding,
    Section,
    SkipAnalysis,
    by_domain,
    find_table,
    group_pair_table,
    newcombe,
    register_section,
    slug,
    small_n_cautions,
    uncertainty_flags,
    with_bh,
)
from biaskit.evaluate.report.plots import stacked_proportions
from biaskit.evaluate.stats import chi2_by, label_proportions, pairwise_mann_whitney, regard_difference
from biaskit.evaluate.stats._common import groups_of
from biaskit.evaluate.stats.cluster import CLUSTERED_METHODS
from biaskit.evaluate.stats.columns import GroupPair
from biaskit.evaluate.stats.families import proportion_family_tests
from biaskit.evaluate.stats.verdicts import pages_per_group, untestable_reason
from biaskit.labels import check_values
from biaskit.manifest import metric_description

#: untestable comparisons a verdict line lists by name (the rest are counted)
MAX_UNTESTABLE_LISTED = 6


def _gap_findings(run: _LabelRun, z, spec: _FindingSpec) -> list[Finding]:
    """The most decisive testable row per value of the ``where`` columns (those ``z`` has) of a two-proportion test
    table of a label section, as findings: of the pairs that can be tested (:func:`untestable_reason`: not a group too
    small, not a group whose texts all come from one page, not without variation), the one with the smallest corrected
    p, then the largest |diff|. The others that cannot be tested are listed on the finding with their reason; when no
    pair can be tested, the finding is the largest gap with no p ("not enough data" with the reasons).

    ``diff`` is ``group_a`` minus ``group_b`` (the tables are built so that this is the direction shown); ``spec``
    says how a row becomes a finding (:class:`_FindingSpec`)."""
    where_cols = [c for c in spec.where if c in z.columns]
    pages_of = spec.pages_of
    out: list[Finding] = []
    z = z[z["diff"].notna()]
    for key, g in groups_of(z, where_cols) if len(z) else []:
        if not (g["count_a"] + g["count_b"]).any():
            continue  # no text of this family has the label: nothing to compare (said once as "No signal")
        reasons = {i: _pair_reason(run, r, pages_of) for i, r in g.iterrows()}
        ok = g[[not reasons[i] and r["p_holm"] == r["p_holm"] for i, r in g.iterrows()]]
        r = ok.assign(_gap=-ok["diff"].abs()).sort_values(["p_holm", "_gap"], kind="stable").iloc[0] if len(ok) else g.loc[g["diff"].abs().idxmax()]
        # a model-vs-Wikipedia row compares sources within a group: name the group too
        bad = [
            (f"{x['group']}: " if "group" in x.index else "") + f"{x['group_a']} vs {x['group_b']}: {reasons[i]}"
            for i, x in g.iterrows()
            if reasons[i]
        ]
        if len(bad) > MAX_UNTESTABLE_LISTED:
            bad = bad[:MAX_UNTESTABLE_LISTED] + [f"and {len(bad) - MAX_UNTESTABLE_LISTED} more pairs (see the section's table)"]
        out.append(spec.finding(run, r, key, testable=bool(len(ok)), untestable=bad))
    return out


def _pair_reason(run: _LabelRun, r, pages_of) -> str:
    """Why the pair of row ``r`` cannot be tested (:func:`untestable_reason`), else, when its test gave no p (a group in
    fewer clusters than the cluster-robust methods need, ...), the test's own ``reason``; "" when it can be tested."""
    counts = (r["count_a"], r["n_a"], r["count_b"], r["n_b"])
    why = untestable_reason(r["group_a"], r["group_b"], counts, run.shown_label, pages_of(r) if pages_of else ())
    if why or r["p_holm"] == r["p_holm"]:
        return why
    own = r["reason"] if "reason" in r.index and isinstance(r["reason"], str) else ""
    return own or "the test is undefined here"


@dataclass(frozen=True)
class _FindingSpec:
    """How the rows of a two-proportion test table become headline findings: their ``kind``, the ``where`` columns
    (one finding per value), ``label_of(key, row) -> (where, comparison)``, the ``unit`` the Holm family counts (e.g.
    "group pairs"), ``baseline_of(row)`` (True for a finding about the Wikipedia baseline alone), the ``family`` and
    ``pages_of(row)``: the pages of each side ((name, (pages, a page)) pairs) where the table has a ``page_id``."""

    kind: str
    where: Sequence[str]
    label_of: Callable
    unit: str
    baseline_of: Callable | None = None
    family: str = ""
    pages_of: Callable | None = None

    def finding(self, run: _LabelRun, r, key, *, testable: bool, untestable: list[str]) -> Finding:
        """One row of a share-test table as a finding (with no p when ``testable`` is False: no pair of its family can be tested)."""
        b = run.b
        clustered = r.get("method") in CLUSTERED_METHODS and r["ci_low"] == r["ci_low"] and abs(b.alpha - 0.05) < 1e-12
        ci = (float(r["ci_low"]), float(r["ci_high"])) if clustered else newcombe(r["count_a"], r["n_a"], r["count_b"], r["n_b"], b.alpha)
        place, comparison = self.label_of(key, r)
        est = float(r["diff"])
        p = float(r["p_holm"]) if testable and r["p_holm"] == r["p_holm"] else float("nan")
        k = int(r["family_size"]) if "family_size" in r.index else 1
        test = f", {r['test']}" if "test" in r.index and r["test"] == "fisher-exact" else ""
        flags = uncertainty_flags(est, ci, p, alpha=b.alpha) if testable else ["not testable: " + "; ".join(untestable)]
        return Finding(
            self.kind,
            run.metric_name,
            place,
            comparison,
            est + 0.0,
            ci,
            p,
            f"Holm, {k} {'test' if k == 1 else 'tests'}: {self.unit}{test}",
            f"{int(r['n_a'])} / {int(r['n_b'])}",
            flags,
            run.kind,
            cautions=small_n_cautions(r["n_a"], r["n_b"]),
            baseline=bool(self.baseline_of(r)) if self.baseline_of else False,
            family=self.family,
            family_size=k,
            domain=str(r["domain"]) if "domain" in r.index else "all",
            base_rate=float((r["count_a"] + r["count_b"]) / (r["n_a"] + r["n_b"])) if r["n_a"] + r["n_b"] else None,
            n_min=int(min(r["n_a"], r["n_b"])),
            n_sizes=(int(r["n_a"]), int(r["n_b"])),
            source_metric=run.source_metric,
            family_label=str(r["family"]) if "family" in r.index and r["family"] else "",
            untestable=untestable,
        )


def _pages(run: _LabelRun, keys: Sequence[str]):
    """(name, (pages, a page)) per value of ``keys`` of the section's table when it has page ids (else None)."""
    if "page_id" not in run.df.columns or not run.df["page_id"].notna().any():
        return None
    return pages_per_group(run.df[run.df[run.column].notna()], list(keys), "page_id")


def baseline_span(b, name: str) -> str | None:
    """The span the Wikipedia baseline rows of table ``name`` were scored on (:data:`biaskit.evaluate.baseline.SPANS`):
    the table's ``baseline_span`` column, else its manifest's ``config.baseline_span``; None when neither says."""
    df = b.loaded.get(name)
    if df is not None and "baseline_span" in df.columns:
        vals = set(df["baseline_span"].dropna())
        if len(vals) == 1:
            return str(vals.pop())
    cfg = (b.manifests.get(name) or {}).get("config")
    span = cfg.get("baseline_span") if isinstance(cfg, dict) else None
    return str(span) if span else None


def span_sentence(span: str | None) -> str:
    if span is None:
        return (
            "Caution: the table does not record which span of the Wikipedia sentence the baseline rows were scored on. If it is the "
            "whole sentence while the model was scored on its continuation only, the prompt's words are in one text and not the "
            "other, and model-vs-Wikipedia differences are not like for like (`biaskit demo --baseline-span` records it)."
        )
    return (
        f"Model and Wikipedia baseline are scored on the same span (`{span}`): {SPAN_WORDS.get(span, span)}. "
        "Every model-vs-Wikipedia difference is the model's share minus the baseline's."
    )


def _toxicity_backend(b, name: str) -> str | None:
    """``offline`` when the table's manifest says its toxicity scores came from the offline backend."""
    tox = metric_description(b.manifests.get(name), "toxicity")
    if isinstance(tox, dict):
        info, cfg = tox.get("info") or {}, tox.get("config") or {}
        return info.get("backend") or cfg.get("backend")
    return None


@dataclass
class _LabelRun:
    """One label section in the making: the builder, the table it reads, the names the page shows, the section."""

    b: Any
    name: str  # the table's name
    df: Any
    kind: str  # the section id (``profanity`` for the offline toxicity backend)
    column: str  # the label column
    title: str
    what: str  # the labels' noun ("sentiment")
    test_label: str  # the label whose share the tests compare
    shown_label: str  # how the page names it ("profane" for the offline toxicity backend)
    score: str | None  # the score column compared with Mann-Whitney U, when the table has it
    source_metric: str = ""  # the metric whose labels these are (its validation decides whether they can be evidence)
    sec: Section = field(init=False)

    @property
    def metric_name(self) -> str:
        return f"{self.title.split(' (')[0]}: share {self.shown_label}"


def _label_section(b, loaded, lo: LabelOutput) -> Section:
    """The section of the label output ``lo`` (its declared labels, score column, test label and names)."""
    kind, column, title, labels = lo.task or lo.key, lo.column, lo.display or lo.key, lo.labels
    what, test_label, score = lo.noun or lo.key, lo.test_label or lo.labels[0], lo.score
    name, df = find_table(loaded, [column], kind)
    check_vocabulary(df, column, labels, name)
    run = _LabelRun(b, name, df, kind, column, title, what, test_label, test_label, score, column.removesuffix("_label"))
    intro, labels = _as_profanity(run, labels)
    run.sec = _open_section(run, intro)
    if not (run.df[run.column] == run.test_label).any():
        return _no_hit(run)  # one sentence says it: no all-grey 100 % figures, no tables of n/a tests
    _no_signal_per_source(run)
    _shares(run, labels)
    if "group" in run.df.columns:
        _group_tests(run)
    else:
        b.skipped.append((f"{run.title}: tests between groups", f"table `{name}` has no `group` column"))
    return run.sec


#: the offline toxicity backend's labels as the profanity section shows them
PROFANITY_LABELS = {"toxic": "profane", "non-toxic": "non-profane"}


def _as_profanity(run: _LabelRun, labels) -> tuple[list[str], Any]:
    """Scores of the offline ``toxicity`` backend are profanity: rename the section so, show its labels as
    ``profane`` / ``non-profane`` and its ``toxicity_*`` columns as ``profanity_*`` (tables, figures and tests
    alike), and return the paragraph that says why with the labels in order (unchanged for every other output)."""
    if run.kind != "toxicity" or _toxicity_backend(run.b, run.name) != "offline":
        return [], labels
    # alt-profanity-check detects profanity / offensive words; it is not a toxicity classifier
    run.kind, run.title, run.what, run.shown_label = "profanity", "Profanity (alt-profanity-check)", "profanity", "profane"
    cols = {c: "profanity_" + c.removeprefix("toxicity_") for c in run.df.columns if c.startswith("toxicity_")}
    run.df = run.df.rename(columns=cols)
    run.column = cols.get(run.column, run.column)
    run.df[run.column] = run.df[run.column].map(lambda v: PROFANITY_LABELS.get(v, v), na_action="ignore")
    run.test_label = PROFANITY_LABELS.get(run.test_label, run.test_label)
    run.score = cols.get(run.score, run.score) if run.score else run.score
    intro = [
        "These scores come from the offline backend of the `toxicity` metric, alt-profanity-check: a linear SVM on TF-IDF "
        "features that detects profanity and offensive words. It is not a toxicity classifier, so this section reports "
        "profanity: a text is `profane` when its profanity probability (`profanity_score`) reached the threshold, else "
        "`non-profane`. To measure toxicity, score with a transformer classifier (`-p toxicity.model=...`)."
    ]
    return intro, [PROFANITY_LABELS.get(x, x) for x in labels]


def _open_section(run: _LabelRun, intro: list[str]) -> Section:
    return Section(
        run.kind,
        run.title,
        intro
        + [
            f"From table `{run.name}` ({len(run.df)} rows). Shares are over texts with a {run.what} label; "
            f"`n_null` counts texts without one (failed or empty), `n_error` those with a `{run.column.split('_')[0]}_error`. "
            "CIs: 95 % Wilson score intervals (a zero count still gets a real upper bound)."
        ],
    )


def _no_signal(run: _LabelRun, where: str, n_lab: int, *, baseline: bool = False) -> Finding:
    return Finding(
        "No signal",
        run.metric_name,
        where,
        "",
        None,
        n=f"{n_lab} texts",
        anchor=run.kind,
        text=f"no text labelled {run.shown_label} (0 of {n_lab})",
        baseline=baseline,
    )


def _no_hit(run: _LabelRun) -> Section:
    """No text of the table has the tested label: the section is one sentence and a "No signal" headline."""
    n_lab = int(run.df[run.column].notna().sum())
    run.sec.text.append(
        f"No text has the label `{run.test_label}` ({n_lab} labelled texts): there is no {run.what} gap between groups to report"
        + (", and this is not evidence that the texts are free of toxicity." if run.kind == "profanity" else ".")
    )
    run.sec.headline.append(_no_signal(run, "all domains", n_lab))
    return run.sec


def _no_signal_per_source(run: _LabelRun) -> None:
    """A "No signal" headline for each text source (model or Wikipedia baseline) none of whose texts has the label."""
    if "model" not in run.df.columns:
        return
    for m, sub in sorted(run.df.groupby("model"), key=lambda kv: str(kv[0])):
        n_lab = int(sub[run.column].notna().sum())
        if n_lab and not (sub[run.column] == run.test_label).any():
            where = f"all domains ({'Wikipedia baseline' if m == 'wikipedia' else m})"
            run.sec.headline.append(_no_signal(run, where, n_lab, baseline=m == "wikipedia"))


def _shares(run: _LabelRun, labels) -> None:
    """The table of label shares per domain, group and source, and a stacked-bar figure per domain."""
    b, title = run.b, run.title
    keys = [c for c in ("domain", "group", "model") if c in run.df.columns]
    wide = label_proportions(run.df, run.column, keys, label_order=labels, boot=BootSpec(n_boot=b.n_boot, seed=b.seed))
    b.table(run.sec, f"{run.kind}_proportions", wide, f"{title}: shares per {', '.join(keys) or 'table'}")
    labs = [c.removeprefix("prop_") for c in wide.columns if c.startswith("prop_")]
    bar_keys = [k for k in ("group", "model") if k in keys] or keys
    for dom, sub in by_domain(wide):
        if not len(sub):
            continue
        b.figure(
            run.sec,
            f"{run.kind}_{slug(dom)}",
            _plot_stacked,
            sub,
            bar_keys,
            labs,
            title=f"{title} by group and source ({dom})" if dom != "all" else f"{title} by group and source",
            caption=f"{title}, domain {dom}: share of each label per group and text source (n = texts with a label).",
        )


def _group_tests(run: _LabelRun) -> None:
    """Tests between groups (per domain and source): z-tests of the tested label's share with the largest gaps as
    headline, chi-square of the whole label distribution, then the sources against each other, then the score."""
    df = run.df
    within = [c for c in ("domain", "model") if c in df.columns]
    _group_ztests(run, within)
    c = chi2_by(df, "group", run.column, within=within)
    run.b.table(
        run.sec,
        f"{run.kind}_chi2_groups",
        c,
        f"Exploratory (in no headline family): chi-square test of homogeneity of the label distribution across groups (per "
        f"{', '.join(within) or 'table'}); Cramér's V.",
    )
    if "model" in df.columns and df["model"].nunique() > 1:
        _source_tests(run)
    if run.score and run.score in df.columns:
        _score_mann_whitney(run, within)


def _group_ztests(run: _LabelRun, within: list[str]) -> None:
    """Two-proportion z-tests of the tested label's share between every pair of groups, and the largest gap per
    domain and source as a headline finding (labelled as the Wikipedia baseline's where it is)."""
    df, sec = run.df, run.sec
    # the family of `biaskit stats family --kind group-gap`; texts of one page (page_id) or template are alike, so the
    # interval, z and p are cluster-robust (CR1) when the table has such a column
    z = proportion_family_tests(df, "group_gap", run.column, run.test_label)
    if not len(z):
        return
    cl = z["cluster"].dropna() if "cluster" in z.columns else z.iloc[0:0, 0]
    how = (
        f"interval, z and p cluster-robust (CR1, clusters = `{cl.iloc[0]}`)"
        if len(cl)
        else "interval: Newcombe (texts treated as independent: the table has no page_id or template column)"
    )
    run.b.table(
        sec,
        f"{run.kind}_{slug(run.shown_label)}_ztests",
        z,
        f"Two-proportion z-tests of the {run.shown_label} share between every pair of groups within {', '.join(within) or 'the table'}: "
        f"`diff` = share of group_a minus share of group_b; Holm and Benjamini-Hochberg adjusted p per family "
        f"(`family_size` tests, the group-gap family named in `family`: every pair of groups of one domain and source); Cohen's h "
        f"as effect size; `caution`: a group under {MIN_GROUP_N} texts; `ci_low`/`ci_high`: 95% {how}.",
        max_rows=25,
    )

    sec.headline += _group_gap_findings(run, z, within)


def _group_gap_findings(run: _LabelRun, z, within: list[str]) -> list[Finding]:
    """The headline findings of a group-gap test table (the most decisive pair per domain and source)."""

    def lab(key, r):
        kv = dict(zip(["domain"] if "domain" in within else [], key))
        if "model" in r.index and r["model"] == "wikipedia":
            return (kv.get("domain", "all") + " (Wikipedia baseline)", f"{r['group_a']} minus {r['group_b']}")
        src = f" ({r['model']})" if "model" in r.index else ""
        return (kv.get("domain", "all") + src, f"{r['group_a']} minus {r['group_b']}")

    spec = _FindingSpec(
        "Largest group gap",
        ("domain", "model"),
        lab,
        "this domain's group pairs",
        baseline_of=lambda r: "model" in r.index and r["model"] == "wikipedia",
        family="group_gap",
        pages_of=_pages_of_pair(run, within),
    )
    found = _gap_findings(run, z, spec)
    for f in found:
        if f.baseline:
            f.kind = "Wikipedia baseline: largest group gap"
    return found


def group_gap_findings(df, column: str, label: str, *, alpha: float = 0.05, source_metric: str | None = None) -> list[Finding]:
    """The group-gap headline findings a label section makes of the scored table ``df`` (the share of ``label`` in
    ``column``; ``group``, and ``domain``, ``model`` and ``page_id`` where it has them), through the same code: the
    family tests of :func:`~biaskit.evaluate.stats.families.proportion_family_tests` and the most decisive testable pair
    per domain and source. Their verdicts come from :func:`biaskit.evaluate.report.headline.verdicts`, after
    :func:`~biaskit.evaluate.report.metric_validity.mark_invalid` where the validation of ``source_metric`` (default:
    ``column`` without ``_label``, as the sections) is known (``bench/calibration.py`` runs the report's verdicts so)."""
    metric = column.removesuffix("_label") if source_metric is None else source_metric
    run = _LabelRun(SimpleNamespace(alpha=alpha), "table", df, "labels", column, column, column, label, label, None, metric)
    z = proportion_family_tests(df, "group_gap", column, label)
    return _group_gap_findings(run, z, [c for c in ("domain", "model") if c in df.columns]) if len(z) else []


def _pages_of_pair(run: _LabelRun, within: list[str]):
    """``pages_of(row)`` of a group-gap row: the pages of group_a and of group_b within the row's domain and source."""
    pages = _pages(run, [*within, "group"])
    if pages is None:
        return None
    return lambda r: [(g, pages.get((*(r[c] for c in within), g))) for g in (r["group_a"], r["group_b"])]


def _pages_of_group(run: _LabelRun):
    """``pages_of(row)`` of a model-vs-Wikipedia row: the pages of the row's group (the model's prompts and the
    baseline's sentences come from the same pages)."""
    keys = [c for c in ("domain",) if c in run.df.columns]
    pages = _pages(run, [*keys, "group"])
    if pages is None:
        return None
    return lambda r: [(str(r["group"]), pages.get((*(r[c] for c in keys), r["group"])))]


def _source_tests(run: _LabelRun) -> None:
    """Chi-square across text sources, and (when the table has the Wikipedia baseline) each model against it."""
    df = run.df
    c2 = chi2_by(df, "model", run.column, within=[c for c in ("domain",) if c in df.columns])
    run.b.table(
        run.sec,
        f"{run.kind}_chi2_sources",
        c2,
        "Exploratory (in no headline family): chi-square test of homogeneity across text sources (Wikipedia baseline and models).",
    )
    models = sorted(set(df["model"].dropna()))
    if "wikipedia" in models:
        _vs_wikipedia(run, models)


def _vs_wikipedia(run: _LabelRun, models: list) -> None:
    """Each model against the Wikipedia baseline per group (z-tests, Holm over the domain's groups and models) with
    the span sentence, and the largest difference per domain and model as a headline finding."""
    df, sec = run.df, run.sec
    span = baseline_span(run.b, run.name)
    sec.text.append(span_sentence(span))
    # every group x model of the domain is one family: `biaskit stats family --kind model-vs-wikipedia` prints the same
    wz = proportion_family_tests(df, "model_vs_wikipedia", run.column, run.test_label)
    run.b.table(
        sec,
        f"{run.kind}_{slug(run.shown_label)}_vs_wikipedia",
        wz,
        f"Each model against the Wikipedia baseline: z-test of the {run.shown_label} share per group; `group_a` = the model, "
        f"`group_b` = the baseline, `diff` = the model's share minus the baseline's (the headline's direction); Holm / "
        f"Benjamini-Hochberg over every group and model of the domain (`family_size` tests).",
        max_rows=25,
    )
    if not len(wz):
        return

    def lab_w(key, r):
        dom = key[0] if "domain" in wz.columns else "all"
        return (f"{dom} ({r['group']})" if "group" in r.index else dom, f"{r['group_a']} minus wikipedia")

    spec = _FindingSpec(
        "Model vs Wikipedia",
        ("domain", "group_a"),
        lab_w,
        "this domain's groups x models",
        family="model_vs_wikipedia",
        pages_of=_pages_of_group(run),
    )
    found = _gap_findings(run, wz, spec)
    for f in found:
        if span is None:
            f.cautions.append("span of the Wikipedia baseline not recorded: may not be like for like")
        else:
            f.comparison += f" (same span: {span})"
    sec.headline += found


def _score_mann_whitney(run: _LabelRun, within: list[str]) -> None:
    mw = with_bh(run.df, pairwise_mann_whitney, run.df, "group", run.score, within=within)
    if len(mw):
        run.b.table(
            run.sec,
            f"{run.kind}_{run.score}_mannwhitney",
            mw,
            f"Exploratory (in no headline family; Holm / BH only within this table's families): Mann-Whitney U of `{run.score}` "
            "between pairs of groups; rank-biserial correlation as effect size.",
            max_rows=25,
        )


def check_vocabulary(df, column: str, labels, table: str) -> None:
    """Refuse a label column holding values outside the metric's labels (``POSITIVE``, ``1``, ...).

    Such values would count as "no known label" and show as 0% for every group: error E151 instead, naming
    the table, the column, the unknown values and the valid ones. Nulls are fine (failed rows, counted as n_null).
    """
    check_values(
        df[column].dropna().tolist(),
        labels,
        what=f"table `{table}`",
        column=column,
        fix="map them to the metric's labels (lower case strings) or rescore with biaskit score; the report does not guess what they mean",
    )


def _plot_stacked(sub, keys, labs, path, title):
    return stacked_proportions(sub, keys, labs, path, title=title)


def _regard_extra(b, sec: Section, loaded) -> None:
    name, df = find_table(loaded, ["regard_label", "group"], "regard")
    diffs = group_pair_table(df, lambda sub, a, bb: regard_difference(sub, GroupPair(a, bb), within=("model",)), max_groups=4)
    if diffs is not None:
        b.table(
            sec,
            "regard_differences",
            diffs,
            "Regard difference: share of each regard label in group A minus group B (per source), for domains with 2-4 groups.",
        )


def _section_of(lo):
    """The report section of a metric's declared label output (labels, score column, test label, names)."""

    def section(b, loaded):
        return _label_section(b, loaded, lo)

    return section


def _with_extra(fn, extra):
    def section(b, loaded):
        sec = fn(b, loaded)
        try:
            extra(b, sec, loaded)
        except SkipAnalysis:
            pass
        return sec

    return section


#: what a label section adds for one metric, beyond the shares and tests every label metric gets
EXTRAS = {"regard": _regard_extra}

# one section per label output whose metric asks for one (report_label), in registration order
for _lo in label_outputs().values():
    if _lo.report_label:
        _fn = _section_of(_lo)
        register_section(_lo.report_label, _with_extra(_fn, EXTRAS[_lo.key]) if _lo.key in EXTRAS else _fn)
