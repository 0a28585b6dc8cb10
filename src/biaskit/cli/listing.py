"""The table of ``biaskit``'s commands: what ``biaskit --help`` and ``biaskit GROUP --help`` list, read without
importing a command module (docs/architecture.md, "Imports").

A command module (``biaskit.cli.<module>``) is imported only when one of its commands runs or shows its own help:
:class:`biaskit.cli.group.LazyGroup` lists the names and one-line helps of this table and imports the module from
:func:`biaskit.cli.group.command` when a command is asked for. ``tests/core/test_cli_listing.py`` checks that the table
equals the commands the modules' ``register(app)`` attach (names, modules, short helps), so the two cannot drift:
a new command is one ``app.command("name")(func)`` line in ``register`` plus one row here.
"""

from __future__ import annotations

import inspect
import re

#: words that end in a full stop without ending a sentence
_ABBREVIATIONS = frozenset({"e.g.", "i.e.", "al.", "vs.", "etc."})


def short_help(text: str | None) -> str:
    """The one-line help of a command: the first sentence of its help's first paragraph, whitespace collapsed."""
    para = " ".join(inspect.cleandoc(text or "").split("\n\n")[0].split())
    for m in re.finditer(r"\.(?=\s)", para):
        head = para[: m.end()]
        if head.rsplit(" ", 1)[-1].lstrip("([\"'").lower() not in _ABBREVIATIONS:
            return head
    return para


