"""Demo stage 'templates': a small HolisticBias expansion and the cs/pl/sk gendered starter templates.

Writes ``prompts_holistic.parquet`` (for the likelihood stage and its Likelihood Bias test: 4 seeded
descriptors from each of two axes, one template, every noun, so that each descriptor has ~30 sentences and
the Mann-Whitney test between two descriptors can reach p < 0.05: ~270 sentences; ``ctx.quick``: 3
descriptors per axis and 10 nouns, ~70) and ``prompts_slavic.parquet`` (the cs, pl
and sk starter sets, 12 templates x 8 subjects each, masked, for the fill-mask stage).
"""

from __future__ import annotations

import random

from biaskit.io import write_table
from biaskit.manifest import new_manifest
from biaskit.templates.gendered import expand_template_sets, starter_set
from biaskit.templates.holistic import expand_holistic

HB_VERSION = "v1.0"
HB_TEMPLATES = ("I love being {noun_phrase}.",)
HB_AXES = ("age", "religion")
QUICK_NOUNS = ("woman", "man", "person", "girl", "boy", "kid", "mother", "father", "parent", "sibling")
SLAVIC = ("cs", "pl", "sk")


def demo_descriptors(per_axis: int, seed: int) -> list[str]:
    """``per_axis`` seeded descriptors of each demo axis (those that combine with a neutral noun)."""
    rng = random.Random(seed)
    chosen: list[str] = []
    for axis in HB_AXES:
        t, _ = expand_holistic(HB_VERSION, axes=[axis], nouns=["person"], noun_phrase_types=["descriptor_noun"], templates=list(HB_TEMPLATES))
        pool = sorted(set(t.column("descriptor").to_pylist()))
        chosen += rng.sample(pool, min(per_axis, len(pool)))
    return chosen


def run(ctx) -> None:
    per_axis = 3 if ctx.quick else 4
    descriptors = demo_descriptors(per_axis, ctx.seed)
    nouns = list(QUICK_NOUNS) if ctx.quick else None
    options = dict(templates=list(HB_TEMPLATES), nouns=nouns, noun_phrase_types=["noun", "descriptor_noun"], descriptors=descriptors, seed=ctx.seed)
    hb, stats = expand_holistic(HB_VERSION, **options)
    hb_path = ctx.run_dir / "prompts_holistic.parquet"
    write_table(
        hb,
        hb_path,
        stage="prompts",
        manifest=new_manifest(
            "biaskit demo (templates: holistic)",
            stage="prompts",
            seed=ctx.seed,
            config={"version": HB_VERSION, **options},
            extra={"expansion": stats.as_dict()},
        ),
    )
    ctx.add("prompts_holistic", hb_path)

    sets = [starter_set(lang) for lang in SLAVIC]
    sl, sl_stats = expand_template_sets(sets)
    sl_path = ctx.run_dir / "prompts_slavic.parquet"
    write_table(
        sl,
        sl_path,
        stage="prompts",
        manifest=new_manifest(
            "biaskit demo (templates: slavic)",
            stage="prompts",
            inputs=[s.path for s in sets],
            config={"languages": list(SLAVIC)},
            extra={"expansion": sl_stats.as_dict()},
        ),
    )
    ctx.add("prompts_slavic", sl_path)

    ctx.info["templates"] = {
        "holistic": {
            "version": HB_VERSION,
            "rows": hb.num_rows,
            "axes": list(HB_AXES),
            "descriptors": descriptors,
            "filters": stats.filters,
            "templates": list(HB_TEMPLATES),
            "nouns": nouns or "all",
        },
        "slavic": {
            "languages": list(SLAVIC),
            "rows": sl.num_rows,
            "templates_per_language": len(sets[0].templates),
            "subjects_per_language": len(sets[0].subjects),
            "validated_by_native_speakers": False,
            "mask": "<mask>",
        },
    }
    n_nouns = len(nouns) if nouns else "all"
    ctx.note(
        "templates",
        f"HolisticBias {HB_VERSION}: {hb.num_rows} sentences ({len(descriptors)} seeded descriptors of "
        f"{', '.join(HB_AXES)} x {n_nouns} nouns x {len(HB_TEMPLATES)} template + controls); cs/pl/sk gendered templates: {sl.num_rows} masked prompts "
        f"(starter sets, not yet validated by native speakers)",
    )
