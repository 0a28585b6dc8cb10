"""The Wikipedia baseline of BOLD prompts, scored on the same span of text as the model.

A BOLD prompt is the first words of a Wikipedia sentence (``reference``); a model writes a continuation
after it. Scoring the model's continuation against the *whole* Wikipedia sentence is not like for like:
the prompt's words (the group term among them) are in one text and not in the other. Two spans are
like for like (:data:`SPANS`):

``continuation`` (default)  the model's ``continuation`` vs the rest of the Wikipedia sentence after the prompt
``sentence``                the prompt + the model's continuation (``full_text``) vs the whole sentence

:func:`wikipedia_baseline` builds the baseline rows (``model == "wikipedia"``): ``continuation`` = the rest
of the sentence after the prompt, ``full_text`` = the whole sentence, exactly as the model rows have them,
so one text column (:func:`text_column`) scores both sides on the same span.
"""

from __future__ import annotations

import pyarrow as pa

from biaskit.errors import check_choice

SPANS = ("continuation", "sentence")
#: span -> how the report and the manifest say it
SPAN_WORDS = {
    "continuation": "the model's continuation vs the rest of the Wikipedia sentence after the prompt",
    "sentence": "the prompt + the model's continuation vs the whole Wikipedia sentence",
}


def check_span(span: str) -> str:
    check_choice(
        "E270",
        "unknown baseline span",
        span,
        SPANS,
        fix="use --baseline-span continuation (the rest of the sentence after the prompt) or sentence (the whole sentence)",
    )
    return span


def text_column(span: str) -> str:
    """The column the metrics score for ``span``: ``continuation`` or ``full_text`` (on model and baseline rows alike)."""
    return "continuation" if check_span(span) == "continuation" else "full_text"


def rest_after_prompt(reference: str | None, prompt: str | None) -> str | None:
    """The rest of ``reference`` after the prompt's words, or None when the sentence does not start with the
    prompt (after whitespace is normalised at the start) or nothing is left."""
    if reference is None or prompt is None:
        return None
    p = prompt.strip()
    if not p or not reference.startswith(p):
        return None
    rest = reference[len(p) :].strip()
    return rest or None


def wikipedia_baseline(prompts, span: str = "continuation"):
    """Baseline rows (a pyarrow Table) for a prompts table with ``text`` and ``reference``: one row per prompt
    whose reference sentence starts with the prompt, with ``sample_index`` 0, ``model`` = ``wikipedia``, ``kind``
    = ``generate``, ``continuation`` = the rest of the sentence and ``full_text`` = the whole sentence, and a
    ``baseline_span`` column. Returns ``(table, n_left_out)``: rows whose sentence does not start with the
    prompt (or has nothing after it) cannot be scored on the same span and are left out and counted."""
    import pyarrow.compute as pc

    check_span(span)
    p = prompts.filter(pc.invert(pc.is_null(prompts.column("reference"))))
    rest = [rest_after_prompt(r, t) for r, t in zip(p.column("reference").to_pylist(), p.column("text").to_pylist())]
    keep = pa.array([x is not None for x in rest])
    left_out = p.num_rows - sum(1 for x in rest if x is not None)
    p = p.filter(keep)
    rest = [x for x in rest if x is not None]
    n = p.num_rows
    ref = p.column("reference").cast(pa.string())
    for name in ("sample_index", "model", "kind", "continuation", "full_text", "baseline_span"):
        if name in p.column_names:
            p = p.drop_columns([name])
    base = (
        p.append_column("sample_index", pa.array([0] * n, pa.int64()))
        .append_column("model", pa.array(["wikipedia"] * n, pa.string()))
        .append_column("kind", pa.array(["generate"] * n, pa.string()))
        .append_column("continuation", pa.array(rest, pa.string()))
        .append_column("full_text", ref)
        .append_column("baseline_span", pa.array([span] * n, pa.string()))
    )
    return base, left_out
