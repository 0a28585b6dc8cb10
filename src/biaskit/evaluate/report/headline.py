"""The headline's verdicts: one line per kind of claim x domain x measure that answers "is there a gap?", and the
same headline as a machine-readable table (``report/tables/headline.csv``).

A finding that is a test of a headline family (:mod:`biaskit.evaluate.stats.families`; ``Finding.family`` set)
gets one of three verdicts:

* ``evidence of a gap``: its corrected p is below alpha and its interval excludes no difference;
* ``no evidence at this size: detecting a gap of D needs about N texts per group``: D is the smallest gap of
  interest (``--min-gap``, default :data:`MIN_GAP` = 0.05) and N the texts per group at which a gap of D from the
  finding's share is found with power 0.8 by a two-sided test at the family's Bonferroni alpha (alpha / family
  size, the first step of Holm): :func:`biaskit.evaluate.stats.inference.n_per_group_for_gap` (statsmodels
  ``NormalIndPower`` with Cohen's h);
* ``not enough data``: the test is undefined (no variation, an empty group) or a group has fewer than
  :data:`MIN_TESTABLE` texts.

The verdict line of a (kind, domain, measure) is "evidence of a gap" when one of its findings is, "not enough
data" when all are, and otherwise "no evidence at this size" with the largest N of its findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.report.tables import write_table_files
from biaskit.evaluate.stats.inference import n_per_group_for_gap

#: the default smallest gap of interest (``--min-gap``): 5 percentage points of a share
MIN_GAP = 0.05
#: fewer texts than this in a group: "not enough data"
MIN_TESTABLE = 2
#: the power the "no evidence at this size" sentence plans for
POWER = 0.8
EVIDENCE = "evidence of a gap"
NOT_ENOUGH = "not enough data"
#: the columns of ``headline.csv``
CSV_COLUMNS = ("finding", "measure", "where", "comparison", "estimate", "ci_low", "ci_high", "p_corrected", "family", "family_size", "n", "verdict")


def check_min_gap(min_gap: float) -> float:
    if not (0.0 < float(min_gap) < 1.0):
        raise BiaskitError(
            "E334", "the smallest gap of interest must be between 0 and 1", value=min_gap, fix="e.g. --min-gap 0.05 (5 percentage points)"
        )
    return float(min_gap)


def needed_per_group(f, alpha: float, min_gap: float) -> int | None:
    """Texts per group to detect a gap of ``min_gap`` from the finding's share at its family's Bonferroni alpha."""
    if f.base_rate is None or f.base_rate != f.base_rate:
        return None
    return n_per_group_for_gap(float(f.base_rate), min_gap, alpha / max(1, int(f.family_size or 1)), power=POWER)


def no_evidence_text(n_needed: int | None, min_gap: float) -> str:
    if n_needed is None:
        return "no evidence at this size"
    return f"no evidence at this size: detecting a gap of {min_gap:g} needs about {n_needed:,} texts per group"


def finding_verdict(f, alpha: float, min_gap: float) -> str:
    """The verdict of one finding ("" for a finding that is no test of a headline family)."""
    if not f.family:
        return ""
    if f.p is None or f.p != f.p or (f.n_min is not None and f.n_min < MIN_TESTABLE):
        return NOT_ENOUGH
    if not f.flags:
        return EVIDENCE
    return no_evidence_text(needed_per_group(f, alpha, min_gap), min_gap)


@dataclass
class Verdict:
    """One verdict line: the findings it speaks for (``findings``), its ``verdict`` text and ``title``."""

    kind: str
    domain: str
    measure: str
    verdict: str
    findings: list[Any] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.kind} · {self.measure} · {self.domain}"


def verdicts(headline, alpha: float = 0.05, min_gap: float = MIN_GAP) -> list[Verdict]:
    """The verdict lines of the headline's family findings, in the order their first finding appears."""
    min_gap = check_min_gap(min_gap)
    lines: dict[tuple[str, str, str], Verdict] = {}
    for f in headline:
        if not f.family:
            continue
        key = (f.kind, f.domain or f.where, f.metric)
        lines.setdefault(key, Verdict(*key, "")).findings.append(f)
    for v in lines.values():
        each = [finding_verdict(f, alpha, min_gap) for f in v.findings]
        if EVIDENCE in each:
            v.verdict = EVIDENCE
        elif all(x == NOT_ENOUGH for x in each):
            v.verdict = NOT_ENOUGH
        else:
            needed = [needed_per_group(f, alpha, min_gap) for f in v.findings if finding_verdict(f, alpha, min_gap) != NOT_ENOUGH]
            ns = [n for n in needed if n is not None]
            v.verdict = no_evidence_text(max(ns) if ns else None, min_gap)
    return list(lines.values())


def headline_frame(headline, alpha: float = 0.05, min_gap: float = MIN_GAP):
    """The headline as a table with :data:`CSV_COLUMNS` (one row per finding; ``verdict`` is the finding's own)."""
    import pandas as pd

    rows = []
    for f in headline:
        ci = f.ci or (None, None)
        rows.append(
            {
                "finding": f.kind,
                "measure": f.metric,
                "where": f.where,
                "comparison": f.comparison or (f.text if not f.family else ""),
                "estimate": f.estimate,
                "ci_low": ci[0],
                "ci_high": ci[1],
                "p_corrected": f.p,
                "family": f.family,
                "family_size": f.family_size,
                "n": f.n,
                "verdict": finding_verdict(f, alpha, min_gap),
            }
        )
    return pd.DataFrame(rows, columns=list(CSV_COLUMNS))


def write_headline_csv(headline, out_dir: Path, alpha: float = 0.05, min_gap: float = MIN_GAP) -> Path:
    """Write ``tables/headline.csv`` (and its ``.md``) into the report folder; returns the CSV's path."""
    return write_table_files(headline_frame(headline, alpha, min_gap), Path(out_dir) / "tables", "headline")["csv"]
