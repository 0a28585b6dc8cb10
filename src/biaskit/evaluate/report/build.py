"""Build the statistical report of a run folder: tables (Markdown + CSV), plots (PNG) and one
self-contained HTML page (images embedded, table of contents, run manifest) that opens offline.

Works on whatever tables the run has: each analysis looks for a table with the columns it needs
(``docs/CONTRACTS.md``) and, when none has them, the report says which figure could not be made and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.report import model
from biaskit.evaluate.report import sections as _sections  # noqa: F401  (the sections register themselves)
from biaskit.evaluate.report.headline import check_min_gap, write_headline_csv
from biaskit.evaluate.report.html import ReportPage, render_html, render_markdown
from biaskit.evaluate.report.metric_validity import mark_invalid, validities
from biaskit.evaluate.report.model import Figure, Finding, Section, SkipAnalysis, TableOut, load_section_plugins
from biaskit.evaluate.report.plots import save_figure
from biaskit.evaluate.report.tables import write_table_files
from biaskit.evaluate.stats._common import check_alpha
from biaskit.evaluate.stats.columns import upgrade_agreement_table
from biaskit.io import SUFFIXES, read_manifest, read_table, table_format, write_text_atomic
from biaskit.jsonread import read_back
from biaskit.ownership import claim_stagewise, mark_stagewise

NOT_TABLES = ("report_html", "hub_dir", "report_dir")


@dataclass
class ReportResult:
    out: Path
    html: Path
    md: Path
    figures: list[Path]
    tables: dict[str, Path]
    sections: list[str]
    skipped: list[tuple[str, str]]  # (figure or analysis, why it was not made)
    headline: list[Finding] = field(default_factory=list)
    figure_objects: dict[str, Any] = field(default_factory=dict)  # name -> matplotlib Figure (keep_figures=True)


def discover_tables(run_dir: str | Path) -> dict[str, Path]:
    """Tables of a run folder: the ``tables`` map of its ``manifest.json`` when there is one, else every
    ``*.parquet`` / ``*.jsonl`` / ``*.csv`` file directly in the folder (name = file stem)."""
    rd = Path(run_dir)
    if rd.is_file() and rd.suffix in SUFFIXES:
        return {rd.stem: rd}  # a single table file is a run of one table
    if not rd.is_dir():
        raise BiaskitError(
            "E081",
            "run folder not found",
            value=str(rd),
            fix="pass the folder `biaskit demo --out` (or a stage) wrote, or one table file (.parquet/.jsonl/.csv)",
        )
    found: dict[str, Path] = {}
    man = rd / "manifest.json"
    if man.is_file():
        try:
            m = read_back(man, what="run manifest")
        except BiaskitError as exc:
            if exc.code != "E381":
                raise
            raise BiaskitError(
                "E081", f"run manifest is not valid JSON: {exc.what}", value=str(man), fix="rerun the run or delete manifest.json"
            ) from None
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
    loaded: dict[str, Any] = {}
    overview: list[tuple[str, str, Any, Any]] = []
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
        df = upgrade_agreement_table(t.to_pandas())  # a validation table written before the column vocabulary
        loaded[name] = df
        if manifests is not None:
            try:
                manifests[name] = read_manifest(p) or {}
            except Exception:  # a table without a readable manifest is still reported
                manifests[name] = {}
        overview.append((name, str(p), len(df), f"{len(df.columns)} columns"))
    return loaded, overview


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
        self.loaded: dict[str, Any] = {}  # table name -> DataFrame (the run's tables)
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
        name = self._unique("table", name)
        paths = write_table_files(df, self.tab_dir, name)
        self.tables[name] = paths["csv"]
        sec.tables.append(TableOut(name, df, caption, max_rows, show))

    def figure(self, sec: Section, name: str, fn, *args, caption: str, **kw) -> None:
        """Draw with a :mod:`plots` function (called with ``path=None``, so it returns the Figure) and save it."""
        self.fig_dir.mkdir(parents=True, exist_ok=True)
        fig = fn(*args, None, **kw)
        uniq = self._unique("figure", name)
        p = save_figure(fig, self.fig_dir / f"{uniq}.png")
        if self.keep_figures:
            self.figure_objects[uniq] = fig
        self.figures.append(p)
        sec.figures.append(Figure(p, caption))


#: the list of files the last report wrote into its folder (``report --out DIR``), so a new report removes the figures
#: and tables of the previous one that it did not rewrite, and nothing else in the folder
REPORT_FILES = "report_files.json"
REPORT_WRITTEN_BY = "biaskit report"


def _drop_stale_report_files(out_dir: Path, written: list[Path], previous: dict[str, str]) -> None:
    """Remove the files of the previous report here (``previous``: its marker's path -> sha256, each unchanged:
    :func:`~biaskit.ownership.claim_stagewise` checked) that this report did not write again, then write the
    marker listing this report's files with their sha256."""
    now = sorted({p.resolve().relative_to(out_dir.resolve()).as_posix() for p in written})
    root = out_dir.resolve()
    for rel in sorted(set(previous) - set(now)):
        p = out_dir / rel
        try:
            inside = p.resolve().parent.is_relative_to(root)
        except OSError:
            inside = False
        if inside and p.suffix in (".png", ".csv", ".md", ".html") and p.is_file() and not p.is_symlink():
            p.unlink()
    mark_stagewise(out_dir, REPORT_FILES, REPORT_WRITTEN_BY, now)


