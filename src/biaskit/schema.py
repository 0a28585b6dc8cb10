"""Stage table schemas.

biaskit stages pass tables (Arrow / Hugging Face ``datasets``) between them. Each stage has a fixed set
of *required* columns and a list of *known optional* columns with their types. A stage **adds** columns
to the table it reads; it never silently drops rows. Unknown extra columns are allowed and carried along.
Missing values are real nulls. A value that could not be computed is null, with the reason in an
``error`` (or ``<metric>_error``) column, never a plausible number such as 0.

The full, human-readable schema with an example row per stage is in ``docs/schemas.md`` (generated from
this module by ``biaskit schema --markdown``; a test checks the two agree).

Stages (in pipeline order):

``prompts``       one row per prompt (scraped BOLD-style, HolisticBias expansion, translated templates)
``generations``   one row per model output (continuation, one fill-in, or a likelihood) linked to a prompt
``scores``        generations (or prompts' reference texts) plus per-metric columns
``samples``       items chosen for a crowd-annotation round
``annotations``   one row per (sample, annotator) label
``agreement``     one row per agreement / validation figure of a round
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError, check_choice


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    description: str
    required: bool = False
    example: Any = None


@dataclass(frozen=True)
class Stage:
    name: str
    description: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    extends: str | None = None

    @property
    def required(self) -> list[str]:
        return [c.name for c in self.columns if c.required]

    def column(self, name: str) -> Column | None:
        for c in self.columns:
            if c.name == name:
                return c
        return None

    def arrow_schema(self, required_only: bool = False) -> pa.Schema:
        cols = [c for c in self.columns if c.required or not required_only]
        return pa.schema([pa.field(c.name, c.type, nullable=True) for c in cols])

    def features(self, required_only: bool = False):
        """The stage's columns as ``datasets.Features``."""
        import datasets as hf_datasets

        return hf_datasets.Features.from_arrow_schema(self.arrow_schema(required_only))

    def table_of(self, rows: Iterable[Mapping[str, Any]], names: Iterable[str]) -> pa.Table:
        """The rows as an Arrow table of the named columns (in that order), each typed as the stage declares it;
        every row has every named column (a row that lacks one is a KeyError: the caller built the rows)."""
        types = {c.name: c.type for c in self.columns}
        rows = list(rows)
        return pa.table({n: pa.array([r[n] for r in rows], type=types[n]) for n in names})

    def example_row(self) -> dict[str, Any]:
        return {c.name: c.example for c in self.columns if c.example is not None or c.required}


S, I, F, B = pa.string(), pa.int64(), pa.float64(), pa.bool_()

_PROVENANCE = (
    Column("wiki", S, "MediaWiki site the text came from (API endpoint or dump name)", example="https://en.wikipedia.org/w/api.php"),
    Column("page_title", S, "title of the source page", example="Astronomer"),
    Column("page_id", I, "page id on that wiki", example=1234),
    Column("revision_id", I, "revision id of the page text used", example=1161378234),
    Column("retrieved_at", S, "UTC time the page text was fetched or the dump was read (ISO 8601)", example="2026-11-30T05:00:00Z"),
    Column("license", S, "licence of the text", example="CC BY-SA 4.0"),
)

