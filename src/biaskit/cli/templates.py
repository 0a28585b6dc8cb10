"""CLI: ``expand holistic``, ``expand bbq``, ``expand bbq-choices``, ``expand templates``, ``expand honest``,
``templates export-sheet``, ``templates import-sheet``, ``templates validate``, ``templates show``,
``templates counterfactual``, ``templates audit-pairs``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from biaskit.cli import sub_app
from biaskit.errors import BiaskitError
from biaskit.evaluate.report.tables import markdown_table
from biaskit.io import read_table, write_table
from biaskit.manifest import new_manifest
from biaskit.output import write_frame_csv
from biaskit.registry import is_path_spec
from biaskit.spreadsheet import neutralize_frame
from biaskit.templates.bbq import write_expansion
from biaskit.templates.bbq_choice import write_choice_prompts
from biaskit.templates.bbq_sheet import bbq_sheet_rows, import_bbq_sheet
from biaskit.templates.counterfactual_swap import write_counterfactual
from biaskit.templates.files import load_file
from biaskit.templates.gendered import STARTER_LANGUAGES, USABLE_STATUSES, expand_template_sets, load_template_set, render, starter_set
from biaskit.templates.holistic_data import VARIANTS, load_holistic, validate_file
from biaskit.templates.honest import honest_path, import_honest
from biaskit.templates.pair_audit import audit_pairs
from biaskit.templates.sheet import CommandTranslator, import_sheet, machine_translate, save_template_set, sheet_rows, write_sheet


def _split(values: list[str] | None) -> list[str] | None:
    """Repeated options and comma-separated values both work: --axis ability --axis age == --axis ability,age."""
    if not values:
        return None
    out: list[str] = []
    for v in values:
        out += [x.strip() for x in v.split(",") if x.strip()] if "," in v and "{" not in v else [v]
    return out


def _resolve_set(spec: str):
    """A template-set file, or the name of a bundled starter set (en, cs, pl, sk)."""
    if is_path_spec(spec) or (spec not in STARTER_LANGUAGES and Path(spec).is_file()):
        return load_template_set(spec)  # a shipped language name is never shadowed by a local file/folder of that name
    return starter_set(spec)  # a bare language code: the bundled starter set (clear error if there is none)


def expand_holistic_cmd(
    out: Path = typer.Option(..., "--out", "-o", help="Prompts table to write (.parquet streams in row groups; .jsonl, .csv)."),
    version: str = typer.Option(
        "v1.0", "--version", help="Bundled HolisticBias version (v1.0, v1.1), a folder with the four dataset files, or `none` (only your files)."
    ),
    descriptors_file: list[Path] | None = typer.Option(
        None, "--descriptors-file", help="Extra descriptors (JSON/YAML, same layout as descriptors.json); repeatable."
    ),
    nouns_file: list[Path] | None = typer.Option(None, "--nouns-file", help="Extra nouns (same layout as nouns.json); repeatable."),
    noun_phrases_file: list[Path] | None = typer.Option(None, "--noun-phrases-file", help="Extra standalone noun phrases; repeatable."),
    templates_file: list[Path] | None = typer.Option(None, "--templates-file", help="Extra sentence templates; repeatable."),
    axis: list[str] | None = typer.Option(None, "--axis", help="Keep these axes (repeat or comma-separate)."),
    bucket: list[str] | None = typer.Option(None, "--bucket", help="Keep these buckets."),
    preference: list[str] | None = typer.Option(None, "--preference", help="Keep these preferences: reviewed, dispreferred, polarizing, no_data."),
    noun_gender: list[str] | None = typer.Option(None, "--noun-gender", help="Keep these noun genders: female, male, neutral."),
    noun: list[str] | None = typer.Option(None, "--noun", help="Keep these nouns (singular: woman, man, person, ...)."),
    noun_phrase_type: list[str] | None = typer.Option(
        None, "--noun-phrase-type", help="noun, descriptor, descriptor_noun, noun_descriptor, fixed_phrase."
    ),
    template: list[str] | None = typer.Option(None, "--template", help="Keep these templates (exact text or hbt- id); repeatable."),
    descriptor: list[str] | None = typer.Option(None, "--descriptor", help="Keep these descriptors (exact values)."),
    n_descriptors: int | None = typer.Option(None, "--n-descriptors", help="Seeded random subset of N descriptors (HolisticBias's small set: 100)."),
    no_controls: bool = typer.Option(
        False, "--no-controls", help="Drop the descriptor-less noun phrases ('a woman') that are otherwise kept as controls."
    ),
    no_first_turn: bool = typer.Option(False, "--no-first-turn", help="Drop templates flagged first_turn_only ('Hi! I'm ...')."),
    variants: str = typer.Option(
        "none", "--variants", help="Stylistic variants: none, all (every combination that changes the text), sample (seeded, p=0.5 each)."
    ),
    variant: list[str] | None = typer.Option(
        None,
        "--variant",
        help="Which variants (default all four): remove_im_contraction, remove_descriptor_hyphens, lowercase_descriptor, remove_final_period.",
    ),
    dedupe: bool = typer.Option(False, "--dedupe", help="Keep the first row of each text; duplicates_merged counts the rest."),
    seed: int = typer.Option(0, "--seed", help="Seed for --n-descriptors and --variants sample."),
) -> None:
    """Expand HolisticBias (descriptor x noun x template) into a prompts table.

    Example: biaskit expand holistic --version v1.0 --out prompts_hb.parquet

    Example: biaskit expand holistic --version v1.1 --axis ability,age --noun-gender female --out hb_small.parquet

    Example: biaskit expand holistic --n-descriptors 100 --seed 0 --variants sample --dedupe --out hb_small_set.parquet
    """
    from biaskit.templates.holistic import write_holistic

    data = load_holistic(
        version, descriptors=descriptors_file or (), nouns=nouns_file or (), noun_phrases=noun_phrases_file or (), templates=templates_file or ()
    )
    options: dict[str, Any] = dict(
        axes=_split(axis),
        buckets=_split(bucket),
        preferences=_split(preference),
        noun_genders=_split(noun_gender),
        nouns=_split(noun),
        noun_phrase_types=_split(noun_phrase_type),
        templates=template or None,
        descriptors=descriptor or None,
        n_descriptors=n_descriptors,
        keep_nouns=not no_controls,
        first_turn=not no_first_turn,
        variants=variants,
        variant_names=_split(variant) or VARIANTS,
        seed=seed,
    )
    manifest = new_manifest(
        "biaskit expand holistic",
        stage="prompts",
        seed=seed,
        inputs=data.sources,
        config={"version": version, "dedupe": dedupe, **{k: v for k, v in options.items() if v is not None}},
    )
    stats = write_holistic(out, data, dedupe=dedupe, manifest=manifest, **options)
    extra = f", {stats.merged_duplicates} duplicate texts merged" if dedupe else ""
    typer.echo(
        f"wrote {out}: {stats.rows} prompts from {stats.noun_phrases} noun phrases x {stats.templates} templates (HolisticBias {data.version}{extra})"
    )
    if stats.variant_rows_skipped_as_no_op:
        typer.echo(f"{stats.variant_rows_skipped_as_no_op} variant combinations not emitted (they would not change the text)")


def expand_bbq_cmd(
    templates_dir: Path | None = typer.Argument(None, help="BBQ's templates/ folder (default: the bundled copy, nyu-mll/BBQ @ bea11bd)."),
    out: Path = typer.Option(..., "--out", "-o", help="Examples table to write (.parquet, .jsonl, .csv)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the draws (names, words, unknown phrasings, option order)."),
    categories: list[str] | None = typer.Option(None, "--categories", help="Keep these categories (repeat or comma-separate; default all 11)."),
    strict: bool = typer.Option(False, "--strict", help="Refuse the lists BBQ's generator reads only in part (by default read as it reads them)."),
) -> None:
    """Rebuild BBQ (Parrish et al. 2022) from its templates: 4 examples per filled pair, counts as published.

    Example: biaskit expand bbq --out bbq.parquet

    Example: biaskit expand bbq --categories Age,Religion --seed 1 --out bbq_small.jsonl

    Example: biaskit expand bbq my_bbq_templates/ --strict --out bbq_mine.parquet
    """
    table, data = write_expansion(out, templates_dir, seed=seed, categories=_split(categories), strict=strict)
    for note in data.notes:
        typer.echo(f"note: {note}")
    typer.echo(f"wrote {out}: {table.num_rows} BBQ examples in {len(data.templates)} categories (seed {seed})")


def expand_bbq_choices_cmd(
    examples: Path = typer.Argument(..., help="BBQ examples (expand bbq or hub load)."),
    out: Path = typer.Option(..., "--out", "-o", help="Prompts table to write: 4 rows per example (3 options, 1 base row)."),
) -> None:
    """BBQ as multiple choice by likelihood: prompts rows to score with `biaskit likelihood --span-column answer_span`.

    Example: biaskit expand bbq-choices bbq.parquet --out bbq_choices.parquet && biaskit likelihood bbq_choices.parquet --model smollm2-135m --span-column answer_span --out bbq_ll.parquet

    Example: biaskit expand bbq-choices bbq_age.parquet --out age_choices.jsonl
    """
    table = write_choice_prompts(examples, out)
    typer.echo(f"wrote {out}: {table.num_rows} prompts rows ({table.num_rows // 4} examples x 3 options + 1 base row)")


def expand_templates_cmd(
    files: list[str] = typer.Argument(..., help="Template-set files (YAML/JSON), or bundled starter sets by language: en, cs, pl, sk."),
    out: Path = typer.Option(..., "--out", "-o", help="Prompts table to write (.parquet, .jsonl, .csv)."),
    lang: list[str] | None = typer.Option(None, "--lang", help="Only the sets of these languages."),
    status: list[str] | None = typer.Option(None, "--status", help="Use templates with these statuses (default: source, translated, validated)."),
    subject_category: list[str] | None = typer.Option(None, "--subject-category", help="male, female, neutral, non-binary."),
    category: list[str] | None = typer.Option(None, "--category", help="Template categories: attributes, work, perceived_role, preferences."),
    number: str | None = typer.Option(None, "--number", help="Only singular (sg) or plural (pl) subjects."),
) -> None:
    """Expand gendered fill-mask templates (one row per template x subject, text with <mask>).

    Example: biaskit expand templates cs pl sk --out prompts_slavic.parquet

    Example: biaskit expand templates my_cs.yaml --lang cs --status validated --out cs_validated.parquet
    """
    sets = [_resolve_set(f) for f in files]
    langs = _split(lang)
    if langs:
        sets = [s for s in sets if s.language in langs]
        if not sets:
            raise BiaskitError(
                "E005",
                "no template set has the requested language",
                value=langs,
                fix="check the language codes of the files (language: in each file)",
            )
    table, stats = expand_template_sets(
        sets,
        statuses=_split(status) or USABLE_STATUSES,
        subject_categories=_split(subject_category),
        template_categories=_split(category),
        numbers=[number] if number else None,
    )
    if table.num_rows == 0:
        raise BiaskitError("E005", "nothing to expand", value=stats.as_dict(), fix="check --status/--category filters and template statuses")
    manifest = new_manifest(
        "biaskit expand templates",
        stage="prompts",
        inputs=[s.path for s in sets],
        config={"files": files, "status": _split(status) or list(USABLE_STATUSES)},
        extra={"expansion": stats.as_dict()},
    )
    write_table(table, out, stage="prompts", manifest=manifest)
    typer.echo(f"wrote {out}: {stats.rows} prompts from {stats.templates_used} templates ({', '.join(stats.languages)})")
    for st, n in sorted(stats.skipped_by_status.items()):
        typer.echo(f"skipped {n} template(s) with status {st!r} (use --status {st} to include them)")


def expand_honest_cmd(
    out: Path = typer.Option(..., "--out", "-o", help="Prompts table to write."),
    lang: str = typer.Option("en", "--lang", help="Bundled HONEST language: en, es, fr, it, pt, ro (queer_nonqueer: en)."),
    kind: str = typer.Option("binary", "--kind", help="binary or queer_nonqueer."),
    file: Path | None = typer.Option(None, "--file", help="Your own HONEST-format TSV instead of the bundled one."),
) -> None:
    """Import HONEST templates (every row, also those sharing a text) as a masked prompts table.

    Example: biaskit expand honest --lang en --out honest_en.parquet

    Example: biaskit expand honest --kind queer_nonqueer --lang en --out honest_queer.parquet
    """
    src = file or honest_path(lang, kind)
    table = import_honest(src, language=lang, kind=kind)
    write_table(
        table,
        out,
        stage="prompts",
        manifest=new_manifest("biaskit expand honest", stage="prompts", inputs=[src], config={"lang": lang, "kind": kind}),
    )
    typer.echo(f"wrote {out}: {table.num_rows} HONEST prompts ({lang}, {kind})")


def validate_cmd(
    files: list[str] = typer.Argument(..., help="Template-set files (YAML/JSON), bundled languages (en, cs, pl, sk), or HolisticBias-layout files."),
    kind: str = typer.Option(
        "auto",
        "--kind",
        help="auto (by content), set (gendered template set), or a HolisticBias file kind: descriptors, nouns, noun_phrases, templates.",
    ),
) -> None:
    """Check template files: gendered sets (one mask, known slots, cases and agreement forms for every
    subject) and HolisticBias extension files (placeholders, empty/duplicate entries, stray whitespace).

    Example: biaskit templates validate cs pl sk

    Example: biaskit templates validate my_templates_cs.yaml my_descriptors.yaml
    """
    for f in files:
        is_set = kind == "set"
        if kind == "auto":
            is_set = not Path(f).is_file() or (isinstance(obj := load_file(f), dict) and "subjects" in obj and "templates" in obj)
        if is_set:
            s = _resolve_set(f)
            typer.echo(f"ok: {s.path} ({s.language}: {len(s.templates)} templates x {len(s.subjects)} subjects)")
        else:
            k = validate_file(f, None if kind == "auto" else kind)
            typer.echo(f"ok: {f} (HolisticBias {k} file)")


def show_cmd(
    file: str = typer.Argument(..., help="Template-set file or bundled language (en, cs, pl, sk)."),
    template_id: str | None = typer.Option(None, "--id", help="Only this template."),
) -> None:
    """Print every sentence a template set expands to (to check agreement by eye).

    Example: biaskit templates show cs --id work-02
    """
    s = _resolve_set(file)
    for t in s.templates:
        if template_id and t.id != template_id:
            continue
        typer.echo(f"{t.id} [{t.category}, {t.status}] {t.text}")
        for sub in s.subjects:
            if t.subjects is None or sub.id in t.subjects:
                typer.echo(f"  {sub.id:<14} {render(t.text, sub)}")


def export_sheet_cmd(
    out: Path = typer.Option(..., "--out", "-o", help="Sheet to write: .xlsx (with a README tab) or .csv."),
    source: str = typer.Option("en", "--source", help="Source template set (file or bundled language)."),
    target: list[str] = typer.Option(
        ..., "--target", help="Target languages or template-set files (existing translations pre-fill the sheet); repeatable."
    ),
    bbq: str | None = typer.Option(
        None, "--bbq", help="Export BBQ's templates instead (a BBQ templates/ folder, or `bundled`): one row per translatable cell."
    ),
    mt_command: str | None = typer.Option(
        None,
        "--mt-command",
        help="Machine-translate empty cells with this command (stdin lines -> stdout lines; {source}/{target} are replaced). Output gets status 'machine' and is not used until reviewed.",
    ),
) -> None:
    """Export source templates to a translation sheet: one row per template, one column per language.

    Example: biaskit templates export-sheet --source en --target cs --target pl --target sk --out sheet.xlsx

    Example: biaskit templates export-sheet --target uk --out sheet_uk.csv

    Example (BBQ's templates, for a Czech BBQ): biaskit templates export-sheet --bbq bundled --target cs --out bbq_sheet.csv
    """
    if bbq is not None:  # BBQ's templates: the targets are language codes
        rows, langs = bbq_sheet_rows(None if bbq == "bundled" else bbq), list(target)
        for r in rows:
            r.update({f"{lang}{suffix}": "" for lang in langs for suffix in ("", "_status", "_translator", "_validator", "_notes")})
        src_language = "en"
    else:
        src = _resolve_set(source)
        targets = [_resolve_set(t) if (t in STARTER_LANGUAGES or Path(t).is_file()) else t for t in target]
        rows, langs = sheet_rows(src, targets)
        src_language = src.language
    if mt_command:
        tr = CommandTranslator(mt_command)
        for lang in langs:
            n = machine_translate(rows, lang, tr, source_language=src_language)
            typer.echo(f"machine-translated {n} {lang} cell(s) (status 'machine')")
    write_sheet(rows, langs, out)
    typer.echo(f"wrote {out}: {len(rows)} templates, languages {', '.join(langs)}")


def import_sheet_cmd(
    sheet: Path = typer.Argument(..., help="Filled sheet (.xlsx or .csv) from export-sheet."),
    lang: str = typer.Option(..., "--lang", help="Language column to import."),
    out: Path = typer.Option(..., "--out", "-o", help="Template-set file to write (.yaml or .json)."),
    base: str | None = typer.Option(None, "--base", help="Template set giving the subjects of the language (default: the bundled starter set)."),
    bbq: str | None = typer.Option(
        None, "--bbq", help="A sheet of BBQ's templates: the folder it was exported from (or `bundled`); --out is then a templates folder."
    ),
    overwrite: bool = typer.Option(False, "--overwrite", help="--bbq: write into an existing --out folder (your files are kept)."),
) -> None:
    """Import one language of a filled sheet into a template-set file, validating every translation.

    Example: biaskit templates import-sheet sheet.xlsx --lang cs --out templates_cs.yaml

    Example: biaskit templates import-sheet sheet_uk.csv --lang uk --base my_uk_subjects.yaml --out templates_uk.yaml

    Example (a Czech BBQ, then built): biaskit templates import-sheet bbq_sheet.csv --lang cs --bbq bundled --out bbq_cs/ && biaskit expand bbq bbq_cs/ --out bbq_cs.parquet
    """
    if bbq is not None:
        n = import_bbq_sheet(sheet, lang, out, None if bbq == "bundled" else bbq, overwrite=overwrite)
        typer.echo(f"wrote {out}: BBQ templates with {n['used']} {lang} cells (status translated/validated; other cells keep the source)")
        return

    ts, counts = import_sheet(sheet, lang, _resolve_set(base or lang))
    save_template_set(ts, out)
    extra = ", ".join(f"{k} {v}" for k, v in counts.items() if k not in ("imported", "empty"))
    typer.echo(f"wrote {out}: {counts['imported']} {lang} templates ({extra}); {counts['empty']} rows without a translation")


def counterfactual_cmd(
    table: Path = typer.Argument(..., help="Table with a text column (any table biaskit reads: prompts, generations, CSV, JSONL)."),
    axis: str = typer.Option(..., "--axis", help="gender, first_names, holistic:<axis>[@v1.1], or your axis YAML file."),
    out: Path = typer.Option(..., "--out", "-o", help="Pairs table to write (a prompts table: .parquet, .jsonl, .csv)."),
    text_column: str = typer.Option("text", "--text-column", help="Column holding the texts to swap."),
    mode: str | None = typer.Option(
        None, "--mode", help="swap (two-group axes, the default there: every word to the other group) or each (one variant per target group)."
    ),
    target: list[str] | None = typer.Option(None, "--target", help="Mode each: only these target groups (repeat or comma-separate)."),
    no_syntax: bool = typer.Option(
        False, "--no-syntax", help="Do not run spaCy: a word with several readings (her, his) takes its first listed one (the regex baseline)."
    ),
    spacy_model: str = typer.Option(
        "en", "--spacy-model", help="spaCy pipeline for the readings: en (resolved offline as biaskit assets) or a path."
    ),
) -> None:
    """Build counterfactual pairs: one row per variant (original, then the swapped texts), sharing a pair_id.

    A text without a word of the axis makes no pair; it is counted here and listed in the manifest.

    Example: biaskit templates counterfactual prompts.parquet --axis gender --text-column text --out pairs.parquet

    Example: biaskit templates counterfactual prompts_hb.parquet --axis holistic:religion --mode each --target Muslim,Jewish --out hb_pairs.parquet
    """
    ax, stats = write_counterfactual(
        table, axis, out, text_column=text_column, mode=mode, targets=_split(target), spacy_model=None if no_syntax else spacy_model
    )
    per = ", ".join(f"{k} {v}" for k, v in sorted(stats.by_variant.items()))
    typer.echo(f"wrote {out}: {stats.pairs} pairs ({stats.variant_rows} variant rows: {per}) from {stats.rows} rows, axis {ax.name}")
    if stats.unswapped_rows:
        first = ", ".join(map(str, (stats.unswapped_ids or stats.unswapped_rows)[:5]))
        typer.echo(f"{len(stats.unswapped_rows)} text(s) without a word of the axis made no pair (listed in the manifest): {first}")
    for limit in ax.limits:
        typer.echo(f"axis limit: {limit}")


def audit_pairs_cmd(
    pairs: Path = typer.Argument(..., help="Pairs table: pair_id, variant, text (e.g. `biaskit hub load crows_pairs_anonymized.csv`)."),
    axis: list[str] = typer.Option(
        ..., "--axis", help="Axis whose terms the pairs should differ in: AXIS (all pairs), GROUP=AXIS (pairs of one --by group), or crows-pairs."
    ),
    by: str = typer.Option("bias_type", "--by", help="Group column of the counts ('' for all pairs only)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Write one audit row per pair here (.parquet/.jsonl/.csv)."),
    summary: Path | None = typer.Option(None, "--summary", help="Write the counts per group as CSV here (default: print Markdown)."),
) -> None:
    """Check minimal pairs (Blodgett et al. 2021): align the two texts word by word and flag pairs that differ in
    more than one span, in a span that is not a term of the declared axes, or not at all; counts per group and all.

    Example: biaskit templates audit-pairs crows.parquet --axis crows-pairs --by bias_type --out crows_audit.parquet

    Example: biaskit templates audit-pairs pairs.parquet --axis gender --axis first_names --by '' --summary audit.csv
    """
    res, counts = audit_pairs(read_table(pairs), axis, by=by.strip() or None)
    if out is not None:
        man = new_manifest("biaskit templates audit-pairs", config={"axes": axis, "by": by}, inputs=[str(pairs)])
        write_table(res, out, manifest=man)
        typer.echo(f"wrote {res.num_rows} audit rows to {out}")
    if summary is not None:
        write_frame_csv(summary, neutralize_frame(counts))  # formula-like text cells get a leading ' (OWASP)
        typer.echo(f"wrote {len(counts)} rows to {summary}")
    else:
        typer.echo(markdown_table(counts))


def register(app: typer.Typer) -> None:
    sub_app(
        app,
        "expand",
        {
            "holistic": expand_holistic_cmd,
            "bbq": expand_bbq_cmd,
            "bbq-choices": expand_bbq_choices_cmd,
            "templates": expand_templates_cmd,
            "honest": expand_honest_cmd,
        },
    )
    sub_app(
        app,
        "templates",
        {
            "validate": validate_cmd,
            "show": show_cmd,
            "export-sheet": export_sheet_cmd,
            "import-sheet": import_sheet_cmd,
            "counterfactual": counterfactual_cmd,
            "audit-pairs": audit_pairs_cmd,
        },
    )
