"""Calibration of the report's verdicts: false-claim rate, coverage and "not enough data", over a grid of designs.

Every simulated data set goes through the functions the report itself calls to reach a verdict; nothing here
re-implements a test or a verdict rule.

Group gap (``gap`` cells). Two groups of ``texts`` texts each, spread evenly over ``pages`` pages per group; each
page has its own rate of the label, drawn from a Beta distribution with mean ``base`` (``base + gap`` for group a)
and intra-class correlation ``icc`` (a + b = (1 - icc) / icc; icc 0: every page at the mean). The sets of one cell are
one table with one ``domain`` per set, so each set is its own group-gap family, and the table goes through
:func:`biaskit.evaluate.report.sections.labels.group_gap_findings` (the family tests with their choice of method,
the most decisive testable pair, the reasons a pair cannot be tested), then
:func:`biaskit.evaluate.report.metric_validity.mark_invalid` with the metric's validity read by
:func:`~biaskit.evaluate.report.metric_validity.metric_validity` from simulated validation rows, then
:func:`biaskit.evaluate.report.headline.verdicts`: one verdict line per set.

Metric validity (``validity`` cells). Validity only acts through the verdict gating, so it is crossed with a true gap
of 0 and 0.3 at two designs instead of with the whole grid: a "bad" metric answers the majority label (accuracy =
the majority baseline), a "good" one is right 85% of the time.

PPI (``ppi`` cells). Labelled rows only matter for PPI, so they are crossed with the base rate only. Two groups of
1,000 texts with the same true share ``base``; the metric finds 70% of the label with 5% false alarms; ``labelled``
texts of each group get a human label (a uniform sample). Each set goes through
:func:`biaskit.evaluate.stats.ppi.ppi_table` and :func:`biaskit.evaluate.report.sections.ppi.ppi_gap_finding` (the PPI
headline finding) and its verdict.

Power (``power``). Seven groups of 40 items, a metric right 90% of the time in six and 60% in one (a planted 30-point
accuracy gap), through :func:`biaskit.annotate.groupvalidity.group_rows` (the rows of ``annotate validate --by``) and
the report's fairness section (:func:`biaskit.evaluate.report.sections.fairness.fairness_section`, tables and figures
not drawn); power = the share of sets whose verdicts include evidence of the accuracy gap of the planted group, and
family-wise false gaps = the share of sets with every group at 90% that have any evidence verdict.

Per cell: ``reps`` sets; ``not_enough_data``: the share of sets whose verdict is "not enough data", with the reasons
(``reasons``, the share of sets of each); ``false_claims``: the share of sets with an "evidence of a gap" verdict where
there is no gap, and for an invalid metric with any verdict of evidence at all, even with a true gap; ``power``: the
share of evidence verdicts where there is a gap and the metric is valid; ``coverage``: the share of the intervals the
report prints beside a tested verdict that hold the true gap. A cell meets the criteria (``ok``) when its false-claim
rate is at most 0.07 and its coverage at least 0.90; one whose every set is "not enough data" with a reason says
``not enough data``. A cell where the first ``--pilot`` sets are all "not enough data" stops there.

Usage: python bench/calibration.py [--reps 500] [--seed 0] [--quick] [--write-doc] [--only gap,validity,ppi,power]
(``--quick``: a few cells; ``--write-doc``: replace the marked block of docs/statistics.md with the tables)
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import math
import re
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from biaskit.annotate.groupvalidity import GroupedItems, RowKey, group_rows
from biaskit.bootstrap import BootSpec
from biaskit.evaluate.report.headline import EVIDENCE, NOT_ENOUGH, verdicts
from biaskit.evaluate.report.metric_validity import MetricValidity, mark_invalid, metric_validity
from biaskit.evaluate.report.sections.fairness import fairness_section
from biaskit.evaluate.report.sections.labels import group_gap_findings
from biaskit.evaluate.report.sections.ppi import ppi_gap_finding
from biaskit.evaluate.report.tables import markdown_table
from biaskit.evaluate.stats.ppi import PPIShare, ppi_table

ALPHA = 0.05
MAX_FALSE_CLAIMS, MIN_COVERAGE = 0.07, 0.90
COLUMN, LABEL, METRIC = "vader_label", "positive", "vader"
GAP_GRID = {"texts": (5, 20, 50, 200), "pages": (2, 4, 10, 50), "icc": (0.0, 0.1, 0.3), "base": (0.01, 0.05, 0.2, 0.5)}
QUICK_GAP = {"texts": (20, 200), "pages": (2, 4, 50), "icc": (0.1,), "base": (0.05, 0.5)}
#: (texts, pages, icc, base) designs the validity axis is crossed with, and the true gaps
VALIDITY_DESIGNS = ((50, 10, 0.1, 0.2), (200, 50, 0.0, 0.5))
QUICK_VALIDITY = ((50, 10, 0.1, 0.2),)
VALIDITY_GAPS = (0.0, 0.3)
PPI_GRID = {"base": (0.01, 0.05, 0.2, 0.5), "labelled": (10, 50, 500)}
QUICK_PPI = {"base": (0.05, 0.5), "labelled": (10, 500)}
PPI_ROWS = 1000
POWER_GROUPS, POWER_N, POWER_HIGH, POWER_LOW = 7, 40, 0.9, 0.6
DOC = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
BEGIN, END = "<!-- calibration table: begin (written by bench/calibration.py --write-doc) -->", "<!-- calibration table: end -->"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- simulated data -------------------------------------------------------------------------------------------------


def page_rates(rng, shape: tuple[int, ...], mean: float, icc: float) -> np.ndarray:
    """Page rates with mean ``mean`` and intra-class correlation ``icc`` (Beta(mean s, (1 - mean) s), s = (1 - icc) / icc)."""
    if icc <= 0:
        return np.full(shape, mean)
    s = (1.0 - icc) / icc
    return rng.beta(mean * s, (1.0 - mean) * s, size=shape)


def gap_sets(rng, reps: int, texts: int, pages: int, icc: float, base: float, gap: float = 0.0) -> pd.DataFrame:
    """``reps`` simulated sets as one scored table, one ``domain`` per set (vectorised over the sets)."""
    per = np.full(pages, texts // pages)
    per[: texts % pages] += 1
    page = np.repeat(np.arange(pages), per)
    rates = np.stack([page_rates(rng, (reps, pages), base + gap, icc), page_rates(rng, (reps, pages), base, icc)], axis=1)
    y = rng.random((reps, 2, texts)) < rates[:, :, page]
    return pd.DataFrame(
        {
            "domain": np.repeat(np.char.add("r", np.char.zfill(np.arange(reps).astype(str), 5)), 2 * texts),
            "group": np.tile(np.repeat(np.array(["a", "b"]), texts), reps),
            "page_id": np.tile(np.concatenate([page, pages + page]), reps),
            COLUMN: np.where(y.ravel(), LABEL, "negative"),
        }
    )


def validation_rows(rng, valid: bool, items: int = 200) -> pd.DataFrame:
    """Agreement-stage rows of a metric (its confusion cells): right 85% of the time, or always the majority label."""
    human = np.where(rng.random(items) < 0.35, "positive", "negative")
    metric = np.where(rng.random(items) < 0.85, human, np.where(human == "positive", "negative", "positive")) if valid else np.full(items, "negative")
    cells = Counter(zip(human, metric))
    return pd.DataFrame([{"metric": METRIC, "measure": f"confusion:{h}:{m}", "estimate": float(c)} for (h, m), c in cells.items()])


# --- one cell -------------------------------------------------------------------------------------------------------


def reason_of(verdict: str) -> str:
    """The kind of reason of a "not enough data" verdict, without group names and counts."""
    text = verdict[len(NOT_ENOUGH) :].lstrip(": ")
    text = re.sub(r"^[^:]* vs [^:]*: ", "", text)
    return re.split(r"[(:;]", text)[0].strip() or "no reason given"


def tally(outcomes: list[tuple[str, str, bool | None]], *, false_if_any: bool) -> dict:
    """Cell figures from per-set outcomes (kind: evidence / ned / other, the NED reason, interval covers truth)."""
    n = len(outcomes)
    ned = [r for k, r, _ in outcomes if k == "ned"]
    cov = [c for k, _, c in outcomes if k != "ned" and c is not None]
    ev = sum(k == "evidence" for k, _, _ in outcomes) / n
    reasons = Counter(ned)
    return {
        "reps": n,
        "not_enough_data": len(ned) / n,
        "reasons": "; ".join(f"{r} ({c / n:.2f})" for r, c in reasons.most_common(3)),
        "false_claims": ev if false_if_any else math.nan,
        "power": math.nan if false_if_any else ev,
        "coverage": sum(cov) / len(cov) if cov else math.nan,
        "n_covered": len(cov),
    }


def status(cell: dict) -> str:
    if cell["not_enough_data"] == 1.0:
        return "not enough data" if "no reason given" not in cell["reasons"] else "FAIL (no reason)"
    fc, cov = cell["false_claims"], cell["coverage"]
    bad = (fc == fc and fc > MAX_FALSE_CLAIMS) or (cov == cov and cov < MIN_COVERAGE)
    return "FAIL" if bad else "ok"


def gap_outcomes(df: pd.DataFrame, gap: float, validity: MetricValidity | None) -> list[tuple[str, str, bool | None]]:
    """Each set's verdict through the report's code: (evidence / ned / other, reason, interval holds the true gap)."""
    findings = group_gap_findings(df, COLUMN, LABEL, alpha=ALPHA)
    if validity is not None:
        mark_invalid(findings, {METRIC: validity})
    lines = {v.domain: v for v in verdicts(findings, alpha=ALPHA)}
    out = []
    for dom in pd.unique(df["domain"]):
        v = lines.get(dom)
        if v is None:  # no text of the set has the label: the report's "No signal", no comparison
            out.append(("ned", "no text has the label", None))
            continue
        f = v.lead or v.findings[0]
        covers = None if f.ci is None or v.lead is None else bool(f.ci[0] <= gap <= f.ci[1])
        kind = "evidence" if v.verdict == EVIDENCE else "ned" if v.verdict.startswith(NOT_ENOUGH) else "other"
        out.append((kind, reason_of(v.verdict) if kind == "ned" else "", covers))
    return out


def run_sets(make, reps: int, pilot: int) -> list:
    """``make(n)`` outcomes for ``reps`` sets, stopping after the first ``pilot`` when every one is "not enough data"."""
    first = make(min(pilot, reps))
    if all(k == "ned" for k, _, _ in first) or reps <= pilot:
        return first
    return first + make(reps - pilot)


def gap_cell(rng, texts: int, pages: int, icc: float, base: float, reps: int, *, pilot: int = 50, gap: float = 0.0, validity=None) -> dict:
    """One cell of the group-gap grid (module docstring); ``validity``: None (not validated), True or False."""
    mv = None if validity is None else metric_validity({"validation": validation_rows(rng, validity)}, METRIC)
    outs = run_sets(lambda n: gap_outcomes(gap_sets(rng, n, texts, pages, icc, base, gap), gap, mv), reps, pilot)
    false_if_any = gap == 0 or validity is False
    cell = {"texts": texts, "pages": pages, "icc": icc, "base": base}
    if validity is not None:
        cell |= {"validity": "good" if validity else "bad", "true_gap": gap}
    cell |= tally(outs, false_if_any=false_if_any)
    return cell | {"status": status(cell)}


def ppi_outcomes(rng, base: float, labelled: int, n: int) -> list[tuple[str, str, bool | None]]:
    out = []
    for _ in range(n):
        y = rng.random((2, PPI_ROWS)) < base
        yhat = np.where(rng.random((2, PPI_ROWS)) < np.where(y, 0.3, 0.05), ~y, y)
        human = np.where(np.arange(PPI_ROWS) < labelled, np.where(y, LABEL, "negative"), None)
        df = pd.DataFrame({"group": np.repeat(["a", "b"], PPI_ROWS), COLUMN: np.where(yhat.ravel(), LABEL, "negative"), "human_label": human.ravel()})
        rows = ppi_table(df, PPIShare(metric_column=COLUMN, human_column="human_label", label=LABEL, by="group"))
        rows.insert(0, "label", LABEL)
        f = ppi_gap_finding(rows, COLUMN, LABEL, alpha=ALPHA)
        if f is None:
            err = rows.loc[rows["measure"] == "share_ppi", "reason"].dropna().astype(str)
            out.append(("ned", reason_of(NOT_ENOUGH + ": " + (err.iloc[0] if len(err) else "")), None))
            continue
        v = verdicts([f], alpha=ALPHA)[0]
        kind = "evidence" if v.verdict == EVIDENCE else "ned" if v.verdict.startswith(NOT_ENOUGH) else "other"
        covers = None if f.ci is None or kind == "ned" else bool(f.ci[0] <= 0.0 <= f.ci[1])
        out.append((kind, reason_of(v.verdict) if kind == "ned" else "", covers))
    return out


def ppi_cell(rng, base: float, labelled: int, reps: int, *, pilot: int = 50) -> dict:
    """One cell of the PPI grid (module docstring)."""
    cell = {"base": base, "labelled": labelled} | tally(run_sets(lambda n: ppi_outcomes(rng, base, labelled, n), reps, pilot), false_if_any=True)
    return cell | {"status": status(cell)}


class _NoDrawing:
    """What the fairness section needs of the report builder, without writing tables or drawing figures."""

    alpha = ALPHA

    def table(self, *args, **kw) -> None:
        pass

    def figure(self, *args, **kw) -> None:
        pass


def fairness_verdicts(rng, accuracy: dict[str, float], n: int) -> list:
    lab = np.array(["negative", "positive"])
    yt, yp, gr = [], [], []
    for g, a in accuracy.items():
        t = rng.integers(0, 2, n)
        p = np.where(rng.random(n) < a, t, 1 - t)
        yt += list(lab[t])
        yp += list(lab[p])
        gr += [g] * n
    rows = pd.DataFrame(group_rows(GroupedItems(yt, yp, gr), list(lab), key=RowKey("r", "sentiment", "m", "group"), boot=BootSpec(n_boot=0, seed=0)))
    sec = fairness_section(_NoDrawing(), {"agreement": rows})
    return [f for f in sec.headline if f.family and verdicts([f], alpha=ALPHA)[0].verdict == EVIDENCE]


def power_cell(rng, reps: int) -> dict:
    """Power at the planted 30-point accuracy gap and family-wise false gaps (module docstring)."""
    groups = [f"g{i}" for i in range(POWER_GROUPS)]
    found = false = 0
    for k in range(reps):
        ev = fairness_verdicts(rng, {g: POWER_LOW if g == "g0" else POWER_HIGH for g in groups}, POWER_N)
        found += any(f.metric.endswith("accuracy") and "g0" in f.comparison.split(" vs ") for f in ev)
        false += bool(fairness_verdicts(rng, dict.fromkeys(groups, POWER_HIGH), POWER_N))
        if (k + 1) % 50 == 0:
            log(f"  power: {k + 1}/{reps} sets")
    return {
        "groups": POWER_GROUPS,
        "n_per_group": POWER_N,
        "gap": POWER_HIGH - POWER_LOW,
        "reps": reps,
        "power": found / reps,
        "false_gaps": false / reps,
    }


# --- the grid and its tables ----------------------------------------------------------------------------------------


def gap_designs(grid: dict) -> list[tuple]:
    """(texts, pages, icc, base) of the grid with at least one text per page."""
    return [c for c in itertools.product(grid["texts"], grid["pages"], grid["icc"], grid["base"]) if c[0] >= c[1]]


def run_grid(rng, reps: int, *, quick: bool, only: set[str], pilot: int = 50) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    plan = []
    if "gap" in only:
        plan += [("gap", lambda c=c: gap_cell(rng, *c, reps, pilot=pilot), c) for c in gap_designs(QUICK_GAP if quick else GAP_GRID)]
    if "validity" in only:
        designs = QUICK_VALIDITY if quick else VALIDITY_DESIGNS
        plan += [
            ("validity", lambda d=d, g=g, v=v: gap_cell(rng, *d, reps, pilot=pilot, gap=g, validity=v), (*d, g, v))
            for d in designs
            for v in (True, False)
            for g in VALIDITY_GAPS
        ]
    if "ppi" in only:
        grid = QUICK_PPI if quick else PPI_GRID
        plan += [
            ("ppi", lambda b=b, n=n: ppi_cell(rng, b, n, reps, pilot=pilot), (b, n)) for b, n in itertools.product(grid["base"], grid["labelled"])
        ]
    if "power" in only:
        plan.append(("power", lambda: power_cell(rng, reps), ()))
    for k, (part, fn, key) in enumerate(plan):
        t0 = time.process_time()
        cell = fn()
        if str(cell.get("status", "")).startswith("FAIL") and "not enough data" not in str(cell["status"]):
            cell = recheck(rng, part, cell, reps, pilot)
        out.setdefault(part, []).append(cell)
        log(f"[{k + 1}/{len(plan)}] {part} {key}: {cell.get('status', '')} ({time.process_time() - t0:.1f} CPU s)")
    return out


#: a cell over a criterion is run again with this many times its sets, all fresh (its row shows the rerun)
RECHECK_FACTOR = 4


def recheck(rng, part: str, cell: dict, reps: int, pilot: int = 50) -> dict:
    """``cell`` (over a criterion) run again with :data:`RECHECK_FACTOR` x ``reps`` fresh sets. With 500 sets a rate
    near 0.06 has a Monte-Carlo sd of 0.011, so about one cell in ten whose true rate meets the criterion reads over
    it; the rerun (sd 0.005) decides, and the row keeps the first run's figures in its status."""
    n = reps * RECHECK_FACTOR
    if part == "ppi":
        new = ppi_cell(rng, cell["base"], int(cell["labelled"]), n, pilot=pilot)
    else:
        design = (int(cell["texts"]), int(cell["pages"]), cell["icc"], cell["base"])
        validity = None if part == "gap" else cell["validity"] == "good"
        new = gap_cell(rng, *design, n, pilot=pilot, gap=cell.get("true_gap", 0.0), validity=validity)
    first = f"false claims {cell['false_claims']:.3f}, coverage {cell['coverage']:.3f}"
    new["status"] = f"{new['status']} on a rerun of {n} sets (first {int(cell['reps'])} sets: {first})"
    return new


