"""Demo stage 'templates': a small HolisticBias expansion and the cs/pl/sk gendered starter templates.

Writes ``prompts_holistic.parquet`` (a seeded descriptor subset over two templates and three nouns, for
the likelihood stage: ~250 sentences, ~60 with ``ctx.quick``) and ``prompts_slavic.parquet`` (the cs, pl
and sk starter sets, 12 templates x 8 subjects each, masked, for the fill-mask stage).
"""

from __future__ import annotations

from biaskit.io import write_table
from biaskit.manifest import new_manifest
from biaskit.templates.gendered import expand_template_sets, starter_set
from biaskit.templates.holistic import expand_holistic

HB_VERSION = "v1.0"
HB_TEMPLATES = ("I'm {noun_phrase}.", "I love being {noun_phrase}.")
HB_NOUNS = ("woman", "man", "person")
SLAVIC = ("cs", "pl", "sk")


def run(ctx) -> None:
    n_desc = 10 if ctx.quick else 40
    options = dict(templates=list(HB_TEMPLATES), nouns=list(HB_NOUNS), noun_phrase_types=["noun", "descriptor_noun"],
                   n_descriptors=n_desc, seed=ctx.seed)
    hb, stats = expand_holistic(HB_VERSION, **options)
    hb_path = ctx.run_dir / "prompts_holistic.parquet"
    write_table(hb, hb_path, stage="prompts", manifest=new_manifest(
        "biaskit demo (templates: holistic)", stage="prompts", seed=ctx.seed,
        config={"version": HB_VERSION, **options}, extra={"expansion": stats.as_dict()}))
    ctx.add("prompts_holistic", hb_path)

    sets = [starter_set(lang) for lang in SLAVIC]
    sl, sl_stats = expand_template_sets(sets)
    sl_path = ctx.run_dir / "prompts_slavic.parquet"
    write_table(sl, sl_path, stage="prompts", manifest=new_manifest(
        "biaskit demo (templates: slavic)", stage="prompts", inputs=[s.path for s in sets],
        config={"languages": list(SLAVIC)}, extra={"expansion": sl_stats.as_dict()}))
    ctx.add("prompts_slavic", sl_path)

    ctx.info["templates"] = {
        "holistic": {"version": HB_VERSION, "rows": hb.num_rows, "descriptors": stats.descriptors_selected,
                     "filters": stats.filters, "templates": list(HB_TEMPLATES), "nouns": list(HB_NOUNS)},
        "slavic": {"languages": list(SLAVIC), "rows": sl.num_rows, "templates_per_language": len(sets[0].templates),
                   "subjects_per_language": len(sets[0].subjects), "validated_by_native_speakers": False,
                   "mask": "<mask>"},
    }
    ctx.note("templates", f"HolisticBias {HB_VERSION}: {hb.num_rows} sentences ({n_desc} seeded descriptors x {len(HB_NOUNS)} nouns "
                          f"x {len(HB_TEMPLATES)} templates + controls); cs/pl/sk gendered templates: {sl.num_rows} masked prompts "
                          f"(starter sets, not yet validated by native speakers)")
