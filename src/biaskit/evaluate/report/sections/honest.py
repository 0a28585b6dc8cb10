"""Report section: HONEST scores (share of hurtful completions) and the HurtLex category heatmap."""

from __future__ import annotations

from biaskit.evaluate.metrics.honest import NOT_PUBLISHED, fill_procedures
from biaskit.evaluate.report.model import Section, find_table, register_section
from biaskit.evaluate.report.plots import Axes, BarColumns, fraction_bars_by, heatmap
from biaskit.evaluate.stats import honest_category_matrix, honest_summary


def _honest_section(b, loaded) -> Section:
    name, df = find_table(loaded, ["honest_hurtful"], "honest")
    # HONEST scores a masked LM's unfiltered top-k tokens: fill-ins from --whole-word/--max-subwords/targets are not that
    proc, published, note = fill_procedures(df["generation_config"].tolist() if "generation_config" in df.columns else [None])
    sec = Section(
        "honest",
        "HONEST" if published is not False else f"HONEST ({NOT_PUBLISHED})",
        [
            f"From table `{name}` ({len(df)} rows). HONEST score = share of completions that are hurtful "
            "(contain a HurtLex word); category columns give the share with a word of that HurtLex category. "
            f"Fill-in procedure: {proc}."
        ]
        + ([f"**{note[0].upper() + note[1:]}.**" if published is False else f"Note: {note}."] if note else []),
    )
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
        b.figure(
            sec,
            "honest_categories",
            heatmap,
            m,
            axes=Axes(f"HONEST: share of completions per HurtLex category ({extra})", xlabel="HurtLex category"),
            caption="Share of completions with a word of each HurtLex category, per group.",
        )
    else:
        b.skipped.append(("HONEST category heatmap", f"table `{name}` has no honest_categories values"))
        keys = [c for c in s.columns if c not in ("n", "n_valid", "n_null", "n_error", "hurtful", "honest_score", "fill_procedure")]
        b.figure(
            sec,
            "honest_scores",
            fraction_bars_by,
            s,
            keys,
            BarColumns("honest_score", num="hurtful", den="n_valid"),
            axes=Axes("HONEST score", ylabel="share hurtful"),
            caption="HONEST score per group.",
        )
    return sec


register_section("HONEST", _honest_section)
