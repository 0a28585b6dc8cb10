"""BBQ as multiple choice by likelihood: one prompts row per option, for ``biaskit likelihood``.

Each example gives four prompts rows: the three options, ``"{context}\\n{question}\\nAnswer: {option}"`` with the
span ``"Answer: {option}"`` (``answer_span``), and a base row ``"{context}\\n{question}\\nAnswer:"`` with the span
``"Answer:"``. The runner scores the span given everything before it. The span starts at ``Answer:`` so that it is
found there and not where the option's words also occur in the context (``find_span`` takes the first
occurrence); the base row's score is the part of each option row that is not the option, so that
``option NLL = option row sum - base row sum`` and ``option tokens = option row tokens - base row tokens`` (exact
where ``Answer:`` is tokenized alike with and without an option after it, as byte-level BPE and WordPiece do;
:func:`biaskit.evaluate.stats.bbq.predictions_from_likelihoods` checks that some token is left).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.io import read_table, write_table
from biaskit.manifest import new_manifest
from biaskit.schema import PROMPTS

#: the option row's value of ``bbq_option`` for the base row
BASE = -1
#: the columns of the choice prompts, in this order (typed as the prompts stage declares them)
_TABLE_COLUMNS = ("prompt_id", "text", "source", "language", "domain", "answer_span", "bbq_category", "bbq_example_id", "bbq_option")


def choice_id(category: str, example_id: Any, option: int) -> str:
    return f"bbq-{category}-{example_id}-{'base' if option == BASE else f'ans{option}'}"


def choice_prompts(examples: pa.Table) -> pa.Table:
    """Four prompts rows per example (three options and the base row); see the module docstring."""
    needed = ("category", "example_id", "context", "question", "ans0", "ans1", "ans2")
    missing = [c for c in needed if c not in examples.column_names]
    if missing:
        raise BiaskitError(
            "E415", "not a BBQ examples table (missing columns)", value=missing, options=needed, fix="give a table of expand bbq or hub load"
        )
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, Any]] = set()
    for ex in examples.select(list(needed)).to_pylist():
        key = (ex["category"], ex["example_id"])
        if key in seen:
            raise BiaskitError("E415", "duplicate (category, example_id) in the examples", value=key, fix="give each example its own id")
        seen.add(key)
        stem = f"{ex['context']}\n{ex['question']}\nAnswer:"
        for option in (0, 1, 2, BASE):
            span = "Answer:" if option == BASE else f"Answer: {ex[f'ans{option}']}"
            rows.append(
                {
                    "prompt_id": choice_id(ex["category"], ex["example_id"], option),
                    "text": stem if option == BASE else f"{stem} {ex[f'ans{option}']}",
                    "source": "bbq",
                    "language": "en",
                    "domain": ex["category"],
                    "answer_span": span,
                    "bbq_category": ex["category"],
                    "bbq_example_id": int(ex["example_id"]),
                    "bbq_option": option,
                }
            )
    return PROMPTS.table_of(rows, _TABLE_COLUMNS)


def write_choice_prompts(examples: str | Path, out: str | Path) -> pa.Table:
    """Read an examples table and write its choice prompts (a prompts-stage table) with a manifest."""
    table = choice_prompts(read_table(examples))
    write_table(table, out, stage="prompts", manifest=new_manifest("biaskit expand bbq-choices", stage="prompts", inputs=[examples]))
    return table
