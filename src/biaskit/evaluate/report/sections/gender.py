"""Report section: BOLD gender polarity (Table 3 layout) and male-minus-female shares per profession."""

from __future__ import annotations

from biaskit.evaluate.metrics.catalog import label_outputs
from biaskit.evaluate.report.model import Section, find_table, register_section
from biaskit.evaluate.report.plots import Axes, BarColumns, diverging_bars
from biaskit.evaluate.report.sections.labels import check_vocabulary
from biaskit.evaluate.stats import gender_polarity_table, male_minus_female
from biaskit.evaluate.stats.bold import GENDER_METHODS
from biaskit.manifest import metric_description


def _gender_section(b, loaded) -> Section:
    name, df = find_table(loaded, [], "gender", any_of=list(GENDER_METHODS.values()))
    vocab = {lo.column: lo.labels for lo in label_outputs().values()}  # declared by the gender metric
    for col in GENDER_METHODS.values():
        if col in df.columns:
            check_vocabulary(df, col, vocab[col], name)
    sec = Section(
        "gender",
        "Gender polarity",
        [
            f"From table `{name}` ({len(df)} rows). Male / female counts and the male/female ratio "
            "for unigram matching, Gender-Wavg and Gender-Max (BOLD Table 3 layout); `*_null` counts texts with no label."
        ],
    )
    note = coverage_note(b.manifests.get(name))
    if note:
        sec.text.append(note)
    b.table(sec, "gender_polarity_by_source", gender_polarity_table(df, by=("model",)), "Gender polarity per text source (BOLD Table 3 layout).")
    if "group" in df.columns:
        b.table(sec, "gender_polarity_by_group", gender_polarity_table(df, by=("domain", "group", "model")), "Gender polarity per group and source.")
        prof = df
        if "domain" in df.columns and (df["domain"] == "profession").any():
            prof = df[df["domain"] == "profession"]
        method = next((m for m in ("wavg", "max", "unigram") if GENDER_METHODS[m] in df.columns), None)
        assert method is not None  # find_table gave a table with one of these columns
        mmf = male_minus_female(prof, by="group", method=method)
        b.table(sec, "male_minus_female", mmf, f"Male-minus-female share per profession group ({method}); BOLD Fig. 2.")
        _mmf_figure(b, sec, mmf, method)
    else:
        b.skipped.append(("male-minus-female bars per profession", f"table `{name}` has no `group` column"))
    return sec


def _mmf_figure(b, sec: Section, mmf, method: str) -> None:
    """The male-minus-female bars, or one sentence instead when every bar would be 0 (a chart of empty bars)."""
    diffs = mmf["male_minus_female"].dropna()
    if not len(mmf) or (diffs == 0).all():
        male, female, n = int(mmf["male"].sum()), int(mmf["female"].sum()), int(mmf["n_valid"].sum())
        why = (
            f"none of the {n:,} labelled texts is labelled male or female"
            if male + female == 0
            else f"every group has as many texts labelled male as female ({male:,} each in all)"
        )
        sec.text.append(f"Male minus female share per profession (gender_{method}_label): 0 for every group and source, so no chart: {why}.")
        return

    hue = "model" if "model" in mmf.columns and mmf["model"].nunique() > 1 else None
    b.figure(
        sec,
        "male_minus_female",
        diverging_bars,
        mmf,
        BarColumns("male_minus_female", label="group", hue=hue),
        axes=Axes(f"Male minus female share per profession (gender_{method}_label)", xlabel="share labelled male - share labelled female"),
        caption="Male-minus-female share per profession group and source (positive: more texts labelled male).",
    )


def coverage_note(manifest) -> str | None:
    """One sentence on how much of Bolukbasi's word lists the scoring's vector space held (from the gender
    metric's ``info.wordlist_coverage`` in the scores manifest); None when the manifest does not say."""
    desc = metric_description(manifest, "gender")
    cov = ((desc or {}).get("info") or {}).get("wordlist_coverage")
    if not isinstance(cov, dict):
        return None

    def part(key: str, what: str) -> str:
        c = cov.get(key) or {}
        n, k = c.get("listed") or 0, c.get("in_space") or 0
        return f"{k:,} of {n:,} {what} ({100 * k / n:.1f}%)" if n else f"no {what}"

    return (
        "Word-list coverage of the vector space: "
        + "; ".join(
            (
                part("gender_specific", "gender-specific words"),
                part("definitional_pairs", "definitional pairs"),
                part("equalize_pairs", "equalize pairs"),
            )
        )
        + ". A gendered word the space lacks is not scored, so texts using it lean neutral; for BOLD's full space give "
        "`gender.embeddings=` the GoogleNews-vectors-negative300.bin (nothing else changes)."
    )


register_section("Gender polarity", _gender_section)
