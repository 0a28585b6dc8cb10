"""The headline's verdicts: one line per kind of claim x domain x measure that answers "is there a gap?", and the
same headline as a machine-readable table (``report/tables/headline.csv``).

A finding that is a test of a headline family (:mod:`biaskit.evaluate.stats.families`; ``Finding.family`` set)
gets one of four verdicts:

* ``metric not valid here: <reason>``: the metric the finding rests on failed its validation (accuracy not above
  the majority-class baseline, agreement hardly above chance, a judge whose label follows the option order;
  :mod:`biaskit.evaluate.report.metric_validity`). Such a finding is never evidence, whatever its p;
* ``evidence of a gap``: its corrected p is below alpha and its interval excludes no difference;
* ``no evidence at this size: at n = A / B, gaps under G cannot be seen``: G is the smallest gap from the finding's
  share that groups of the sizes the finding has detect with power 0.8 by a two-sided test at the family's
  Bonferroni alpha (alpha / family size, the first step of Holm): :func:`biaskit.evaluate.stats.power.min_detectable_gap`
  (statsmodels ``NormalIndPower`` on Cohen's h), rounded up to whole percentage points. When G is above the smallest
  gap of interest (``--min-gap``) the sentence says so;
* ``not enough data``: the test is undefined (no variation, an empty group, all texts of a group from one page) or a
  group has fewer than :data:`MIN_TESTABLE` texts; with the reasons where the section gave them.

The verdict line of a (kind, domain, measure) speaks for its **most decisive testable comparison** (the valid,
testable finding with the smallest corrected p; "evidence of a gap" when one is), names the family it belongs to
and lists the comparisons that could not be tested, each with its reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.report.tables import write_table_files
from biaskit.evaluate.stats.power import POWER, min_detectable_gap

#: the default smallest gap of interest (``--min-gap``): 5 percentage points of a share
MIN_GAP = 0.05
#: fewer texts than this in a group: "not enough data"
MIN_TESTABLE = 2
EVIDENCE = "evidence of a gap"
NOT_ENOUGH = "not enough data"
NOT_VALID = "metric not valid here"
#: the columns of ``headline.csv``
CSV_COLUMNS = ("finding", "measure", "where", "comparison", "estimate", "ci_low", "ci_high", "p_holm", "family", "family_size", "n", "verdict")


def check_min_gap(min_gap: float) -> float:
    if not (0.0 < float(min_gap) < 1.0):
        raise BiaskitError(
            "E334", "the smallest gap of interest must be between 0 and 1", value=min_gap, fix="e.g. --min-gap 0.05 (5 percentage points)"
        )
    return float(min_gap)


def _sizes(f) -> tuple[int, int] | None:
    if f.n_sizes:
        return int(f.n_sizes[0]), int(f.n_sizes[1])
    return (int(f.n_min), int(f.n_min)) if f.n_min else None


def detectable_gap(f, alpha: float) -> float | None:
    """The smallest gap from the finding's share its groups can see (power 0.8, the family's Bonferroni alpha)."""
    sizes = _sizes(f)
    if f.base_rate is None or f.base_rate != f.base_rate or sizes is None:
        return None
    return min_detectable_gap(float(f.base_rate), sizes[0], sizes[1], alpha / max(1, int(f.family_size or 1)), power=POWER)


def round_up(x: float) -> float:
    """``x`` rounded up to whole percentage points (two decimals), or to two significant digits below 0.01: a gap
    that cannot be seen is never understated."""
    if x <= 0:
        return 0.0
    if x >= 0.01:
        return math.ceil(round(x * 100, 9)) / 100
    scale = 10 ** (math.floor(math.log10(x)) - 1)
    return math.ceil(round(x / scale, 9)) * scale


def no_evidence_text(f, alpha: float, min_gap: float) -> str:
    gap, sizes = detectable_gap(f, alpha), _sizes(f)
    if gap is None or sizes is None:
        return "no evidence at this size"
    if gap >= 1.0:
        return f"no evidence at this size: at n = {sizes[0]:,} / {sizes[1]:,}, no gap of any size can be seen"
    g = round_up(gap)
    s = f"no evidence at this size: at n = {sizes[0]:,} / {sizes[1]:,}, gaps under {g:.2g} cannot be seen"
    return s + (f", the smallest gap of interest ({min_gap:g}) among them" if g > min_gap else "")


def testable(f) -> bool:
    return f.p is not None and f.p == f.p and not (f.n_min is not None and f.n_min < MIN_TESTABLE)


def finding_verdict(f, alpha: float, min_gap: float) -> str:
    """The verdict of one finding ("" for a finding that is no test of a headline family)."""
    if not f.family:
        return ""
    if f.invalid:
        return f"{NOT_VALID}: {f.invalid}"
    if not testable(f):
        return f"{NOT_ENOUGH}: {'; '.join(f.untestable)}" if f.untestable else NOT_ENOUGH
    if not f.flags:
        return EVIDENCE
    return no_evidence_text(f, alpha, min_gap)


@dataclass
class Verdict:
    """One verdict line: the findings it speaks for (``findings``), its ``verdict`` text and ``title``; ``lead``: the
    most decisive testable finding the verdict is about; ``untestable``: comparisons not tested, with the reason."""

    kind: str
    domain: str
    measure: str
    verdict: str
    findings: list[Any] = field(default_factory=list)
    lead: Any = None
    untestable: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.kind} · {self.measure} · {self.domain}"

    @property
    def family(self) -> str:
        """The family the line's verdict comes from, as the page names it (with its size)."""
        f = self.lead or (self.findings[0] if self.findings else None)
        if f is None:
            return ""
        name = f.family_label or f.family.replace("_", " ")
        return f"{name} ({f.family_size} test{'' if f.family_size == 1 else 's'})" if f.family_size else name


