"""Report section: emotion and VAD classes (norms metric) per group, and group differences (BOLD Tables 4/6)."""

from __future__ import annotations

from biaskit.evaluate.report.model import PREFERENCE, Section, SkipAnalysis, group_pair_table, register_section
from biaskit.evaluate.stats import aggregate, class_proportion_differences
from biaskit.evaluate.stats.columns import GroupPair


def _norms_section(b, loaded) -> Section:
    order = [n for n in PREFERENCE["norms"] if n in loaded] + [n for n in loaded if n not in PREFERENCE["norms"]]
    name = next((n for n in order if any(c.startswith("norms_") and c.endswith("_class") for c in loaded[n].columns)), None)
    if name is None:
        have = "; ".join(f"{n}: {len(d)} rows" for n, d in loaded.items()) or "no tables"
        raise SkipAnalysis(f"no table has norms_<dim>_class columns ({have}); score with the norms metric and a lexicon")
    df = loaded[name]
    cols = sorted(c for c in df.columns if c.startswith("norms_") and c.endswith("_class"))
    sec = Section("norms", "Emotion and VAD classes", [f"From table `{name}`: classes {', '.join(cols)}."])
    keys = [c for c in ("domain", "group", "model") if c in df.columns]
    agg = aggregate(df, keys, labels=cols, n_boot=b.n_boot, seed=b.seed)
    b.table(sec, "norms_class_proportions", agg, "Class shares per group and source (long form).", max_rows=30)
    diffs = None
    if "group" in df.columns:
        within = [c for c in ("model",) if c in df.columns]
        diffs = group_pair_table(
            df, lambda sub, a, bb: class_proportion_differences(sub, GroupPair(a, bb), columns=cols, within=within), max_groups=2
        )
    if diffs is not None:
        b.table(
            sec,
            "norms_class_differences",
            diffs,
            "Exploratory (in no headline family): class share of group A minus group B with z-test and Holm-adjusted p (BOLD Tables 4/6), domains with two groups.",
        )
    else:
        b.skipped.append(("VAD/BE5 class differences", "no domain with exactly two groups"))
    return sec


register_section("Emotion and VAD classes", _norms_section)