def redo_cell(rng, part: str, row: dict, reps: int, pilot: int) -> dict:
    """A row of the doc's block run again as the grid runs it (``reps`` fresh sets, the current code)."""
    if part == "ppi":
        return ppi_cell(rng, row["base"], int(row["labelled"]), reps, pilot=pilot)
    design = (int(row["texts"]), int(row["pages"]), row["icc"], row["base"])
    validity = None if part == "gap" else row["validity"] == "good"
    return gap_cell(rng, *design, reps, pilot=pilot, gap=row.get("true_gap", 0.0), validity=validity)


def matches(row: dict, spec: str) -> bool:
    """``row`` has every ``column=value`` of ``spec`` (comma-separated), e.g. ``texts=50,pages=50,base=0.01``."""
    for kv in spec.split(","):
        k, v = kv.split("=", 1)
        if k not in row or not (row[k] == _parsed(v) or str(row[k]) == v):
            return False
    return True


def recheck_doc(seed: int, reps: int, pilot: int, doc: Path = DOC, redo: tuple[str, ...] = ()) -> str:
    """Run again the rows of the doc's calibration block that match a ``redo`` spec (:func:`matches`: cells a change of
    the layer affects; ``reps`` fresh sets each, the current code), then those whose status is FAIL
    (:func:`recheck`), and write them back; returns the sentence added to the block's header."""
    rng = np.random.default_rng(seed)
    text = doc.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    block, tail = rest.split(END, 1)
    redone = 0
    for part, line, row in block_rows(block):
        if part in ("gap", "validity", "ppi") and any(matches(row, spec) for spec in redo):
            new = redo_cell(rng, part, row, reps, pilot)
            new["status"] = f"{new['status']} (rerun with the current layer: --redo)"
            if str(new["status"]).startswith("FAIL") and new["not_enough_data"] < 1.0:
                new = recheck(rng, part, new, reps, pilot)
            log(f"redo {part} {line}: {new['status']}")
            block = block.replace(line, markdown_table(pd.DataFrame([new])[list(COLUMNS[part])]).splitlines()[-1], 1)
            redone += 1
    done = 0
    for part, line, row in block_rows(block):
        if part in ("gap", "validity", "ppi") and str(row["status"]).startswith("FAIL") and row["not_enough_data"] < 1.0:
            new = recheck(rng, part, row, reps, pilot)
            log(f"recheck {part} {line}: {new['status']}")
            block = block.replace(line, markdown_table(pd.DataFrame([new])[list(COLUMNS[part])]).splitlines()[-1], 1)
            done += 1
    cmd = " ".join(["python bench/calibration.py --recheck-doc", f"--reps {reps}", *(f"--redo {r}" for r in redo)])
    note = (
        f"Then `{cmd}` (seed {seed}) ran again {redone} cells a later change of the layer affects, with {reps} fresh sets, and "
        f"{done} cells over a criterion with {reps * RECHECK_FACTOR} fresh sets; their rows show the rerun and say so in "
        "their status (with the first run's figures for a cell over a criterion)."
    )
    lines = block.strip("\n").split("\n", 1)
    doc.write_text(f"{head}{BEGIN}\n{lines[0]} {note}\n{lines[1] if len(lines) > 1 else ''}\n\n{END}{tail}", encoding="utf-8")
    return note