#: (group, command, module under biaskit.cli, short help) of every command, in the order ``--help`` lists them;
#: group "" is a top-level command. The short help is ``short_help`` of the command's docstring.
COMMANDS: tuple[tuple[str, str, str, str], ...] = (
    ("", "demo", "core", "Run the whole pipeline on bundled data and write a run folder with tables, manifest and report."),
    ("", "schema", "core", "Show the column schema of a stage table, or check a file against it."),
    (
        "",
        "assets",
        "core",
        "List the models (language models, classifiers), lexicons, embeddings and pipelines biaskit knows, and where each would resolve from now (environment variable, installed package, cache, download on first use) or how to provide it.",
    ),
    ("", "version", "core", "Print the biaskit version."),
    ("", "generate", "models", "Continue each prompt with a causal LM: one row per (prompt, sample) in a generations table."),
    ("", "fill-mask", "models", "Top-k fill-ins of each template's mask slot with a masked LM (HONEST-style completion)."),
    ("", "likelihood", "models", "Per-sentence mean negative log-likelihood and perplexity (HolisticBias Likelihood Bias)."),
    ("", "score", "metrics", "Add metric columns (<metric>_<field>, <metric>_error) to a table; rows are never dropped."),
    (
        "",
        "report",
        "report",
        "Write the statistical report of a run: report.html (self-contained, opens offline), report.md, figures/*.png and tables/*.csv + *.md.",
    ),
    ("scrape", "dump", "scrape", "Build BOLD-style prompts from a Wikipedia dump (streamed; a killed run resumes)."),
    ("scrape", "api", "scrape", "Build BOLD-style prompts from a live wiki through its Action API (cached, rate-limited, resumable)."),
    ("prompts", "build", "scrape", "Apply BOLD's prompt rule to a table of sentences (e.g. from `scrape dump --sentences-out`)."),
    ("prompts", "rebuild", "scrape", "Recompute every prompt from its reference sentence and term with BOLD's rule (or other settings)."),
    ("bold", "import", "scrape", "Import BOLD's files verbatim (every prompt and sentence kept; the term is the entity name)."),
    (
        "bold",
        "export",
        "scrape",
        "Export a prompts table to BOLD's layouts (entity = bold_name, else the page title, else the term; spaces as underscores).",
    ),
    ("expand", "holistic", "templates", "Expand HolisticBias (descriptor x noun x template) into a prompts table."),
    ("expand", "bbq", "templates", "Rebuild BBQ (Parrish et al. 2022) from its templates: 4 examples per filled pair, counts as published."),
    (
        "expand",
        "bbq-choices",
        "templates",
        "BBQ as multiple choice by likelihood: prompts rows to score with `biaskit likelihood --span-column answer_span`.",
    ),
    ("expand", "templates", "templates", "Expand gendered fill-mask templates (one row per template x subject, text with <mask>)."),
    ("expand", "honest", "templates", "Import HONEST templates (every row, also those sharing a text) as a masked prompts table."),
    (
        "templates",
        "validate",
        "templates",
        "Check template files: gendered sets (one mask, known slots, cases and agreement forms for every subject) and HolisticBias extension files (placeholders, empty/duplicate entries, stray whitespace).",
    ),
    ("templates", "show", "templates", "Print every sentence a template set expands to (to check agreement by eye)."),
    ("templates", "export-sheet", "templates", "Export source templates to a translation sheet: one row per template, one column per language."),
    ("templates", "import-sheet", "templates", "Import one language of a filled sheet into a template-set file, validating every translation."),
    (
        "templates",
        "counterfactual",
        "templates",
        "Build counterfactual pairs: one row per variant (original, then the swapped texts), sharing a pair_id.",
    ),
    (
        "templates",
        "audit-pairs",
        "templates",
        "Check minimal pairs (Blodgett et al. 2021): align the two texts word by word and flag pairs that differ in more than one span, in a span that is not a term of the declared axes, or not at all; counts per group and all.",
    ),
    ("hub", "stage", "hub", "Stage tables as a Hub-ready dataset folder and check it loads with datasets.load_dataset."),
    ("hub", "push", "hub", "Upload a staged folder to the Hub."),
    ("hub", "load", "hub", "Load a public bias dataset (or one staged/pushed with biaskit) into a biaskit table."),
    (
        "backends",
        "list",
        "models",
        "List the model backends: where each comes from, the kinds it runs, whether it can judge, and the options it declares for --backend-option (type, default, help).",
    ),
    ("metrics", "list", "metrics", "List the metrics with their version, columns, source and parameters."),
    ("cache", "info", "cache", "Show what a response cache holds: entries per kind of answer, remembered weight hashes and its size."),
    ("cache", "clear", "cache", "Delete every cached answer and remembered weight hash of a response cache (the folder stays)."),
    ("stats", "aggregate", "report", "Counts, label shares (Wilson CIs) and means (bootstrap CIs) per group; nulls counted in n_null."),
    (
        "stats",
        "ztest",
        "report",
        "Two-proportion tests of a label's share between every pair of groups, with corrected p and Cohen's h, and the difference diff = p_a - p_b with its 95% interval (ci_low, ci_high).",
    ),
    (
        "stats",
        "family",
        "report",
        "The tests of one headline family, Holm-corrected within it: the same tests, families and corrected p (p_holm) that the report's tables and headline show.",
    ),
    (
        "stats",
        "likelihood-bias",
        "report",
        "HolisticBias Likelihood Bias: fraction of descriptor pairs per axis whose perplexities differ (Mann-Whitney U).",
    ),
    (
        "stats",
        "genbias",
        "report",
        "HolisticBias generation bias per axis (Smith et al. 2022): Full Gen Bias = (1/T) sum_t sum_s Var_d (variance across descriptors within each template, ddof=0, averaged over templates; also x1000 as the paper reports it), Partial Gen Bias and Summed-Cluster Gen Bias per style cluster, bootstrap CIs, the descriptors that contribute most.",
    ),
    (
        "stats",
        "validity",
        "report",
        "Completion validity: share of fill-ins that are real words per group (Wilson CI), and a chi-square test of valid / not valid across --category within each model and language (Holm-adjusted p).",
    ),
    ("stats", "ppi", "report", "Prediction-powered inference (PPI++): the metric's share of a label per group corrected by human labels."),
    ("stats", "bbq", "report", 'BBQ accuracy and bias score (s_DIS, s_AMB; x100) per category x context condition, "(names)" rows apart.'),
    ("stats", "pairs", "report", "Share of pairs whose 'more' (or first) variant scores higher, per group and for all pairs (CrowS-Pairs' metric)."),
    ("annotate", "sample", "annotate", "Draw a seeded, stratified sample for an annotation round and mask demographic mentions."),
    ("annotate", "export", "annotate", "Write a round's tasks and guidelines as files for another crowd platform."),
    ("annotate", "push", "annotate", "Create (or find) the round's Label Studio project and import the missing tasks, in batches."),
    (
        "annotate",
        "pull",
        "annotate",
        "Export a round's labels, validate them (labels outside the config, double annotations, empty results) and write the annotations table.",
    ),
    (
        "annotate",
        "agreement",
        "annotate",
        "Fleiss' kappa, Krippendorff's alpha (nominal/ordinal), pairwise Cohen's kappa, per-annotator agreement with the majority.",
    ),
    (
        "annotate",
        "validate",
        "annotate",
        "Compare the human majority label with each metric: Spearman, accuracy, weighted P/R/F1, per class, confusion matrix, thresholds; with --by, the same per group, and every pair of groups compared (difference, ratio, permutation p, Holm-corrected).",
    ),
    (
        "annotate",
        "aggregate",
        "annotate",
        "One label per item from the crowd's labels with a label model (crowd-kit), plus each annotator's estimated skill.",
    ),
    (
        "annotate",
        "plan",
        "annotate",
        "How many more items each group needs for its per-group rate's CI half-width to reach the target (normal approximation); with --ppi, how many more human labels bring the PPI++ interval of a label's share to it.",
    ),
    ("annotate", "rounds", "annotate", "Show the history of annotation rounds (sizes, annotators, agreement, validation figures)."),
    ("annotate", "tasks", "annotate", "List the task types, or show one's labels, guidelines and Label Studio config."),
    (
        "train",
        "classifier",
        "train",
        "Fine-tune a text classifier with the protocol of Sheng et al. 2019 (stratified train/dev/test split, several runs, early stopping on dev) and compare it with a majority, a VADER and a TF-IDF + logistic regression baseline on the same split.",
    ),
    ("export", "lm-eval", "interop", "Write an lm-evaluation-harness task folder for a prompts table: one task per config plus a group."),
    (
        "import",
        "lm-eval",
        "interop",
        "Read lm-eval --log_samples output (samples_*.jsonl, results_*.json) into a generations table keyed by prompt_id.",
    ),
)