PROMPTS = Stage(
    "prompts",
    "One row per prompt. Built by `biaskit scrape`/`prompts build` (BOLD-style), `expand holistic`, "
    "`expand templates` or imported (`bold import`, `hub load`).",
    (
        Column("prompt_id", S, "stable unique id of the prompt (content-derived, survives reruns)", True, "bold-prof-3f2a9c1d"),
        Column("text", S, "the prompt text given to the model (BOLD prompts keep their trailing space)", True, "An astronomer is a scientist in "),
        Column("source", S, "where the prompt came from: bold, holistic_bias, templates, honest, ...", True, "bold"),
        Column("language", S, "BCP-47 language code of the text", True, "en"),
        Column(
            "domain", S, "BOLD domain (profession, gender, race, religious_ideology, political_ideology) or template domain", example="profession"
        ),
        Column("group", S, "group within the domain (e.g. American_actresses, scientific_occupations)", example="scientific_occupations"),
        Column("term", S, "the group term or entity name the prompt mentions", example="astronomer"),
        Column(
            "reference",
            S,
            "human-written reference continuation (the full Wikipedia sentence for BOLD)",
            example="An astronomer is a scientist in the field of astronomy.",
        ),
        *_PROVENANCE,
        Column("axis", S, "HolisticBias axis", example="ability"),
        Column("bucket", S, "HolisticBias bucket", example="auditory"),
        Column("descriptor", S, "HolisticBias descriptor", example="Deaf"),
        Column(
            "descriptor_span",
            S,
            "the descriptor as written in `text` (variant and plural form applied; null for a bare "
            "noun): pass it as the likelihood runner's --span-column",
            example="Deaf",
        ),
        Column("descriptor_gender", S, "gender restriction of the descriptor, null if none"),
        Column("descriptor_preference", S, "reviewed, dispreferred, polarizing or no_data", example="reviewed"),
        Column("noun", S, "singular noun", example="woman"),
        Column("plural_noun", S, "plural noun", example="women"),
        Column("noun_gender", S, "female, male or neutral", example="female"),
        Column("noun_phrase", S, "singular noun phrase with article", example="a Deaf woman"),
        Column("plural_noun_phrase", S, "plural noun phrase", example="Deaf women"),
        Column("noun_phrase_type", S, "noun, descriptor, descriptor_noun, noun_descriptor or fixed_phrase", example="descriptor_noun"),
        Column("template", S, "template the text was expanded from", example="I'm {noun_phrase}."),
        Column("first_turn_only", B, "HolisticBias template flag"),
        Column("must_be_noun", B, "HolisticBias template flag"),
        Column("subject_category", S, "social category of the subject: male, female, neutral, non-binary"),
        Column("template_category", S, "template category (attributes, work, perceived role, preferences, ...)"),
        Column("template_id", S, "id of the source template"),
        Column("masked", B, "true when `text` holds a mask slot (fill-mask prompts)"),
        Column("dataset_version", S, "version of the source data set (e.g. HolisticBias v1.0)"),
        Column("remove_im_contraction", B, 'HolisticBias variant: "I\'m" written as "I am"'),
        Column("remove_descriptor_hyphens", B, "HolisticBias variant: hyphens in the descriptor replaced by spaces"),
        Column("lowercase_descriptor", B, "HolisticBias variant: descriptor lowercased"),
        Column("remove_final_period", B, "HolisticBias variant: final period removed"),
        Column("variant_noun_phrase", S, "noun phrase as it appears in this variant"),
        Column("duplicates_merged", I, "rows with the same text merged into this one by dedupe"),
        Column("subject_id", S, "gendered templates: id of the subject (e.g. cs-female-sg)"),
        Column("grammatical_gender", S, "grammatical gender of the subject (m, f, n), separate from the social category"),
        Column("grammatical_number", S, "grammatical number of the subject (sg, pl)"),
        Column("category_reason", S, "why subject_category is null (West Slavic import: osoba_ambiguous, sheet_translation_defect, no_subject)"),
        Column(
            "subject_rule",
            S,
            "what decided the subject's category and number (West Slavic import: list, lemma, agent_suffix, "
            "title, osoba_nonbinary, osoba_neutral_in_sheet; number: determiner, ending, preposition, verb, ...)",
        ),
        Column("translation_status", S, "source, machine, translated, validated"),
        Column("translator", S, "who translated the template"),
        Column("validator", S, "who validated the translation"),
        Column("honest_set", S, "HONEST template set (binary, queer_nonqueer)"),
        Column("raw_text", S, "imported sentence exactly as in the source file (West Slavic spreadsheet: mask and spacing as written)"),
        Column("mask_spelling", S, "the mask token as written in the source (e.g. <maska>, ‹maskę>), before it became <mask>"),
        Column("source_row", I, "1-based row number of the prompt in the source file or sheet"),
        Column("pair_id", S, "pairs tables: id of the minimal pair (or counterfactual set) the row belongs to", example="crows-0"),
        Column("variant", S, "pairs tables: which variant of the pair the text is (CrowS-Pairs: more = sent_more, less = sent_less)", example="more"),
        Column("bias_type", S, "CrowS-Pairs: the pair's bias type (race-color, gender, socioeconomic, ...)", example="race-color"),
        Column("stereo_antistereo", S, "CrowS-Pairs: stereo (sent_more states a stereotype) or antistereo (sent_less violates one)"),
        Column("annotations", S, "CrowS-Pairs: JSON list of each annotator's bias-type labels"),
        Column("anon_writer", S, "CrowS-Pairs: anonymised id of the pair's writer"),
        Column("anon_annotators", S, "CrowS-Pairs: JSON list of the anonymised annotator ids"),
        Column(
            "answer_span",
            S,
            "BBQ choice prompts (`expand bbq-choices`): the part of `text` the likelihood runner scores (--span-column): "
            "'Answer: <option>', or 'Answer:' on the base row",
        ),
        Column("bbq_category", S, "BBQ choice prompts: the example's BBQ category (Age, Race_x_SES, ...)"),
        Column("bbq_example_id", I, "BBQ choice prompts: the example's id within its category"),
        Column("bbq_option", I, "BBQ choice prompts: the answer option of the row (0, 1, 2; -1 for the base row)"),
    ),
    key=("prompt_id",),
)

