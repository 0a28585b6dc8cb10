"""The report's section model: what a section is (:class:`Section` with its tables, figures and headline
:class:`Finding` rows), how it says it cannot be made (:class:`SkipAnalysis`), how it finds its table
(:func:`find_table`) and how it joins the page (:func:`register_section`).

Sections live in :mod:`biaskit.evaluate.report.sections` (one module each) and register themselves here;
:mod:`biaskit.evaluate.report.build` only iterates :data:`SECTIONS`. This module imports no section and no
builder, so neither can import it back in a circle.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats.families import correct_family
from biaskit.evaluate.stats.inference import newcombe_interval
from biaskit.inputs import name_part

if TYPE_CHECKING:  # pandas is loaded by the sections, not at the import of the section model
    import pandas as pd

#: table names the analyses look at first (then every other table of the run)
PREFERENCE = {
    "sentiment": ("scores",),
    "toxicity": ("scores",),
    "profanity": ("scores",),
    "regard": ("scores",),
    "gender": ("scores",),
    "norms": ("scores",),
    "likelihood": ("likelihoods", "generations", "scores"),
    "honest": ("fillins", "fillin_scores", "scores"),
    "agreement": ("agreement",),
}


@dataclass
class Figure:
    path: Path
    caption: str


@dataclass
class TableOut:
    name: str
    df: pd.DataFrame
    caption: str
    max_rows: int = 40
    show: list[str] | None = None  # columns shown on the page (None: :func:`tables.compact` picks); the CSV has all


@dataclass
class Finding:
    """One line of the headline block at the top of the report.

    ``kind``: what was compared ("Largest group gap", "Model vs Wikipedia", "Likelihood Bias", ...);
    ``metric``: the measure ("Sentiment: share positive"); ``where``: domain / axis / source;
    ``comparison``: e.g. "men vs women"; ``estimate`` with its interval ``ci`` (None when there is none);
    ``p``: the multiple-comparison-corrected p-value (``p_label`` says which correction and over how many
    tests); ``n``: the sample sizes as text; ``flags``: why the finding is uncertain (its interval includes 0,
    its corrected p is not below alpha, its test is undefined; empty = none; flagged rows are greyed);
    ``cautions``: what to keep in mind that does not by itself make it uncertain (a group under
    :data:`MIN_GROUP_N`). ``baseline``: a finding about the Wikipedia baseline alone, not about a model (shown
    after the model findings, labelled so). ``anchor``: the section id the details are in."""

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
    text: str = ""  # a finding stated in words instead of a number (e.g. "no text flagged")
    cautions: list[str] = field(default_factory=list)
    baseline: bool = False
    #: the headline family the test belongs to (a key of :data:`biaskit.evaluate.stats.families.FAMILIES`; "" for a
    #: finding that is no test of a family) and its size; ``domain``: the domain (or grouping column) the verdict
    #: line groups it under; ``base_rate``: the share a gap is measured from and ``n_min`` the smaller group's size
    #: (for the power behind "no evidence at this size")
    family: str = ""
    family_size: int | None = None
    domain: str = ""
    base_rate: float | None = None
    n_min: int | None = None
    #: the two groups' sizes (for the smallest gap the test can see at these sizes); ``source_metric``: the metric
    #: whose labels the finding rests on (``vader``, ``judge``), read against its validation; ``invalid``: why that
    #: metric is not valid here (:mod:`biaskit.evaluate.report.metric_validity`; "" when it is or is not validated)
    #: and ``invalid_anchor`` the section its validation is in; ``family_label``: the family's name as the page
    #: shows it; ``untestable``: the comparisons of the family that could not be tested, each with its reason
    n_sizes: tuple[int, int] | None = None
    source_metric: str = ""
    invalid: str = ""
    invalid_anchor: str = ""
    family_label: str = ""
    untestable: list[str] = field(default_factory=list)


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


#: smallest group size the headline treats as enough to compare groups
MIN_GROUP_N = 30


class SkipAnalysis(Exception):
    """Raise this from an analysis (with the reason) when the run has no table it can use: the report lists it
    under "Not made"."""


def slug(s: str) -> str:
    """``s`` as a file-name part (:func:`biaskit.inputs.name_part`: known secrets removed, lower case, runs of
    other characters as ``_``), at most 60 characters."""
    return name_part(s)[:60] or "x"


class ReportBuilder(Protocol):
    """What a section function gets as its first argument (the report's builder): ``table`` and ``figure`` write
    the section's files (named uniquely within the report) and add them to the section; ``skipped`` collects the
    (analysis, why) pairs listed under "Not made"; ``manifests`` maps a table name to its manifest; ``seed``,
    ``n_boot`` and ``alpha`` are the report's options, which every interval and test of a section uses."""

    out: Path
    manifests: dict[str, dict]
    skipped: list[tuple[str, str]]
    seed: int
    n_boot: int
    alpha: float

    def table(self, sec: Section, name: str, df: pd.DataFrame, caption: str, max_rows: int = 40, show: list[str] | None = None) -> None:
        """Write ``df`` as tables/<name>.csv and .md and show it in ``sec`` (at most ``max_rows`` rows, the ``show`` columns)."""

    def figure(self, sec: Section, name: str, fn: Callable[..., object], *args: object, caption: str, **kw: object) -> None:
        """Draw with a :mod:`biaskit.evaluate.report.plots` function (``fn(*args, None, **kw)`` returns the Figure),
        save it as figures/<name>.png and show it in ``sec`` with ``caption``."""


#: what a section function is: ``fn(builder, loaded tables) -> Section | None`` (see :data:`SECTIONS`)
SectionFn = Callable[[ReportBuilder, "dict[str, pd.DataFrame]"], Section | None]

#: the report's analyses, in page order: (label, fn(builder, loaded tables) -> Section). Each raises
#: ``SkipAnalysis(why)`` when no table has what it needs (listed under "Not made"), and returns None when it
#: does not apply to the run at all (not listed). Sections add themselves with :func:`register_section`;
#: :mod:`biaskit.evaluate.report.sections` imports them in page order; plugin sections come after them
#: (:func:`load_section_plugins`).
SECTIONS: list[tuple[str, SectionFn]] = []
#: label -> the package whose section it is (``biaskit`` for the shipped ones; a plugin's distribution)
SECTION_ORIGIN: dict[str, str] = {}
#: the entry-point group through which other packages add report sections: ``label = "module:function"``
SECTION_ENTRY_POINTS = "biaskit.report_sections"


def register_section(label: str, fn: SectionFn | None = None, *, origin: str = "biaskit"):
    """Add an analysis to the report (after those registered before it). Use as ``register_section(label, fn)``
    or as a decorator ``@register_section(label)``; returns ``fn``. Registering a label twice is an error
    (E240, naming both packages): two sections would write the same page part."""

    def add(f):
        if any(lab == label for lab, _ in SECTIONS):
            other = SECTION_ORIGIN.get(label, "biaskit")
            raise BiaskitError(
                "E240",
                f"a report section with the label {label!r} ({origin}) is registered already by {other}",
                value=label,
                options=[lab for lab, _ in SECTIONS],
                fix=f"give the new section its own label (in {origin}"
                + (f'\'s [project.entry-points."{SECTION_ENTRY_POINTS}"]' if origin != "biaskit" else "")
                + f"), or uninstall one of {origin} and {other}",
            )
        SECTIONS.append((label, f))
        SECTION_ORIGIN[label] = origin
        return f

    return add(fn) if fn is not None else add


#: (label, "module:function") of the plugin sections registered so far (loading twice adds nothing)
_LOADED_PLUGINS: set[tuple[str, str]] = set()


def load_section_plugins() -> list[str]:
    """Register the report sections other installed packages declare in the ``biaskit.report_sections``
    entry-point group (``label = "module:function"``), after the shipped ones; returns the labels added. A label
    registered already is E240 naming both packages; an entry point that cannot be imported is E241."""
    added = []
    for ep in sorted(entry_points(group=SECTION_ENTRY_POINTS), key=lambda e: e.name):
        if (ep.name, ep.value) in _LOADED_PLUGINS:
            continue
        dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
        module_name, _, attr = ep.value.partition(":")
        try:
            fn = getattr(importlib.import_module(module_name), attr) if attr else None
        except (ImportError, AttributeError) as exc:
            raise BiaskitError(
                "E241",
                f"the report section {ep.name!r} of {dist} cannot be imported ({exc})",
                value=ep.value,
                fix=f"fix or uninstall {dist}",
            ) from exc
        if not callable(fn):
            raise BiaskitError(
                "E241", f"the report section {ep.name!r} of {dist} is not a function", value=ep.value, fix='point it at "module:function"'
            )
        register_section(ep.name, fn, origin=dist)
        _LOADED_PLUGINS.add((ep.name, ep.value))
        added.append(ep.name)
    return added


def find_table(loaded: dict[str, pd.DataFrame], cols: list[str], kind: str, any_of: list[str] | None = None) -> tuple[str, pd.DataFrame]:
    """(name, frame) of the run's table that has every column of ``cols`` (and one of ``any_of``) with data,
    preferring the tables :data:`PREFERENCE` names for ``kind``; :class:`SkipAnalysis` saying why otherwise."""
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
        raise SkipAnalysis("; ".join(empty) + " (see the metric's *_error column or the score stage's note)")
    need = ", ".join(cols + ([" or ".join(any_of)] if any_of else []))
    have = "; ".join(f"{n}: {len(df)} rows" for n, df in loaded.items()) or "no tables"
    raise SkipAnalysis(f"no table has column(s) {need} ({have})")


def with_bh(df, fn, *args, family: list[str] | None = None, **kw):
    """Run a pairwise test family with Holm and add the Benjamini-Hochberg adjusted p as ``p_bh``.

    ``family``: the columns whose values make one correction family (default: the ``within`` columns the
    tests ran in); e.g. model-vs-Wikipedia tests run per domain and group but are corrected over every group of
    the domain. Adds ``family_size`` (the number of tests in the row's family) and ``caution`` (a group under
    :data:`MIN_GROUP_N` texts), next to the groups compared (:func:`biaskit.evaluate.stats.families.correct_family`)."""
    fam_cols = kw.get("within", []) if family is None else family
    return correct_family(fn(*args, correction="holm", **kw), fam_cols)


def by_domain(df):
    """[(domain, rows)] of ``df`` in domain order (nulls as ``(null)``); [("all", df)] without a domain column."""
    if "domain" in df.columns:
        vals = df["domain"].astype(object).where(df["domain"].notna(), "(null)")
        return [(str(d), df[vals == d]) for d in sorted(set(vals), key=str)]
    return [("all", df)]


def group_pair_table(df, diff, *, max_groups: int):
    """``diff(rows, a, b)`` for every pair of groups ``a`` < ``b`` (sorted) of each domain with 2 to ``max_groups``
    groups, each with a leading ``domain`` column, as one table in domain order; None when no domain has such groups."""
    import pandas as pd

    out = []
    for dom, sub in by_domain(df):
        groups = sorted(set(sub["group"].dropna()))
        if not 2 <= len(groups) <= max_groups:
            continue
        for i, a in enumerate(groups):
            for b in groups[i + 1 :]:
                d = diff(sub, a, b)
                d.insert(0, "domain", dom)
                out.append(d)
    return pd.concat(out, ignore_index=True) if out else None


def newcombe(count_a, n_a, count_b, n_b, alpha: float) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval for p_a - p_b (Wilson intervals of each share combined), level 1 - alpha."""
    if not (n_a and n_b):
        return None

    return newcombe_interval(count_a, n_a, count_b, n_b, level=1.0 - alpha)


def uncertainty_flags(estimate, ci, p=None, *, alpha: float = 0.05) -> list[str]:
    """Why a comparison is actually uncertain: its interval includes 0, its corrected p is not below
    ``alpha``, or its test could not be computed. A small group is a caution (:func:`small_n_cautions`), not
    one of these: a small group can still give an interval that excludes 0."""
    flags = []
    if ci is not None and ci[0] <= 0 <= ci[1]:
        flags.append(f"{1 - alpha:.0%} CI includes 0")
    if p is not None and p == p and p >= alpha:
        flags.append(f"corrected p >= {alpha:g}")
    if p is not None and p != p:
        flags.append("test undefined (no variation)")
    return flags


def small_n_cautions(n_a, n_b, *, min_n: int = MIN_GROUP_N) -> list[str]:
    """A caution (not an uncertainty flag) when a group has fewer than ``min_n`` texts: the interval and p
    rest on few texts and the normal approximation behind them is rough."""
    return [f"small group (n < {min_n})"] if min(int(n_a), int(n_b)) < min_n else []