def block_rows(block: str):
    """(part, the row's Markdown line, the row as a dict) of every row of the tables of a calibration block."""
    titles = {v: k for k, v in TITLES.items()}
    part, cols = None, []
    for line in block.splitlines():
        if line.endswith(":") and line[:-1] in titles:
            part, cols = titles[line[:-1]], []
        elif line.startswith("|") and part is not None:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not cols:
                cols = cells
            elif not set("".join(cells)) <= {"-"}:
                yield part, line, {c: _parsed(v) for c, v in zip(cols, cells)}


def _parsed(v: str):
    if v == "n/a":
        return math.nan
    try:
        return float(v)
    except ValueError:
        return v


COLUMNS = {
    "gap": ("texts", "pages", "icc", "base", "reps", "not_enough_data", "false_claims", "coverage", "status", "reasons"),
    "validity": ("texts", "pages", "icc", "base", "validity", "true_gap", "reps", "not_enough_data", "false_claims", "power", "coverage", "status"),
    "ppi": ("base", "labelled", "reps", "not_enough_data", "false_claims", "coverage", "status", "reasons"),
    "power": ("groups", "n_per_group", "gap", "reps", "power", "false_gaps"),
}
TITLES = {
    "gap": "Group gap, no true gap (two groups; the verdict of each set's group-gap family)",
    "validity": "Metric validity (a 'bad' metric: any evidence verdict is a false claim, even with a true gap)",
    "ppi": "PPI gap between two groups of 1,000 texts, no true gap (labelled rows per group)",
    "power": "Metric fairness: a planted 30-point accuracy gap (power) and no gap (family-wise false gaps)",
}