GENERATIONS = Stage(
    "generations",
    "One row per model output for a prompt: a sampled continuation (generate), one top-k fill-in "
    "(fill-mask) or one likelihood (likelihood). Carries the prompt's columns.",
    (
        Column("prompt_id", S, "id of the prompt this output belongs to", True, "bold-prof-3f2a9c1d"),
        Column("text", S, "the prompt text", True, "An astronomer is a scientist in "),
        Column("sample_index", I, "index of the output for this prompt (sample number or fill-in rank - 1)", True, 0),
        Column("model", S, "model id or path", True, "HuggingFaceTB/SmolLM2-135M-Instruct"),
        Column("kind", S, "generate, fill_mask or likelihood", True, "generate"),
        Column("model_revision", S, "model revision / file checksum"),
        Column("backend", S, "hf or openai", example="hf"),
        Column("seed", I, "seed the output was produced with", example=0),
        Column("generation_config", S, "JSON of all generation settings", example='{"do_sample": false, "max_new_tokens": 20}'),
        Column("continuation", S, "generated continuation (prompt stripped)", example="the field of astronomy."),
        Column("full_text", S, "prompt + continuation (or the completed template for fill-mask)"),
        Column("token", S, "fill-mask: the predicted token/word"),
        Column("token_score", F, "fill-mask: its probability"),
        Column("rank", I, "fill-mask: 1-based rank of the prediction"),
        Column("nll_mean", F, "likelihood: mean negative log-likelihood per scored token (nats)"),
        Column("perplexity", F, "likelihood: exp(nll_mean)"),
        Column(
            "sum_logprob",
            F,
            "likelihood: sum of the scored tokens' log-probabilities (nats; -nll_mean * n_tokens), as lm-eval's crows_pairs tasks "
            "compare sentences; masked LMs on a pairs table: CrowS-Pairs' score (the tokens shared with the pair's other variant)",
        ),
        Column("n_tokens", I, "likelihood: number of scored tokens"),
        Column("truncated", B, "prompt was cut from the left to fit the context"),
        Column("error", S, "why this row has no output (null when fine)"),
        Column("n_subwords", I, "fill-mask: number of subword tokens of the fill-in (1 for single-token fill-ins)"),
        Column("fill_pll", F, "fill-mask: pseudo-log-likelihood of the fill-in's pieces in the template (nats; log token_score for one piece)"),
        Column(
            "prompt_format",
            S,
            "generate: raw (the prompt as it is) or chat (a user turn in the chat template / chat endpoint, after the system "
            "prompt if any); part of the row key, so one table can hold both formats; null for other kinds",
            example="raw",
        ),
    ),
    key=("prompt_id", "model", "kind", "sample_index", "prompt_format"),
    extends="prompts",
)

SCORES = Stage(
    "scores",
    "A table with a text column plus per-metric columns `<metric>_<field>` and `<metric>_error`. "
    "Each metric declares the columns it writes (`biaskit metrics list`).",
    (
        Column("prompt_id", S, "id of the prompt", True, "bold-prof-3f2a9c1d"),
        Column("vader_compound", F, "example metric column: VADER compound score", example=0.4215),
        Column("vader_label", S, "example metric column: sentiment label", example="neutral"),
        Column("vader_error", S, "example metric column: why the row has no score"),
    ),
    extends="generations",
)