def _most_decisive(findings, alpha: float, min_gap: float):
    """The valid, testable finding that is evidence, else the one with the smallest corrected p (then the largest
    estimate); None when none is valid and testable."""
    ok = [f for f in findings if not f.invalid and testable(f)]
    if not ok:
        return None
    return min(ok, key=lambda f: (finding_verdict(f, alpha, min_gap) != EVIDENCE, f.p, -abs(f.estimate or 0.0)))


def _line_verdict(v: Verdict, alpha: float, min_gap: float) -> str:
    lead = v.lead
    if lead is not None:
        each = finding_verdict(lead, alpha, min_gap)
        which = f"{lead.where}: {lead.comparison}" if lead.where and lead.where != v.domain else lead.comparison
        return each if each == EVIDENCE or not which else f"{each} (most decisive: {which})"
    invalid = [f for f in v.findings if f.invalid]
    if invalid:
        return finding_verdict(invalid[0], alpha, min_gap)
    return f"{NOT_ENOUGH}: {'; '.join(v.untestable)}" if v.untestable else NOT_ENOUGH


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
        v.lead = _most_decisive(v.findings, alpha, min_gap)
        v.untestable = list(dict.fromkeys(u for f in v.findings for u in f.untestable))
        v.verdict = _line_verdict(v, alpha, min_gap)
    return list(lines.values())


#: how the first screen names each kind of family (the metric-fairness family is split in two: accuracy first)
FAMILY_WORDS = {
    "group_gap": "group gap: every pair of groups of one domain and text source, for one measure",
    "model_vs_wikipedia": "model vs Wikipedia: every group x model of one domain, for one measure",
    "metric_fairness": "metric fairness, primary: the accuracy of every pair of groups of one metric; "
    "secondary: every pair x every other rate (miss and false-alarm rates) of that metric",
}


def families_sentence(headline) -> str:
    """The families the headline's verdicts come from, declared and named (one sentence for the first screen)."""
    kinds: dict[str, set[str]] = {}
    for f in headline:
        if f.family:
            kinds.setdefault(f.family, set()).add(f.family_label or f.family)
    if not kinds:
        return ""
    parts = [
        f"{FAMILY_WORDS.get(k, k.replace('_', ' '))} ({len(names)} {'family' if len(names) == 1 else 'families'} here)" for k, names in kinds.items()
    ]
    return "Test families (Holm within each; each verdict names its family): " + "; ".join(parts) + "."


def verdict_extras(v: Verdict) -> tuple[str, str]:
    """(the family a verdict line belongs to, the comparisons it could not test) as text for the page."""
    fam = f"family: {v.family}" if v.family else ""
    lead_untestable = v.untestable if v.lead is not None else []
    return fam, ("not testable: " + "; ".join(lead_untestable)) if lead_untestable else ""


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
                "p_holm": f.p,
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