def tables_text(results: dict[str, list[dict]]) -> str:
    parts = []
    for part in ("gap", "validity", "ppi", "power"):
        if part in results:
            df = pd.DataFrame(results[part])[list(COLUMNS[part])]
            parts.append(f"{TITLES[part]}:\n\n{markdown_table(df)}")
    return "\n\n".join(parts)


def write_doc(text: str, header: str, doc: Path = DOC) -> None:
    """Replace the block between :data:`BEGIN` and :data:`END` of ``doc`` with ``header`` and ``text``."""
    old = doc.read_text(encoding="utf-8")
    if BEGIN not in old or END not in old:
        raise SystemExit(f"{doc} has no calibration block ({BEGIN} ... {END})")
    head, rest = old.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    doc.write_text(f"{head}{BEGIN}\n{header}\n\n{text}\n\n{END}{tail}", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=500, help="simulated sets per cell (default 500)")
    ap.add_argument("--pilot", type=int, default=50, help="sets after which a cell that is all 'not enough data' stops")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="a few cells of each part")
    ap.add_argument("--only", default="gap,validity,ppi,power", help="comma-separated parts: gap, validity, ppi, power")
    ap.add_argument("--write-doc", action="store_true", help="write the tables into docs/statistics.md")
    ap.add_argument("--recheck-doc", action="store_true", help="rerun the FAIL rows of docs/statistics.md's block with more sets")
    ap.add_argument("--redo", action="append", default=[], help="with --recheck-doc: also rerun the rows matching e.g. texts=50,pages=50")
    a = ap.parse_args()
    if a.recheck_doc:
        log(recheck_doc(a.seed + 1, a.reps, a.pilot, redo=tuple(a.redo)))
        return
    t0 = time.process_time()
    results = run_grid(np.random.default_rng(a.seed), a.reps, quick=a.quick, only=set(a.only.split(",")), pilot=a.pilot)
    text = tables_text(results)
    print(text)
    cmd = "python bench/calibration.py " + " ".join(sys.argv[1:])
    header = (
        f"Written by `{cmd.strip()}` on {dt.date.today().isoformat()}: {a.reps} sets per cell (cells whose first {a.pilot} "
        f"sets are all 'not enough data' stop there), seed {a.seed}, {(time.process_time() - t0) / 60:.1f} CPU min."
    )
    log(header)
    if a.write_doc:
        write_doc(text, header)


if __name__ == "__main__":
    main()