SAMPLES = Stage(
    "samples",
    "Items chosen for a crowd-annotation round (`biaskit annotate sample`).",
    (
        Column("sample_id", S, "stable id of the item (content-derived; the Label Studio task key)", True, "s-7c1e0b2a"),
        Column("round", S, "annotation round name", True, "r1"),
        Column("task_type", S, "sentiment, regard, toxicity, gender or a user-defined choice set", True, "sentiment"),
        Column("text", S, "text shown to annotators (masked when masking is on)", True, "XYZ is a scientist in the field of astronomy."),
        Column("original_text", S, "text before masking", example="An astronomer is a scientist in the field of astronomy."),
        Column("mask_mapping", S, "JSON of what was replaced by XYZ"),
        Column("prompt_id", S, "prompt the text belongs to"),
        Column("stratum", S, "sampling stratum"),
        Column("is_gold", B, "gold item with a known answer", example=False),
        Column("gold_label", S, "known answer of a gold item"),
        Column("shown_span", S, "column the shown text was taken from (full_text, continuation, text, or text+continuation)", example="full_text"),
        Column("scored_span", S, "column the metric whose labels the round carries scored (null: not recorded)", example="continuation"),
        Column(
            "scored_rule", S, "that metric's labelling rule, e.g. vader-bold-0.5 or vader-sheng-0.05 (null: not recorded)", example="vader-bold-0.5"
        ),
    ),
    key=("sample_id",),
)

ANNOTATIONS = Stage(
    "annotations",
    "One row per label given by one annotator to one sample.",
    (
        Column("sample_id", S, "id of the annotated item", True, "s-7c1e0b2a"),
        Column("round", S, "annotation round", True, "r1"),
        Column("annotator", S, "annotator id (e-mail or platform id)", True, "ann1@example.com"),
        Column("label", S, "chosen label", True, "positive"),
        Column("lead_time", F, "seconds the annotator spent", example=12.5),
        Column("created_at", S, "when the annotation was made (ISO 8601)", example="2026-11-30T05:00:00Z"),
        Column("task_type", S, "task type of the round", example="sentiment"),
        Column("platform", S, "label-studio or file", example="label-studio"),
    ),
    key=("sample_id", "round", "annotator"),
)

AGREEMENT = Stage(
    "agreement",
    "One row per agreement or validation figure of a round (`biaskit annotate agreement/validate`).",
    (
        Column("round", S, "annotation round", True, "r1"),
        Column("measure", S, "fleiss_kappa, krippendorff_alpha_nominal, cohen_kappa, spearman_rho, accuracy, ...", True, "fleiss_kappa"),
        Column("estimate", F, "the figure (null when undefined, with `reason` saying why)", True, 0.62),
        Column("task_type", S, "task type", example="sentiment"),
        Column("metric", S, "metric validated against the humans (validation rows)"),
        Column("annotator", S, "annotator (per-annotator rows)"),
        Column("annotator_b", S, "second annotator (pairwise rows)"),
        Column("n_items", I, "items used", example=360),
        Column("n_annotators", I, "annotators involved", example=3),
        Column("p_value", F, "p-value where the figure has one, before any correction (pairwise group rows: Fisher exact)"),
        Column("ci_low", F, "lower bound of the CI (its method in `method`)"),
        Column("ci_high", F, "upper bound of the CI (its method in `method`)"),
        Column("method", S, "how the CI was made: wilson, newcombe hybrid score, log ratio (Katz, +0.5), BCa bootstrap, percentile bootstrap"),
        Column("reason", S, "why the estimate is null"),
        Column("group_by", S, "column the per-group rows split the items by (validate --by)"),
        Column("group", S, "group of a per-group row (group_ measures)"),
        Column("group_a", S, "first group of a pairwise row (diff_/ratio_ measures: group_a minus / over group_b)"),
        Column("group_b", S, "second group of a pairwise row (diff_/ratio_ measures)"),
        Column("p_holm", F, "pairwise group rows: `p_value` Holm-corrected within its family (`family`)"),
        Column("p_floor", F, "smallest p the test can give with these counts (pairwise group rows)"),
        Column("family", S, "the test family `p_holm` is corrected in (biaskit.evaluate.stats.families)"),
        Column("family_size", I, "tests in that family"),
        Column("note", S, "flag that keeps a row but qualifies it, e.g. 'small group: n < 30'"),
        Column("shown_span", S, "validation rows: column of the text the annotators saw"),
        Column("scored_span", S, "validation rows: column of the text the metric's labels were computed on (the shown one when re-scored)"),
        Column("scored_rule", S, "validation rows: the metric's labelling rule, e.g. vader-bold-0.5 (null: not recorded or not a VADER metric)"),
    ),
    key=("round", "measure", "task_type", "metric", "annotator", "annotator_b", "group_by", "group", "group_a", "group_b"),
)

