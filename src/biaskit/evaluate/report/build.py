"""Build the statistical report of a run folder: tables (Markdown + CSV), plots (PNG) and one
self-contained HTML page (images embedded, table of contents, run manifest) that opens offline.

Works on whatever tables the run has: each analysis looks for a table with the columns it needs
(``docs/CONTRACTS.md``) and, when none has them, the report says which figure could not be made and why.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.report.genbias_section import genbias_section

#: table names the analyses look at first (then every other table of the run)
PREFERENCE = {
    "sentiment": ("scores",), "toxicity": ("scores",), "profanity": ("scores",), "regard": ("scores",), "gender": ("scores",), "norms": ("scores",),
    "likelihood": ("likelihoods", "generations", "scores"), "honest": ("fillins", "fillin_scores", "scores"),
    "agreement": ("agreement",),
}
NOT_TABLES = ("report_html", "hub_dir", "report_dir")


@dataclass
class Figure:
    path: Path
    caption: str


@dataclass
class TableOut:
    name: str
    df: Any
    caption: str
    max_rows: int = 40
    show: list[str] | None = None   # columns shown on the page (None: :func:`tables.compact` picks); the CSV has all


@dataclass
class Finding:
    """One line of the headline block at the top of the report.

    ``kind``: what was compared ("Largest group gap", "Model vs Wikipedia", "Likelihood Bias", ...);
    ``metric``: the measure ("Sentiment: share positive"); ``where``: domain / axis / source;
    ``comparison``: e.g. "men vs women"; ``estimate`` with its interval ``ci`` (None when there is none);
    ``p``: the multiple-comparison-corrected p-value (``p_label`` says which correction); ``n``: the sample
    sizes as text; ``flags``: why the finding is too weak to conclude from (empty = none). ``anchor``: the
    section id the details are in."""

    kind: str
    metric: str
    where: str
    comparison: str
    estimate: float | None
    ci: tuple[float, float] | None = None
    p: float | None = None
    p_label: str = ""
    n: str = ""
    flags: list[str] = field(default_factory=list)
    anchor: str = ""
    text: str = ""                  # a finding stated in words instead of a number (e.g. "no text flagged")


@dataclass
class Section:
    """One report section. Analyses return one; ``headline`` findings are shown (in section order) in the
    headline block at the top of the page, with a link to this section."""

    id: str
    title: str
    text: list[str] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    tables: list[TableOut] = field(default_factory=list)
    headline: list[Finding] = field(default_factory=list)


@dataclass
class ReportResult:
    out: Path
    html: Path
    md: Path
    figures: list[Path]
    tables: dict[str, Path]
    sections: list[str]
    skipped: list[tuple[str, str]]   # (figure or analysis, why it was not made)
    headline: list[Finding] = field(default_factory=list)
    figure_objects: dict[str, Any] = field(default_factory=dict)  # name -> matplotlib Figure (keep_figures=True)


#: smallest group size the headline treats as enough to compare groups
MIN_GROUP_N = 30


class _Skip(Exception):
    pass


#: raise this from an analysis (with the reason) when the run has no table it can use: the report lists it
#: under "Not made"
SkipAnalysis = _Skip


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(s).lower()).strip("_")[:60] or "x"


def discover_tables(run_dir: str | Path) -> dict[str, Path]:
    """Tables of a run folder: the ``tables`` map of its ``manifest.json`` when there is one, else every
    ``*.parquet`` / ``*.jsonl`` / ``*.csv`` file directly in the folder (name = file stem)."""
    from biaskit.io import SUFFIXES

    rd = Path(run_dir)
    if rd.is_file() and rd.suffix in SUFFIXES:
        return {rd.stem: rd}          # a single table file is a run of one table
    if not rd.is_dir():
        raise BiaskitError("E081", "run folder not found", value=str(rd),
                           fix="pass the folder `biaskit demo --out` (or a stage) wrote, or one table file (.parquet/.jsonl/.csv)")
    found: dict[str, Path] = {}
    man = rd / "manifest.json"
    if man.is_file():
        try:
            m = json.loads(man.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise BiaskitError("E081", f"run manifest is not valid JSON: {exc}", value=str(man), fix="rerun the run or delete manifest.json") from exc
        for name, rel in (m.get("tables") or {}).items():
            p = Path(rel)
            found[name] = p if p.is_absolute() else rd / p
    for p in sorted(rd.iterdir()):
        if p.is_file() and p.suffix in SUFFIXES and not p.name.endswith(".manifest.json") and p.stem not in found:
            if p.resolve() not in {q.resolve() for q in found.values() if q.exists()}:
                found[p.stem] = p
    return found


def _load(tables: dict[str, Path], manifests: dict[str, dict] | None = None) -> tuple[dict[str, Any], list[tuple[str, str, Any, Any]]]:
    """Read every table as pandas; returns (name -> df, overview rows (name, file, rows, note)); fills
    ``manifests`` (name -> the table's manifest) when given."""
    from biaskit.io import read_manifest, read_table, table_format

    loaded, overview = {}, []
    for name, path in tables.items():
        if name in NOT_TABLES:
            continue
        p = Path(path)
        try:
            table_format(p)
            if p.is_dir() and not (p / "dataset_info.json").exists() and not (p / "state.json").exists():
                continue
            t = read_table(p)
        except BiaskitError as exc:
            overview.append((name, str(p), None, f"not read: {exc.what}"))
            continue
        df = t.to_pandas()
        loaded[name] = df
        if manifests is not None:
            try:
                manifests[name] = read_manifest(p) or {}
            except Exception:  # a table without a readable manifest is still reported
                manifests[name] = {}
        overview.append((name, str(p), len(df), f"{len(df.columns)} columns"))
    return loaded, overview


def _find(loaded: dict[str, Any], cols: list[str], kind: str, any_of: list[str] | None = None):
    order = [n for n in PREFERENCE.get(kind, ()) if n in loaded] + [n for n in loaded if n not in PREFERENCE.get(kind, ())]
    empty = []
    for n in order:
        df = loaded[n]
        if all(c in df.columns for c in cols) and (not any_of or any(c in df.columns for c in any_of)):
            data_cols = [c for c in (any_of or []) if c in df.columns] or cols[:1]
            if not data_cols or any(df[c].notna().any() for c in data_cols):
                return n, df
            empty.append(f"`{n}` has {'/'.join(data_cols)} but every one of its {len(df)} rows is null")
    if empty:
        raise _Skip("; ".join(empty) + " (see the metric's *_error column or the score stage's note)")
    need = ", ".join(cols + ([" or ".join(any_of)] if any_of else []))
    have = "; ".join(f"{n}: {len(df)} rows" for n, df in loaded.items()) or "no tables"
    raise _Skip(f"no table has column(s) {need} ({have})")


class _Builder:
    """What an analysis gets: ``table``/``figure`` write files and add them to a section; ``manifests``
    (table name -> manifest), ``seed``, ``n_boot``, ``alpha``."""

    def __init__(self, out: Path, seed: int, n_boot: int, alpha: float, keep_figures: bool = False):
        self.out = out
        self.manifests: dict[str, dict] = {}
        self.keep_figures = keep_figures
        self.figure_objects: dict[str, Any] = {}
        self.fig_dir = out / "figures"
        self.tab_dir = out / "tables"
        self.seed, self.n_boot, self.alpha = seed, n_boot, alpha
        self.figures: list[Path] = []
        self.tables: dict[str, Path] = {}
        self.skipped: list[tuple[str, str]] = []
        self._used: dict[str, set[str]] = {"figure": set(), "table": set()}

    def _unique(self, what: str, name: str) -> str:
        """``name``, or ``name_2``, ``name_3``... when an earlier figure/table of this report took it: names
        come from data (domains "A b" and "a-b" both slug to ``a_b``) and must not overwrite each other."""
        used = self._used[what]
        cand, k = name, 2
        while cand in used:
            cand, k = f"{name}_{k}", k + 1
        used.add(cand)
        return cand

    def table(self, sec: Section, name: str, df, caption: str, max_rows: int = 40, show: list[str] | None = None) -> None:
        from biaskit.evaluate.report.tables import write_table_files

        name = self._unique("table", name)
        paths = write_table_files(df, self.tab_dir, name)
        self.tables[name] = paths["csv"]
        sec.tables.append(TableOut(name, df, caption, max_rows, show))

    def figure(self, sec: Section, name: str, fn, *args, caption: str, **kw) -> None:
        """Draw with a :mod:`plots` function (called with ``path=None``, so it returns the Figure) and save it."""
        from biaskit.evaluate.report.plots import save_figure

        self.fig_dir.mkdir(parents=True, exist_ok=True)
        fig = fn(*args, None, **kw)
        uniq = self._unique('figure', name)
        p = save_figure(fig, self.fig_dir / f"{uniq}.png")
        if self.keep_figures:
            self.figure_objects[uniq] = fig
        self.figures.append(p)
        sec.figures.append(Figure(p, caption))


def _with_bh(df, fn, *args, **kw):
    """Run a pairwise test family with Holm and add the Benjamini-Hochberg adjusted p as ``p_bh``."""
    from biaskit.evaluate.stats import correct_pvalues

    holm = fn(*args, correction="holm", **kw)
    holm = holm.rename(columns={"p_adjusted": "p_holm", "significant": "significant_holm"})
    within = [c for c in kw.get("within", []) if c in holm.columns]
    holm["p_bh"] = float("nan")
    fams = [g.index for _, g in holm.groupby(within, sort=False, dropna=False)] if within else [holm.index]
    for idx in fams:
        holm.loc[idx, "p_bh"] = correct_pvalues(list(holm.loc[idx, "p_value"]), "bh")
    return holm


def _domains(df):
    if "domain" in df.columns:
        vals = df["domain"].astype(object).where(df["domain"].notna(), "(null)")
        return [(str(d), df[vals == d]) for d in sorted(set(vals), key=str)]
    return [("all", df)]


# ----------------------------------------------------------------------------------------------- sections


def _newcombe(count_a, n_a, count_b, n_b, alpha: float) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval for p_a - p_b (Wilson intervals of each share combined), level 1 - alpha."""
    if not (n_a and n_b):
        return None
    from statsmodels.stats.proportion import confint_proportions_2indep

    lo, hi = confint_proportions_2indep(int(count_a), int(n_a), int(count_b), int(n_b), method="newcomb", compare="diff", alpha=alpha)
    return float(lo), float(hi)


def small_sample_flags(n_a, n_b, estimate, ci, p=None, *, min_n: int = MIN_GROUP_N) -> list[str]:
    """Why a two-group comparison cannot carry a conclusion: a group smaller than ``min_n``, an interval
    wider than the gap itself, or a test that could not be computed."""
    flags = []
    if min(int(n_a), int(n_b)) < min_n:
        flags.append(f"n < {min_n} per group")
    if ci is not None and estimate is not None and estimate == estimate and (ci[1] - ci[0]) > abs(estimate):
        flags.append("CI wider than the gap")
    if p is not None and p != p:
        flags.append("test undefined (no variation)")
    return flags


def _gap_findings(b: _Builder, z, *, kind: str, metric: str, anchor: str, where_cols: list[str], label_of) -> list[Finding]:
    """The row with the largest |diff| per ``where_cols`` value of a two-proportion z-test table, as findings."""
    out = []
    z = z[z["diff"].notna()]
    if not len(z):
        return out
    fams = z.groupby(where_cols, sort=True, dropna=False) if where_cols else [((), z)]
    for key, g in fams:
        r = g.loc[g["diff"].abs().idxmax()]
        ci = _newcombe(r["count_a"], r["n_a"], r["count_b"], r["n_b"], b.alpha)
        where, comparison, sign = label_of(key if isinstance(key, tuple) else (key,), r)
        est = sign * float(r["diff"])
        if ci is not None and sign < 0:
            ci = (-ci[1], -ci[0])
        p = float(r["p_holm"]) if r["p_holm"] == r["p_holm"] else float("nan")
        n_txt = f"{int(r['n_a'])} / {int(r['n_b'])}" if sign > 0 else f"{int(r['n_b'])} / {int(r['n_a'])}"
        out.append(Finding(kind, metric, where, comparison, est + 0.0, ci, p, "Holm", n_txt,
                           small_sample_flags(r["n_a"], r["n_b"], est, ci, p), anchor))
    return out


def _toxicity_backend(b: _Builder, name: str) -> str | None:
    """``offline`` when the table's manifest says its toxicity scores came from the offline backend."""
    from biaskit.manifest import metric_description

    tox = metric_description(b.manifests.get(name), "toxicity")
    if isinstance(tox, dict):
        info, cfg = tox.get("info") or {}, tox.get("config") or {}
        return info.get("backend") or cfg.get("backend")
    return None


def _label_section(b: _Builder, loaded, *, kind: str, column: str, title: str, labels, what: str, test_label: str) -> Section:
    from biaskit.evaluate.stats import chi2_by, label_proportions, pairwise_mann_whitney, pairwise_proportion_tests

    name, df = _find(loaded, [column], kind)
    check_vocabulary(df, column, labels, name)
    shown_label = test_label
    intro = []
    if kind == "toxicity" and _toxicity_backend(b, name) == "offline":
        # alt-profanity-check detects profanity / offensive words; it is not a toxicity classifier
        kind, title, what, shown_label = "profanity", "Profanity (alt-profanity-check)", "profanity", "profane"
        intro.append("These scores come from the offline `toxicity` backend, alt-profanity-check: a linear SVM on TF-IDF features that "
                     "detects profanity and offensive words. It is not a toxicity classifier, so this section reports profanity: a text "
                     "labelled `toxic` in `toxicity_label` is one whose profanity probability reached the threshold. For toxicity, score "
                     "with a transformer classifier (`-p toxicity.model=...`, e.g. unitary/toxic-bert).")
    sec = Section(kind, title, intro + [f"From table `{name}` ({len(df)} rows). Shares are over texts with a {what} label; "
                                        f"`n_null` counts texts without one (failed or empty), `n_error` those with a `{column.split('_')[0]}_error`. "
                                        "CIs: 95 % Wilson score intervals (a zero count still gets a real upper bound)."])
    metric_name = f"{title.split(' (')[0]}: share {shown_label}"
    n_hit = int((df[column] == test_label).sum())
    if n_hit == 0:
        n_lab = int(df[column].notna().sum())
        sec.text.append(f"No text has the label `{test_label}` ({n_lab} labelled texts): there is no {what} gap between groups to report"
                        + (", and this is not evidence that the texts are free of toxicity." if kind == "profanity" else "."))
        sec.headline.append(Finding("No signal", metric_name, "all domains", "", None, n=f"{n_lab} texts", anchor=kind,
                                    text=f"no text labelled {shown_label} (0 of {n_lab})"))
    keys = [c for c in ("domain", "group", "model") if c in df.columns]
    wide = label_proportions(df, column, keys, label_order=labels, n_boot=b.n_boot, seed=b.seed)
    b.table(sec, f"{kind}_proportions", wide, f"{title}: shares per {', '.join(keys) or 'table'}")
    labs = [c.removeprefix("prop_") for c in wide.columns if c.startswith("prop_")]
    bar_keys = [k for k in ("group", "model") if k in keys] or keys
    for dom, sub in _domains(wide):
        if not len(sub):
            continue
        b.figure(sec, f"{kind}_{_slug(dom)}", _plot_stacked, sub, bar_keys, labs,
                 title=f"{title} by group and source ({dom})" if dom != "all" else f"{title} by group and source",
                 caption=f"{title}, domain {dom}: share of each label per group and text source (n = texts with a label).")
    if "group" in df.columns:
        within = [c for c in ("domain", "model") if c in df.columns]
        z = _with_bh(df, pairwise_proportion_tests, df, "group", column, test_label, within=within)
        if len(z):
            b.table(sec, f"{kind}_{_slug(shown_label)}_ztests", z,
                    f"Two-proportion z-tests of the {shown_label} share between every pair of groups within {', '.join(within) or 'the table'}; "
                    f"Holm and Benjamini-Hochberg adjusted p per family; Cohen's h as effect size.", max_rows=25)
            if n_hit:
                def lab(key, r, within=within):
                    kv = dict(zip(["domain"] if "domain" in within else [], key))
                    src = f" ({r['model']})" if "model" in r.index else ""
                    return (kv.get("domain", "all") + src, f"{r['group_a']} minus {r['group_b']}", 1)
                sec.headline += _gap_findings(b, z, kind="Largest group gap", metric=metric_name, anchor=kind,
                                              where_cols=[c for c in ("domain",) if c in z.columns], label_of=lab)
        c = chi2_by(df, "group", column, within=within)
        b.table(sec, f"{kind}_chi2_groups", c, f"Chi-square test of homogeneity of the label distribution across groups (per {', '.join(within) or 'table'}); Cramér's V.")
        if "model" in df.columns and df["model"].nunique() > 1:
            w2 = [c for c in ("domain",) if c in df.columns]
            c2 = chi2_by(df, "model", column, within=w2)
            b.table(sec, f"{kind}_chi2_sources", c2, "Chi-square test of homogeneity across text sources (Wikipedia baseline and models).")
            models = sorted(set(df["model"].dropna()))
            if "wikipedia" in models:
                pairs = [("wikipedia", m) for m in models if m != "wikipedia"]
                wz = _with_bh(df, pairwise_proportion_tests, df, "model", column, test_label,
                              within=[c for c in ("domain", "group") if c in df.columns], pairs=pairs)
                b.table(sec, f"{kind}_{_slug(shown_label)}_vs_wikipedia", wz,
                        f"Each model against the Wikipedia baseline: z-test of the {shown_label} share per group "
                        "(Holm / Benjamini-Hochberg per group).", max_rows=25)
                if n_hit and len(wz):
                    def lab_w(key, r):
                        dom = key[0] if "domain" in wz.columns else "all"
                        return (f"{dom} ({r['group']})" if "group" in r.index else dom, f"{r['group_b']} minus wikipedia", -1)
                    sec.headline += _gap_findings(b, wz, kind="Model vs Wikipedia", metric=metric_name, anchor=kind,
                                                  where_cols=[c for c in ("domain", "group_b") if c in wz.columns], label_of=lab_w)
        score_col = {"vader_label": "vader_compound", "toxicity_label": "toxicity_score"}.get(column)
        if score_col and score_col in df.columns:
            mw = _with_bh(df, pairwise_mann_whitney, df, "group", score_col, within=within)
            if len(mw):
                b.table(sec, f"{kind}_{score_col}_mannwhitney", mw,
                        f"Mann-Whitney U of `{score_col}` between pairs of groups; rank-biserial correlation as effect size.", max_rows=25)
    else:
        b.skipped.append((f"{title}: tests between groups", f"table `{name}` has no `group` column"))
    return sec


def check_vocabulary(df, column: str, labels, table: str) -> None:
    """Refuse a label column holding values outside the metric's labels (``POSITIVE``, ``1``, ...).

    Such values would count as "no known label" and show as 0% for every group: error E151 instead, naming
    the table, the column, the unknown values and the valid ones. Nulls are fine (failed rows, counted as n_null).
    """
    vals = df[column].dropna()
    bad = sorted({repr(v) for v in vals if not isinstance(v, str) or v not in labels})
    if bad:
        n = int(sum(1 for v in vals if not isinstance(v, str) or v not in labels))
        raise BiaskitError("E151", f"table `{table}`: {n} of {len(vals)} value(s) of {column!r} are not labels of the metric",
                           value=", ".join(bad[:8]) + (f", ... ({len(bad) - 8} more)" if len(bad) > 8 else ""), options=list(labels),
                           fix=f"map them to the metric's labels (lower case strings) or rescore with biaskit score; "
                               f"the report does not guess what {bad[0]} means")


def _plot_stacked(sub, keys, labs, path, title):
    from biaskit.evaluate.report.plots import stacked_proportions

    return stacked_proportions(sub, keys, labs, path, title=title)


def _regard_extra(b: _Builder, sec: Section, loaded) -> None:
    from biaskit.evaluate.stats import regard_difference

    name, df = _find(loaded, ["regard_label", "group"], "regard")
    rows = []
    for dom, sub in _domains(df):
        groups = sorted(set(sub["group"].dropna()))
        if not 2 <= len(groups) <= 4:
            continue
        for i, a in enumerate(groups):
            for bb in groups[i + 1:]:
                d = regard_difference(sub, "group", a, bb, within=("model",))
                d.insert(0, "domain", dom)
                rows.append(d)
    if rows:
        import pandas as pd

        b.table(sec, "regard_differences", pd.concat(rows, ignore_index=True),
                "Regard difference: share of each regard label in group A minus group B (per source), for domains with 2-4 groups.")


def _gender_section(b: _Builder, loaded) -> Section:
    from biaskit.evaluate.stats import gender_polarity_table, male_minus_female
    from biaskit.evaluate.stats.bold import GENDER_METHODS

    name, df = _find(loaded, [], "gender", any_of=list(GENDER_METHODS.values()))
    for col in GENDER_METHODS.values():
        if col in df.columns:
            check_vocabulary(df, col, ("male", "female", "neutral"), name)
    sec = Section("gender", "Gender polarity", [f"From table `{name}` ({len(df)} rows). Male / female counts and the male/female ratio "
                                                "for unigram matching, Gender-Wavg and Gender-Max (BOLD Table 3 layout); `*_null` counts texts with no label."])
    b.table(sec, "gender_polarity_by_source", gender_polarity_table(df, by=("model",)), "Gender polarity per text source (BOLD Table 3 layout).")
    if "group" in df.columns:
        b.table(sec, "gender_polarity_by_group", gender_polarity_table(df, by=("domain", "group", "model")), "Gender polarity per group and source.")
        prof = df
        if "domain" in df.columns and (df["domain"] == "profession").any():
            prof = df[df["domain"] == "profession"]
        method = next((m for m in ("wavg", "max", "unigram") if GENDER_METHODS[m] in df.columns), None)
        mmf = male_minus_female(prof, by="group", method=method)
        b.table(sec, "male_minus_female", mmf, f"Male-minus-female share per profession group ({method}); BOLD Fig. 2.")
        from biaskit.evaluate.report.plots import diverging_bars

        hue = "model" if "model" in mmf.columns and mmf["model"].nunique() > 1 else None
        b.figure(sec, "male_minus_female", diverging_bars, mmf, "group", "male_minus_female",
                 title=f"Male minus female share per profession (gender_{method}_label)", hue=hue,
                 xlabel="share labelled male - share labelled female",
                 caption="Male-minus-female share per profession group and source (positive: more texts labelled male).")
    else:
        b.skipped.append(("male-minus-female bars per profession", f"table `{name}` has no `group` column"))
    return sec


def _norms_section(b: _Builder, loaded) -> Section:
    import pandas as pd

    from biaskit.evaluate.stats import aggregate, class_proportion_differences

    order = [n for n in PREFERENCE["norms"] if n in loaded] + [n for n in loaded if n not in PREFERENCE["norms"]]
    name = next((n for n in order if any(c.startswith("norms_") and c.endswith("_class") for c in loaded[n].columns)), None)
    if name is None:
        have = "; ".join(f"{n}: {len(d)} rows" for n, d in loaded.items()) or "no tables"
        raise _Skip(f"no table has norms_<dim>_class columns ({have}); score with the norms metric and a lexicon")
    df = loaded[name]
    cols = sorted(c for c in df.columns if c.startswith("norms_") and c.endswith("_class"))
    sec = Section("norms", "Emotion and VAD classes", [f"From table `{name}`: classes {', '.join(cols)}."])
    keys = [c for c in ("domain", "group", "model") if c in df.columns]
    agg = aggregate(df, keys, labels=cols, n_boot=b.n_boot, seed=b.seed)
    b.table(sec, "norms_class_proportions", agg, "Class shares per group and source (long form).", max_rows=30)
    diffs = []
    if "group" in df.columns:
        for dom, sub in _domains(df):
            groups = sorted(set(sub["group"].dropna()))
            if len(groups) == 2:
                d = class_proportion_differences(sub, "group", groups[0], groups[1], columns=cols, within=[c for c in ("model",) if c in sub.columns])
                d.insert(0, "domain", dom)
                diffs.append(d)
    if diffs:
        b.table(sec, "norms_class_differences", pd.concat(diffs, ignore_index=True),
                "Class share of group A minus group B with z-test and Holm-adjusted p (BOLD Tables 4/6), domains with two groups.")
    else:
        b.skipped.append(("VAD/BE5 class differences", "no domain with exactly two groups"))
    return sec


def _likelihood_section(b: _Builder, loaded) -> Section:
    import pandas as pd

    from biaskit.evaluate.report.plots import fraction_bars
    from biaskit.evaluate.stats import likelihood_bias

    name, df = _find(loaded, ["axis", "template", "descriptor"], "likelihood", any_of=["perplexity", "nll_mean"])
    if "kind" in df.columns and not (df["kind"] == "likelihood").any():
        raise _Skip(f"table `{name}` has no rows with kind == likelihood")
    sec = Section("likelihood_bias", "HolisticBias Likelihood Bias",
                  [f"From table `{name}`. For each axis and template every pair of descriptors is compared with a two-sided "
                   f"Mann-Whitney U test on their sentences' perplexities; a pair differs at p < {b.alpha}. The axis score is the "
                   "fraction of differing pairs."])
    # control sentences (HolisticBias sentences without a descriptor) have no axis: they are no group to compare
    control = df["axis"].isna() | df["descriptor"].isna()
    if control.any():
        sec.text.append(f"Left out: {int(control.sum())} control sentence(s) without a descriptor (null `axis`/`descriptor`); "
                        "they belong to no axis, so they are not part of any Likelihood Bias score, chart or ranking.")
        df = df[~control]
    models = sorted(df["model"].dropna().unique()) if "model" in df.columns else [None]
    if "kind" in df.columns:
        models = sorted(df.loc[df["kind"] == "likelihood", "model"].dropna().unique()) if "model" in df.columns else [None]
    models = models or [None]  # a model column that is all null: one unnamed model, not an empty report crash
    axes, pairs, ranks = [], [], []
    for m in models:
        res = likelihood_bias(df, alpha=b.alpha, model=m)
        for part, acc in ((res.by_axis, axes), (res.pairs, pairs), (res.ranking, ranks)):
            part = part.copy()
            part.insert(0, "model", m if m is not None else "")
            acc.append(part)
        if res.skipped:
            sec.text.append(f"Model {m}: rows not used: " + ", ".join(f"{v} ({k})" for k, v in res.skipped.items()) + ".")
    by_axis = pd.concat(axes, ignore_index=True)
    b.table(sec, "likelihood_bias_by_axis", by_axis, "Likelihood Bias per axis: differing pairs / tested pairs.")
    all_pairs = pd.concat(pairs, ignore_index=True)
    for _, r in by_axis.iterrows():
        pr = all_pairs[(all_pairs["model"] == r["model"]) & (all_pairs["axis"] == r["axis"])] if len(all_pairs) else all_pairs
        n_min = int(min(pr["n_a"].min(), pr["n_b"].min())) if len(pr) else 0
        frac = float(r["fraction"]) if r["fraction"] == r["fraction"] else None
        flags = [f"n < {MIN_GROUP_N} sentences per descriptor"] if n_min < MIN_GROUP_N else []
        if not r["n_pairs"]:
            flags.append("no testable descriptor pair")
        sec.headline.append(Finding(
            "Likelihood Bias", "share of descriptor pairs whose perplexities differ", f"axis {r['axis']}" + (f" ({r['model']})" if r["model"] else ""),
            f"{int(r['n_different'])} of {int(r['n_pairs'])} pairs differ (Mann-Whitney p < {b.alpha} per pair, uncorrected)",
            frac, None, None, "", f"min {n_min} sentences per descriptor", flags, "likelihood_bias"))
    for m in models:
        sub = by_axis[by_axis["model"] == (m if m is not None else "")]
        b.figure(sec, f"likelihood_bias_{_slug(m or 'model')}", fraction_bars, sub, "axis", "fraction",
                 title=f"Likelihood Bias per axis ({m})" if m else "Likelihood Bias per axis", num="n_different", den="n_pairs",
                 ylabel="fraction of descriptor pairs that differ", caption=f"Likelihood Bias per axis for {m or 'the model'} (labels: fraction, differing/tested pairs).")
    b.table(sec, "likelihood_bias_pairs", all_pairs, "Every descriptor pair per axis and template.", max_rows=20)
    b.table(sec, "likelihood_ranking", pd.concat(ranks, ignore_index=True),
            "Descriptors ranked by median perplexity per template (1 = most likely).", max_rows=20)
    return sec


def _honest_section(b: _Builder, loaded) -> Section:
    from biaskit.evaluate.report.plots import fraction_bars, heatmap
    from biaskit.evaluate.stats import honest_category_matrix, honest_summary

    name, df = _find(loaded, ["honest_hurtful"], "honest")
    sec = Section("honest", "HONEST", [f"From table `{name}` ({len(df)} rows). HONEST score = share of completions that are hurtful "
                                       "(contain a HurtLex word); category columns give the share with a word of that HurtLex category."])
    first = None
    for extra in ("subject_category", "template_category", "term"):
        if extra not in df.columns:
            continue
        by = [c for c in ("language",) if c in df.columns] + [extra]
        s = honest_summary(df, by=by)
        b.table(sec, f"honest_by_{extra}", s, f"HONEST per {', '.join(by)}.")
        first = first if first is not None else (extra, s)
    if first is None:
        by = [c for c in ("language",) if c in df.columns]
        first = ("table", honest_summary(df, by=by))
        b.table(sec, "honest_summary", first[1], "HONEST score.")
    extra, s = first
    m = honest_category_matrix(s)
    if m.shape[1]:
        b.figure(sec, "honest_categories", heatmap, m, title=f"HONEST: share of completions per HurtLex category ({extra})",
                 xlabel="HurtLex category", caption="Share of completions with a word of each HurtLex category, per group.")
    else:
        b.skipped.append(("HONEST category heatmap", f"table `{name}` has no honest_categories values"))
        keys = [c for c in s.columns if c not in ("n", "n_valid", "n_null", "n_error", "hurtful", "honest_score")]
        s2 = s.assign(_label=s[keys].astype(str).agg(" | ".join, axis=1) if keys else "all")
        b.figure(sec, "honest_scores", fraction_bars, s2, "_label", "honest_score", title="HONEST score", num="hurtful", den="n_valid",
                 ylabel="share hurtful", caption="HONEST score per group.")
    return sec


def _agreement_section(b: _Builder, loaded) -> Section:
    from biaskit.evaluate.report.plots import agreement_chart

    import pandas as pd

    name, df = _find(loaded, ["round", "measure", "value"], "agreement")
    # agreement and validation figures may sit in several agreement-stage tables (e.g. agreement + validation)
    names = [n for n, d in loaded.items() if all(c in d.columns for c in ("round", "measure", "value"))]
    if len(names) > 1:
        df = pd.concat([loaded[n].assign(table=n) for n in names], ignore_index=True)
        name = "`, `".join(names)
    sec = Section("agreement", "Annotation agreement and metric validation", [f"From table(s) `{name}` ({len(df)} rows)."])
    b.table(sec, "agreement", df, "Agreement and validation figures.", max_rows=60)
    if "metric" in df.columns and df["metric"].notna().any():
        v = df[df["metric"].notna()]
        main = v[v["measure"].isin(SUMMARY_MEASURES)]
        v = main if len(main) else v
        b.figure(sec, "metric_vs_human", agreement_chart, v, title="Metric vs human labels",
                 caption="Validation of each metric against the human majority label: " + ", ".join(dict.fromkeys(v["measure"]))
                 + " (bootstrap CI where given; per-label precision/recall are in the table).")
    else:
        b.skipped.append(("metric-vs-human agreement chart", f"table `{name}` has no validation rows (metric set)"))
    overall = df
    for c in ("metric", "annotator", "annotator_b"):
        if c in overall.columns:
            overall = overall[overall[c].isna()]
    if len(overall):
        from biaskit.evaluate.report.plots import split_count_measures

        lab = overall["task_type"] if "task_type" in overall.columns else overall["round"]
        ov = overall.assign(metric=[f"{r} ({t})" if t == t and t is not None else str(r) for r, t in zip(overall["round"], lab)])
        drawn, counts = split_count_measures(ov)
        left = f" Counts ({', '.join(counts)}) are not drawn on this scale; they are in the table above." if counts else ""
        if len(drawn):
            b.figure(sec, "inter_annotator_agreement", agreement_chart, drawn, title="Inter-annotator agreement",
                     caption="Agreement coefficients between annotators per round (bootstrap CI where given)." + left)
        for _, r in drawn[drawn["measure"].isin(("fleiss_kappa", "krippendorff_alpha_nominal"))].iterrows():
            n_items = None if pd.isna(r.get("n_items")) else int(r.get("n_items"))
            lo, hi = (r.get("ci_low"), r.get("ci_high"))
            ci = None if lo is None or hi is None or pd.isna(lo) or pd.isna(hi) else (float(lo), float(hi))
            value = None if pd.isna(r["value"]) else float(r["value"])
            flags = [f"n < {MIN_GROUP_N} items"] if n_items is not None and n_items < MIN_GROUP_N else []
            sec.headline.append(Finding("Annotator agreement", str(r["measure"]), str(r["metric"]), "", value, ci, None, "",
                                        f"{n_items} items" if n_items is not None else "", flags, "agreement"))
    return sec


SUMMARY_MEASURES = ("accuracy", "f1_weighted", "precision_weighted", "recall_weighted", "spearman_rho")


#: the report's analyses, in page order: (label, fn(builder, loaded tables) -> Section). Each raises
#: ``SkipAnalysis(why)`` when no table has what it needs (listed under "Not made"). To add a section, append
#: one line, e.g. ``ANALYSES.append(("Validity", validity_section))``: its ``Section.headline`` findings join
#: the headline block and its tables are collapsed and linked like every other.
ANALYSES = [
    ("Sentiment (VADER)", lambda b, L: _label_section(b, L, kind="sentiment", column="vader_label", title="Sentiment",
                                                      labels=("positive", "neutral", "negative"), what="sentiment", test_label="positive")),
    ("Toxicity", lambda b, L: _label_section(b, L, kind="toxicity", column="toxicity_label", title="Toxicity",
                                             labels=("toxic", "non-toxic"), what="toxicity", test_label="toxic")),
    ("Regard", lambda b, L: _regard(b, L)),
    ("Gender polarity", _gender_section),
    ("Emotion and VAD classes", _norms_section),
    ("HolisticBias Likelihood Bias", _likelihood_section),
    ("HolisticBias generation bias", genbias_section),
    ("HONEST", _honest_section),
    ("Completion validity", lambda b, L: _validity_section(b, L)),
    ("Agreement", _agreement_section),
]


def _validity_section(b, loaded):
    from biaskit.evaluate.report.validity import validity_section  # imports this module: import when used

    return validity_section(b, loaded)


def _regard(b, loaded):
    sec = _label_section(b, loaded, kind="regard", column="regard_label", title="Regard",
                         labels=("positive", "neutral", "negative", "other"), what="regard", test_label="negative")
    try:
        _regard_extra(b, sec, loaded)
    except _Skip:
        pass
    return sec


#: the list of files the last report wrote into its folder (``report --out DIR``), so a new report removes the figures
#: and tables of the previous one that it did not rewrite, and nothing else in the folder
REPORT_FILES = "report_files.json"


def _drop_stale_report_files(out_dir: Path, written: list[Path]) -> None:
    from biaskit.io import write_json_atomic

    now = sorted({p.resolve().relative_to(out_dir.resolve()).as_posix() for p in written})
    old: list[str] = []
    try:
        prev = json.loads((out_dir / REPORT_FILES).read_text(encoding="utf-8"))
        if isinstance(prev, dict) and prev.get("written_by") == "biaskit report" and isinstance(prev.get("files"), list):
            old = [f for f in prev["files"] if isinstance(f, str)]
    except (OSError, ValueError):
        pass
    root = out_dir.resolve()
    for rel in sorted(set(old) - set(now)):
        p = (out_dir / rel)
        try:
            inside = p.resolve().parent.is_relative_to(root) and ".." not in Path(rel).parts and not Path(rel).is_absolute()
        except OSError:
            inside = False
        if inside and p.suffix in (".png", ".csv", ".md", ".html") and p.is_file() and not p.is_symlink():
            p.unlink()
    write_json_atomic(out_dir / REPORT_FILES, {"written_by": "biaskit report", "files": now})


def build_report(run_dir: str | Path, out: str | Path | None = None, *, tables: dict[str, Path] | None = None,
                 summary: list[tuple[str, str]] | None = None, manifest: dict | None = None, seed: int = 0, n_boot: int = 1000,
                 alpha: float = 0.05, title: str = "biaskit report", allow_empty: bool = False,
                 keep_figures: bool = False) -> ReportResult:
    """Write ``report.html`` (self-contained), ``report.md``, ``figures/*.png`` and ``tables/*.{csv,md}``
    into ``out`` (default ``RUN_DIR/report``) from the run's tables.

    ``tables``: name -> file (default: :func:`discover_tables`); ``summary``: stage notes (default: the
    run manifest's). Analyses whose columns no table has are listed in the report under "Not made".
    ``allow_empty``: write a report (listing what was not made) even when the run has no readable table;
    otherwise that is error E081. ``keep_figures``: also return the matplotlib Figures (``figure_objects``).

    The page opens with the headline block: every section's :class:`Finding` (largest group gaps with CIs and
    corrected p-values, model-vs-Wikipedia differences, Likelihood Bias per axis, ...), flagged when the groups
    are too small to say anything.
    """
    from biaskit.evaluate.report.html import render_html, render_markdown
    from biaskit.evaluate.stats._common import check_alpha
    from biaskit.io import write_text_atomic

    rd = Path(run_dir)
    check_alpha(alpha)
    if n_boot < 1:
        raise BiaskitError("E081", "n_boot must be at least 1", value=n_boot, fix="use e.g. --n-boot 1000")
    tables = dict(tables) if tables is not None else discover_tables(rd)
    if rd.is_file():
        rd = rd.parent
    if manifest is None and (rd / "manifest.json").is_file():
        manifest = json.loads((rd / "manifest.json").read_text(encoding="utf-8"))
    if summary is None and manifest:
        summary = [tuple(s) for s in manifest.get("summary", [])]
    out_dir = Path(out) if out is not None else rd / "report"
    out_dir.mkdir(parents=True, exist_ok=True)
    manifests: dict[str, dict] = {}
    loaded, overview = _load(tables, manifests)
    if not loaded and not allow_empty:
        raise BiaskitError("E081", "the run folder has no readable tables", value=str(rd),
                           fix="run `biaskit demo --out DIR` or a stage first, or pass a folder with .parquet/.jsonl/.csv tables")
    b = _Builder(out_dir, seed, n_boot, alpha, keep_figures)
    b.manifests = manifests
    sections: list[Section] = []
    for label, fn in ANALYSES:
        try:
            sections.append(fn(b, loaded))
        except _Skip as why:
            b.skipped.append((label, str(why)))
    headline = [f for s in sections for f in s.headline]
    page = render_html(title=title, run_dir=rd, sections=sections, overview=overview, summary=summary or [], manifest=manifest,
                       skipped=b.skipped, out_dir=out_dir, headline=headline, alpha=alpha)
    html_path = write_text_atomic(out_dir / "report.html", page)
    md = render_markdown(title=title, run_dir=rd, sections=sections, overview=overview, summary=summary or [], skipped=b.skipped,
                         out_dir=out_dir, headline=headline, alpha=alpha)
    md_path = write_text_atomic(out_dir / "report.md", md)
    _drop_stale_report_files(out_dir, [html_path, md_path, *b.figures, *b.tables.values(),
                                       *(p.with_suffix(".md") for p in b.tables.values())])
    return ReportResult(out=out_dir, html=html_path, md=md_path, figures=b.figures, tables=b.tables,
                        sections=[s.id for s in sections], skipped=b.skipped, headline=headline, figure_objects=b.figure_objects)
