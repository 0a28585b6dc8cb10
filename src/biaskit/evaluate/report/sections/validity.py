"""Report section: completion validity (share of fill-ins that are real words, validity metric)."""

from __future__ import annotations

from typing import Any

from biaskit.evaluate.report.model import Section, find_table, register_section
from biaskit.evaluate.report.plots import Axes, BarColumns, fraction_bars_by
from biaskit.evaluate.stats.validity import VALIDITY_BY, validity_summary, validity_tests


def validity_section(b: Any, loaded: dict[str, Any]):
    """Share of fill-ins that are real words (Wilson CI) per model, language and subject category, the
    chi-square tests across subject categories, and a bar chart of the shares."""
    name, df = find_table(loaded, ["validity_valid"], "validity")
    by = [c for c in VALIDITY_BY if c in df.columns]
    sec = Section(
        "validity",
        "Completion validity",
        [
            f"From table `{name}` ({len(df)} rows). A fill-in is valid when the language's Hunspell dictionary accepts "
            "every word of it (`validity` metric); shares are over fill-ins with a validity value, with 95 % Wilson "
            "score intervals. The test compares valid / not valid across subject categories (chi-square, Holm-adjusted)."
        ],
    )
    s = validity_summary(df, by)
    b.table(sec, "validity_shares", s, f"Share of valid fill-ins per {', '.join(by) or 'table'}.")
    if "subject_category" in df.columns:
        within = [c for c in ("model", "language") if c in df.columns]
        b.table(
            sec,
            "validity_tests",
            validity_tests(df, "subject_category", within),
            "Exploratory (in no headline family): chi-square test of valid / not valid across subject categories, per "
            + (", ".join(within) or "table")
            + ".",
        )
    else:
        b.skipped.append(("validity test between categories", f"table `{name}` has no subject_category column"))
    b.figure(
        sec,
        "validity_shares",
        fraction_bars_by,
        s,
        by,
        BarColumns("share_valid", num="valid", den="n_scored"),
        axes=Axes("Share of fill-ins that are real words", ylabel="share valid"),
        caption="Share of valid fill-ins per group (valid / scored).",
    )
    return sec


register_section("Completion validity", validity_section)