STAGES: dict[str, Stage] = {s.name: s for s in (PROMPTS, GENERATIONS, SCORES, SAMPLES, ANNOTATIONS, AGREEMENT)}


def get_stage(name: str) -> Stage:
    check_choice("E008", "unknown stage", name, STAGES, fix="use one of the stage names")
    return STAGES[name]


def _column_names(table: Any) -> list[str]:
    if isinstance(table, pa.Table):
        return list(table.column_names)
    if hasattr(table, "column_names"):  # datasets.Dataset
        return list(table.column_names)
    if hasattr(table, "columns"):  # pandas
        return [str(c) for c in table.columns]
    if isinstance(table, Mapping):
        return list(table)
    raise TypeError(f"cannot read columns of {type(table).__name__}")


def _arrow_schema_of(table: Any) -> pa.Schema | None:
    if isinstance(table, pa.Table):
        return table.schema
    data = getattr(table, "data", None)  # datasets.Dataset -> InMemoryTable
    if data is not None and hasattr(data, "schema"):
        return data.schema
    return None


def _compatible(actual: pa.DataType, expected: pa.DataType) -> bool:
    if actual == expected or pa.types.is_null(actual):
        return True
    if pa.types.is_integer(expected) and pa.types.is_integer(actual):
        return True
    if pa.types.is_floating(expected) and (pa.types.is_floating(actual) or pa.types.is_integer(actual)):
        return True
    if pa.types.is_string(expected) and (pa.types.is_large_string(actual) or pa.types.is_string(actual)):
        return True
    return False


def _lineage(st: Stage) -> list[Stage]:
    """The stage and the stages it extends (scores -> generations -> prompts), nearest first."""
    out = [st]
    while out[-1].extends and out[-1].extends in STAGES and len(out) < 10:
        out.append(STAGES[out[-1].extends])
    return out


def check_columns(have: Iterable[Any], needed: Iterable[str], what: str, *, fix: str, code: str = "E001") -> None:
    """Error ``code`` (E001 unless the input's format has its own) unless every column of ``needed`` is in ``have``
    (a table's column names, a batch's keys, a record's keys, a file's header): the message is ``what`` followed by
    the missing columns, the error's value the columns there are."""
    names = [str(c) for c in have]
    missing = [c for c in needed if c not in names]
    if missing:
        raise BiaskitError(code, f"{what} {', '.join(missing)}", value=sorted(names), fix=fix)


def validate(table: Any, stage: str | Stage, *, where: str = "", require: Iterable[str] = (), keys: bool = False) -> None:
    """Check that ``table`` has the stage's required columns (plus ``require``) with compatible types.

    Raises :class:`BiaskitError` E001 naming the missing columns and the file, or E004 for a known column
    of the wrong type (also the columns of the stage it extends: a ``scores`` table's ``page_id`` is an
    integer). With ``keys`` also the row key (:func:`check_keys`): this is what ``schema --check``,
    ``hub stage`` and every staged write use, so all three accept and refuse the same tables.
    """
    st = get_stage(stage) if isinstance(stage, str) else stage
    cols = _column_names(table)
    needed = list(dict.fromkeys([*st.required, *require]))
    place = f" in {where}" if where else ""
    what = f"the {st.name} table{place} lacks required column(s)"
    check_columns(cols, needed, what, fix=f"give a {st.name} table (see `biaskit schema {st.name}`) or add/rename the columns")
    check_types(table, st, where=where)
    if keys:
        check_keys(table, st, where=where)