def build_report(
    run_dir: str | Path,
    out: str | Path | None = None,
    *,
    tables: dict[str, Path] | None = None,
    summary: list[tuple[str, str]] | None = None,
    manifest: dict | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    alpha: float = 0.05,
    title: str = "biaskit report",
    allow_empty: bool = False,
    keep_figures: bool = False,
    min_gap: float = 0.05,
) -> ReportResult:
    """Write ``report.html`` (self-contained), ``report.md``, ``figures/*.png`` and ``tables/*.{csv,md}``
    into ``out`` (default ``RUN_DIR/report``) from the run's tables.

    ``tables``: name -> file (default: :func:`discover_tables`); ``summary``: stage notes (default: the
    run manifest's). Analyses whose columns no table has are listed in the report under "Not made".
    ``allow_empty``: write a report (listing what was not made) even when the run has no readable table;
    otherwise that is error E081. ``keep_figures``: also return the matplotlib Figures (``figure_objects``).

    The page opens with the headline block: every section's :class:`Finding` (largest group gaps with CIs and
    corrected p-values, model-vs-Wikipedia differences, Likelihood Bias per axis, ...), flagged when the groups
    are too small to say anything; above them one verdict line per kind of claim, domain and measure
    (:mod:`biaskit.evaluate.report.headline`; ``min_gap``: the smallest gap of interest its power sentence plans
    for), and the same headline as ``tables/headline.csv``.
    """
    _check_options(alpha, n_boot)
    check_min_gap(min_gap)
    load_section_plugins()  # the sections of installed plugins, after the shipped ones (a clash fails before any write)
    rd = Path(run_dir)
    tables = dict(tables) if tables is not None else discover_tables(rd)
    if rd.is_file():
        rd = rd.parent  # a run of one table file: its folder holds the manifest and the report
    manifest, summary = _run_manifest(rd, manifest, summary)
    out_dir = Path(out) if out is not None else rd / "report"
    previous = claim_stagewise(
        out_dir, REPORT_FILES, REPORT_WRITTEN_BY, unmarked_ok=True, writes=("report.html", "report.md"), folders=("figures", "tables")
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    manifests: dict[str, dict] = {}
    loaded, overview = _load(tables, manifests)
    if not loaded and not allow_empty:
        raise BiaskitError(
            "E081",
            "the run folder has no readable tables",
            value=str(rd),
            fix="run `biaskit demo --out DIR` or a stage first, or pass a folder with .parquet/.jsonl/.csv tables",
        )
    b = _Builder(out_dir, seed, n_boot, alpha, keep_figures)
    b.manifests = manifests
    b.loaded = loaded
    sections = _run_sections(b, loaded)
    found = [f for s in sections for f in s.headline]
    headline = [f for f in found if not f.baseline] + [f for f in found if f.baseline]  # model rows first
    # a metric whose validation failed cannot produce evidence: its findings say why and link to the validation
    mark_invalid(headline, validities(loaded, {f.source_metric for f in headline if f.source_metric}))
    b.tables["headline"] = write_headline_csv(headline, out_dir, alpha, min_gap)
    page = ReportPage(title, rd, sections, overview, summary or [], b.skipped, out_dir, headline, alpha, min_gap, manifest)
    html_path, md_path = _write_pages(b.out, page)
    _drop_stale_report_files(
        out_dir, [html_path, md_path, *b.figures, *b.tables.values(), *(p.with_suffix(".md") for p in b.tables.values())], previous
    )
    return ReportResult(
        out=out_dir,
        html=html_path,
        md=md_path,
        figures=b.figures,
        tables=b.tables,
        sections=[s.id for s in sections],
        skipped=b.skipped,
        headline=headline,
        figure_objects=b.figure_objects,
    )


def _check_options(alpha: float, n_boot: int) -> None:
    check_alpha(alpha)
    if n_boot < 1:
        raise BiaskitError("E081", "n_boot must be at least 1", value=n_boot, fix="use e.g. --n-boot 1000")


def _run_manifest(rd: Path, manifest: dict | None, summary: list[tuple[str, str]] | None):
    """(manifest, summary): those given, else the run folder's ``manifest.json`` and its stage notes."""
    if manifest is None and (rd / "manifest.json").is_file():
        manifest = read_back(rd / "manifest.json", what="run manifest")
    if summary is None and manifest:
        summary = [tuple(s) for s in manifest.get("summary", [])]
    return manifest, summary


def _run_sections(b: _Builder, loaded: dict[str, Any]) -> list[Section]:
    """Every registered analysis in page order; one that cannot be made is listed in ``b.skipped`` with why; one
    that returns None does not apply to the run at all (e.g. the judge section without a judge) and is not listed."""
    sections: list[Section] = []
    for label, fn in model.SECTIONS:  # read at call time: the one registry, in page order
        try:
            sec = fn(b, loaded)
            if sec is not None:
                sections.append(sec)
        except SkipAnalysis as why:
            b.skipped.append((label, str(why)))
    return sections


def _write_pages(out: Path, page: ReportPage) -> tuple[Path, Path]:
    """Write ``report.html`` (with the run manifest) and ``report.md`` of the same ``page`` into ``out``; returns their paths."""
    html_path = write_text_atomic(out / "report.html", render_html(page))
    md_path = write_text_atomic(out / "report.md", render_markdown(page))
    return html_path, md_path
