"""The table of ``biaskit``'s commands: what ``biaskit --help`` and ``biaskit GROUP --help`` list, read without
importing a command module (docs/architecture.md, "Imports").

A command module (``biaskit.cli.<module>``) is imported only when one of its commands runs or shows its own help:
:class:`biaskit.cli.group.LazyGroup` lists the names and one-line helps of this table and imports the module from
:func:`biaskit.cli.group.command` when a command is asked for. ``tests/core/test_cli_listing.py`` checks that the table
equals the commands the modules' ``register(app)`` attach (names, modules, short helps), so the two cannot drift:
a new command is one ``app.command("name")(func)`` line in ``register`` plus one row in the table's data file.
"""

from __future__ import annotations

import inspect
import json
import re
from importlib import resources

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
#: group "" is a top-level command. The short help is ``short_help`` of the command's docstring. The rows are data,
#: kept in ``biaskit/data/cli/commands.json`` (one JSON array a row); ``tests/core/test_cli_listing.py`` names the
#: rows to add or change when a command is added or its docstring's first sentence changes.
COMMANDS: tuple[tuple[str, str, str, str], ...] = tuple(
    (g, c, m, h) for g, c, m, h in json.loads(resources.files("biaskit").joinpath("data", "cli", "commands.json").read_text(encoding="utf-8"))
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