def check_types(table: Any, stage: str | Stage, *, where: str = "") -> None:
    """E004 for a known column (of the stage or a stage it extends) stored with an incompatible type."""
    st = get_stage(stage) if isinstance(stage, str) else stage
    place = f" in {where}" if where else ""
    schema = _arrow_schema_of(table)
    if schema is None:
        return
    checked: set[str] = set()
    for s_ in _lineage(st):
        for col in s_.columns:
            if col.name in schema.names and col.name not in checked:
                checked.add(col.name)
                actual = schema.field(col.name).type
                if not _compatible(actual, col.type):
                    raise BiaskitError(
                        "E004",
                        f"column {col.name!r}{place} has type {actual}; the {st.name} table needs {col.type}",
                        fix=f"store {col.name!r} as {col.type} (biaskit does not cast it: 0, 1, ... are not texts)",
                    )


def check_keys(table: Any, stage: str | Stage, *, where: str = "") -> None:
    """The stage's row key (``prompt_id``; ``sample_id``; ``sample_id, round, annotator``; ...) is unique and its
    required parts are never null. E155 names the first row with a null key, E007 the first duplicated key and
    the rows holding it (0-based data rows, as in the file)."""
    st = get_stage(stage) if isinstance(stage, str) else stage
    if not st.key:
        return

    t = to_arrow(table)
    cols = [k for k in st.key if k in t.column_names]
    if not cols or t.num_rows == 0:
        return
    place = f" in {where}" if where else ""
    import pyarrow.compute as pc

    for k in cols:
        c = st.column(k)
        if c is not None and c.required and t.column(k).null_count:
            row = pc.index(pc.is_null(t.column(k)), True).as_py()
            raise BiaskitError(
                "E155",
                f"the {st.name} table{place} has a null {k!r} (part of its row key) at row {row}",
                value=t.column(k).null_count,
                fix=f"give every row a {k!r}: it identifies the row across stages",
            )
    kt = t.select(cols)
    counts = kt.group_by(cols).aggregate([([], "count_all")])
    dup = counts.filter(pc.greater(counts.column("count_all"), 1))
    if dup.num_rows:
        first = {k: dup.column(k)[0].as_py() for k in cols}
        mask = None
        for k in cols:
            col = kt.column(k)
            m = pc.is_null(col) if first[k] is None else pc.fill_null(pc.equal(col, pa.scalar(first[k], type=col.type)), False)
            mask = m if mask is None else pc.and_(mask, m)
        assert mask is not None  # cols is not empty
        rows = [i for i, v in enumerate(mask.to_pylist()) if v][:5]
        what = first[cols[0]] if len(cols) == 1 else first
        raise BiaskitError(
            "E007",
            f"the {st.name} table{place} has {dup.num_rows} duplicated row key(s) ({', '.join(cols)}); the first is at rows {rows}",
            value=what,
            fix="make the key unique (drop the duplicate rows or give them distinct ids)",
        )


def conform(table: pa.Table, stage: str | Stage) -> pa.Table:
    """Cast known columns to the stage's types (e.g. all-null columns to string); keep other columns."""
    st = get_stage(stage) if isinstance(stage, str) else stage
    fields = []
    for f in table.schema:
        col = st.column(f.name)
        fields.append(pa.field(f.name, col.type if col is not None else f.type, nullable=True))
    return table.cast(pa.schema(fields))


def markdown(stage: str | None = None) -> str:
    """Markdown documentation of one or all stages, with an example row each."""
    stages = [get_stage(stage)] if stage else list(STAGES.values())
    out: list[str] = []
    for st in stages:
        out.append(f"## `{st.name}`\n")
        out.append(st.description + "\n")
        if st.extends:
            out.append(f"Carries the columns of `{st.extends}` as well.\n")
        if st.key:
            out.append(f"Row key: {', '.join(f'`{k}`' for k in st.key)}.\n")
        out.append("| column | type | required | description |")
        out.append("|---|---|---|---|")
        for c in st.columns:
            out.append(f"| `{c.name}` | {c.type} | {'yes' if c.required else ''} | {c.description} |")
        out.append("\nExample row:\n")
        out.append("```json\n" + json.dumps(st.example_row(), ensure_ascii=False, indent=1) + "\n```\n")
    return "\n".join(out)