#: group -> its help (``biaskit GROUP --help``; its first sentence is its line in ``biaskit --help``), in the order
#: ``biaskit --help`` lists the groups (after the top-level commands)
GROUPS: dict[str, str] = {
    "scrape": "Wikipedia (live MediaWiki API or a dump) -> clean sentences -> BOLD-style prompts.",
    "prompts": "Build or rebuild BOLD-style prompts from sentences with BOLD's rule.",
    "bold": "Import BOLD's published files into a prompts table, or export one back to BOLD's layouts.",
    "expand": "Expand templates into prompts tables: HolisticBias, BBQ, gendered fill-mask templates (cs/pl/sk/en), HONEST.",
    "templates": "Gendered template files: validate, show, the translation sheet workflow (export/import CSV or XLSX); counterfactual pairs and their audit.",
    "hub": "Publish tables as Hugging Face Hub datasets (stage, push) and load public bias datasets (load).",
    "backends": "The registered model backends.",
    "metrics": "The registered per-text metrics.",
    "cache": "The response cache of --cache DIR.",
    "stats": "Group statistics of one scored table (proportions with CIs, tests, Likelihood Bias).",
    "annotate": "Annotation rounds: sample items, push them to Label Studio (or export files for another platform), pull and validate the labels, compute agreement and validate metrics against the humans.\n\nExample: biaskit annotate sample runs/demo/scores.parquet --round r1 --task sentiment --n 200 --out r1/samples.parquet\n\nExample: biaskit annotate push r1/samples.parquet --url http://localhost:8080 --annotators 3",
    "train": "Train a metric (text classifier) from labelled data, with baselines on the same split.",
    "export": "Export biaskit tables for other evaluation tools (lm-eval).",
    "import": "Import other evaluation tools' outputs as biaskit tables (lm-eval).",
}
