"""EleutherAI lm-evaluation-harness interop: biaskit prompt tables out as task folders, logged samples back in.

:func:`export_lmeval` writes an lm-eval *task folder* from a prompts table: one task YAML per config (a BOLD
domain, a HolisticBias axis, ...), a group YAML naming them, the rows as Parquet under ``data/`` (read with
``dataset_path: parquet`` + ``data_files``, so no network), and a README with the exact ``lm_eval`` command.
Prompts tables become ``generate_until`` tasks (generation settings as lm-eval ``generation_kwargs``; several
samples per prompt as ``repeats``), HolisticBias sentence tables ``loglikelihood_rolling`` tasks (Likelihood
Bias). Every doc carries the prompt's biaskit columns (``prompt_id`` first of all), so nothing is matched back
by text.

:func:`import_lmeval` reads what ``lm_eval --log_samples --output_path OUT`` wrote (``samples_<task>_<date>.jsonl``
and ``results_<date>.json``) into a generations-stage table keyed by the original ``prompt_id``: continuations
for ``generate_until`` tasks, ``nll_mean``/``perplexity``/``n_tokens`` for ``loglikelihood_rolling`` tasks (the
summed log-likelihood lm-eval logs, divided by the sentence's token count from the model's tokenizer). Model
name/arguments, lm-eval version, task hashes and generation settings go to the manifest.

How the two sides line up with ``biaskit generate`` / ``biaskit likelihood`` (docs/lm-eval.md):

- generation: lm-eval feeds ``doc_to_text`` as it is; the export writes the prompt with its trailing spaces cut
  (``lm_input``), as ``biaskit generate`` does by default, and the import drops the model's first space again
  (:func:`biaskit.evaluate.runners.common.join_continuation`). Greedy output is then the same text.
- likelihood: lm-eval scores every token of the sentence after a prefix token (the tokenizer's BOS, else EOS),
  which is ``biaskit likelihood --bos yes``.

Nothing here imports lm_eval; only the likelihood import loads a tokenizer (transformers). This module keeps the two
entry points; their parts are in :mod:`biaskit.interop.lmeval_export`, :mod:`biaskit.interop.lmeval_import` and the
names and formats both share in :mod:`biaskit.interop.lmeval_format`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners.common import GenerationSettings
from biaskit.evaluate.runners.core import prompt_table
from biaskit.interop.lmeval_export import (
    ExportPlan,
    ExportResult,
    check_export_target,
    check_generation_settings,
    config_column,
    group_name,
    inputs_sha256,
    refuse_empty_texts,
    task_configs,
    with_input_column,
    write_group_files,
    write_tasks,
)
from biaskit.interop.lmeval_format import EXPORT_FILE, MARKER_KIND, default_kind, generation_kwargs, lm_eval_command
from biaskit.interop.lmeval_import import ImportResult, ReadRows, add_nll, find_runs, read_run, run_facts, run_info, select_runs
from biaskit.ownership import claim_folder, write_owned_folder
from biaskit.schema import conform


def export_lmeval(
    table: Any,
    out: str | Path,
    *,
    name: str | None = None,
    kind: str = "auto",
    config_by: str | None = None,
    max_new_tokens: int = 20,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_p: float | None = None,
    top_k: int | None = None,
    samples: int = 1,
    until: list[str] | None = None,
    strip_trailing_space: bool = True,
    data_root: str | Path | None = None,
    overwrite: bool = False,
) -> ExportResult:
    """Write an lm-eval task folder for the prompts ``table`` (path or Arrow table) to ``out``; see the module doc.

    ``kind``: ``generate`` (``generate_until``), ``likelihood`` (``loglikelihood_rolling``) or ``auto`` (likelihood
    for a HolisticBias table, generate otherwise). ``config_by``: one task per value of this column (default:
    ``domain`` for BOLD, ``axis`` for HolisticBias; none: a single task). ``data_root``: the folder the task YAMLs
    name for their data files (default: ``out/data`` resolved; give the path the folder will have on the machine
    that runs lm-eval when it differs). Each file is written atomically, and the folder is owned as every output
    folder is (:mod:`biaskit.ownership`): into an existing folder only when its ``biaskit_export.json`` lists
    biaskit's files unchanged (else E006 unless ``overwrite``); a user's files there are never deleted.
    """
    out_p = Path(out)
    check_export_target(kind, out_p)
    claim = claim_folder(out_p, EXPORT_FILE, MARKER_KIND, overwrite=overwrite)
    t, inputs = prompt_table(table)
    if t.num_rows == 0:
        raise BiaskitError("E260", "the prompts table has no rows", value=inputs[0] if inputs else None, fix="export a table with prompts")
    k = default_kind(t) if kind == "auto" else kind
    decoding = GenerationSettings(
        max_new_tokens=max_new_tokens, do_sample=do_sample, temperature=temperature, top_k=top_k, top_p=top_p, num_return_sequences=samples
    )
    check_generation_settings(k, decoding, until)
    group = group_name(name, t)
    col = config_column(config_by, t)
    refuse_empty_texts(t)
    t = with_input_column(t, k == "generate" and strip_trailing_space)
    plan = ExportPlan(
        out=out_p,
        group=group,
        kind=k,
        config_by=col,
        configs=task_configs(t, col),
        gen_kwargs=generation_kwargs(decoding, until) if k == "generate" else None,
        samples=samples,
        strip_trailing_space=strip_trailing_space,
        data_root=Path(data_root) if data_root is not None else (out_p.resolve() / "data"),
        inputs=inputs,
        source_sha=inputs_sha256(inputs),
        command=lm_eval_command(group, out_p.resolve()),
        rows=t.num_rows,
    )

    def fill(tmp: Path) -> dict[str, int]:
        tasks = write_tasks(tmp, plan, t)
        marker.update(write_group_files(tmp, plan, tasks))
        return tasks

    marker: dict[str, Any] = {}
    tasks = write_owned_folder(claim, fill, marker)
    return ExportResult(out_p, group, k, tasks, plan.command, {"config_by": col, "rows": t.num_rows})


def import_lmeval(source: str | Path, *, tokenizer: str | None = None, model: str | None = None, group: str | None = None) -> ImportResult:
    """Read lm-eval ``--log_samples`` output (a folder, or one ``samples_*.jsonl``) into a generations table.

    Only tasks written by :func:`export_lmeval` are read (their config in ``results_*.json`` has
    ``metadata.biaskit``; without a results file, every doc must carry a ``prompt_id``); other tasks in the same
    folder are skipped and listed in ``facts["skipped_tasks"]``. ``tokenizer``: for likelihood tasks, the
    tokenizer counting each sentence's tokens (default: ``pretrained`` of lm-eval's model_args). ``model``: the
    ``model`` column (default: lm-eval's model name). ``group``: only the tasks of this exported group (or this one
    task), e.g. the generation group when one lm_eval run also ran a likelihood group. Errors (E261-E265) name the file and line; nothing is
    returned half-read.
    """
    src = Path(source)
    ours, skipped = select_runs(find_runs(src), group)
    acc = ReadRows()
    inputs: list[str] = []
    tasks_facts: dict[str, dict] = {}
    runs_facts: dict[str, dict] = {}
    for r, res, cfg in ours:
        inputs.append(str(r.samples))
        run = run_info(r, res, cfg, model, tokenizer)
        if r.results is not None and str(r.results) not in runs_facts:
            inputs.append(str(r.results))
            runs_facts[str(r.results)] = run_facts(res, run.model_args)
        tasks_facts[r.task] = read_run(acc, run)
    table = acc.table()
    table, tok_facts = add_nll(table, acc, str(src))
    table = conform(table, "generations")
    facts = {"lm_eval": {"runs": runs_facts, "tasks": tasks_facts}, "skipped_tasks": skipped, "tokenizers": tok_facts, "rows": table.num_rows}
    return ImportResult(table, "+".join(sorted(acc.kinds)), inputs, facts)
