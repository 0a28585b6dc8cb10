"""The lm-eval export's parts (:func:`biaskit.interop.lmeval.export_lmeval`): the checks, the plan, the task
YAMLs and data files, the group YAML, the README and the export manifest."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from biaskit import hashing
from biaskit.errors import BiaskitError, check_choice
from biaskit.evaluate.runners.common import GenerationSettings
from biaskit.interop.lmeval_format import (
    FORMAT,
    INPUT_COLUMN,
    KINDS,
    OUTPUT_TYPES,
    config_names,
    default_config_by,
    default_name,
    lm_eval_command,
    task_name,
)
from biaskit.io import write_text_atomic
from biaskit.manifest import new_manifest
from biaskit.output import write_parquet

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,99}$")


@dataclass
class ExportResult:
    folder: Path
    group: str
    kind: str
    tasks: dict[str, int]  # task name -> rows
    command: str  # the lm_eval command line (also in the README)
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class ExportPlan:
    """What an export writes, worked out (and checked) before anything is written."""

    out: Path
    group: str
    kind: str  # generate or likelihood
    config_by: str | None
    configs: list[tuple[Any, str]]  # (config value, task-name suffix), one per task, in the order values first occur
    gen_kwargs: dict[str, Any] | None  # generate only
    samples: int
    strip_trailing_space: bool
    data_root: Path  # the folder the task YAMLs name for their data files
    inputs: list[str]
    source_sha: str | None
    command: str
    rows: int


def check_export_target(kind: str, out_p: Path) -> None:
    """E260 for an unknown kind (the folder itself is checked by :func:`biaskit.ownership.claim_folder`)."""
    check_choice("E260", "unknown export kind", kind, KINDS, fix="e.g. --kind generate")


def check_generation_settings(kind: str, s: GenerationSettings, until: list[str] | None) -> None:
    """E260 for sampling settings on likelihood tasks; for generate tasks, the checks of ``biaskit generate``
    (``s.num_return_sequences``: the samples per prompt)."""
    if kind == "likelihood" and (s.do_sample or s.num_return_sequences != 1 or until):
        raise BiaskitError(
            "E260",
            "sampling settings (--do-sample, --samples, --until) apply to generation, not to likelihood tasks",
            value={"do_sample": s.do_sample, "samples": s.num_return_sequences, "until": until},
            fix="drop them, or pass --kind generate to export generation tasks",
        )
    if kind == "generate":
        s.check()


def group_name(name: str | None, t: pa.Table) -> str:
    group = name or default_name(t)
    if not _NAME.match(group):
        raise BiaskitError(
            "E260",
            "invalid task group name",
            value=group,
            fix="use letters, digits and underscores, starting with a letter (e.g. --name bold_gender)",
        )
    return group


def config_column(config_by: str | None, t: pa.Table) -> str | None:
    col = config_by if config_by is not None else default_config_by(t)
    if col is not None and col not in t.column_names:
        raise BiaskitError(
            "E260",
            "the --config-by column is not in the table",
            value=col,
            options=sorted(t.column_names),
            fix="name a column of the table (e.g. domain, axis), or leave --config-by out",
        )
    return col


def refuse_empty_texts(t: pa.Table) -> None:
    import pyarrow.compute as pc

    empty = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(t.column("text")), ""), True)
    n_empty = pc.sum(empty).as_py() or 0
    if n_empty:
        first = t.column("prompt_id").filter(empty)[0].as_py()
        raise BiaskitError(
            "E260",
            f"{n_empty} prompt(s) have an empty text, which lm-eval cannot run",
            value=first,
            fix="drop the empty prompts first (e.g. `biaskit hub load` drops empty BOLD prompts)",
        )


def with_input_column(t: pa.Table, strip: bool) -> pa.Table:
    """The table with ``lm_input`` last (replacing one it has): the text, its trailing spaces cut when ``strip``."""
    import pyarrow.compute as pc

    texts = t.column("text")
    lm_input = pc.utf8_rtrim(texts, characters=" ") if strip else texts
    if INPUT_COLUMN in t.column_names:
        t = t.drop_columns([INPUT_COLUMN])
    return t.append_column(INPUT_COLUMN, lm_input)


def task_configs(t: pa.Table, col: str | None) -> list[tuple[Any, str]]:
    """(config value, task-name suffix) per task: one per value of ``col`` in the order values first occur; without
    ``col`` a single task ``all``."""
    if col is None:
        return [(None, "all")]
    values = t.column(col).unique().to_pylist()
    names = config_names(values)
    return [(v, names[v]) for v in values]


def _config_part(t: pa.Table, col: str | None, value: Any) -> pa.Table:
    """The rows of one task (all rows without ``col``; null matches null)."""
    import pyarrow.compute as pc

    if col is None:
        return t
    cv = t.column(col)
    mask = pc.is_null(cv) if value is None else pc.fill_null(pc.equal(cv, pa.scalar(value, cv.type)), False)
    return t.filter(mask)


def inputs_sha256(inputs: list[str]) -> str | None:
    if not inputs:
        return None

    return hashing.sha256_file(inputs[0])


def write_tasks(tmp: Path, plan: ExportPlan, t: pa.Table) -> dict[str, int]:
    """Each task's rows (``data/<task>.parquet``) and YAML, one part cut, written and dropped in turn; task -> rows."""
    (tmp / "data").mkdir(parents=True)
    tasks: dict[str, int] = {}
    for value, suffix in plan.configs:
        part = _config_part(t, plan.config_by, value)
        task = task_name(plan.group, suffix)
        write_parquet(part, tmp / "data" / f"{task}.parquet")
        cfg = _task_config(plan, task, value, part.num_rows)
        write_text_atomic(tmp / f"{task}.yaml", "# written by `biaskit export lm-eval`\n" + yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
        tasks[task] = part.num_rows
    return tasks


def _task_config(plan: ExportPlan, task: str, value: Any, rows: int) -> dict[str, Any]:
    """One task's lm-eval YAML config, with what biaskit needs back under ``metadata.biaskit``."""
    k = plan.kind
    meta = {
        "format": FORMAT,
        "kind": k,
        "group": plan.group,
        "config_by": plan.config_by,
        "config": value,
        "rows": rows,
        "source_table": plan.inputs[0] if plan.inputs else None,
        "source_sha256": plan.source_sha,
        "strip_trailing_space": bool(plan.strip_trailing_space) if k == "generate" else False,
    }
    cfg: dict[str, Any] = {
        "task": task,
        "dataset_path": "parquet",
        "dataset_kwargs": {"data_files": {"test": str(plan.data_root / f"{task}.parquet")}},
        "test_split": "test",
        "output_type": OUTPUT_TYPES[k],
    }
    if k == "generate":
        cfg.update(
            {
                "doc_to_text": INPUT_COLUMN,
                "doc_to_target": "",
                "generation_kwargs": plan.gen_kwargs,
                "repeats": int(plan.samples),
                "metric_list": [{"metric": "bypass"}],
            }
        )
    else:
        cfg.update({"doc_to_text": "", "doc_to_target": INPUT_COLUMN})
    cfg["metadata"] = {"version": 1.0, "biaskit": meta}
    return cfg


def write_group_files(tmp: Path, plan: ExportPlan, tasks: dict[str, int]) -> dict[str, Any]:
    """The group YAML naming the tasks and the README with the lm_eval command; returns the export manifest (the
    folder's marker, written last by :func:`biaskit.ownership.write_owned_folder`)."""
    group, k = plan.group, plan.kind
    write_text_atomic(
        tmp / f"{group}.yaml",
        "# written by `biaskit export lm-eval`\n"
        + yaml.safe_dump({"group": group, "task": list(tasks), "metadata": {"version": 1.0}}, sort_keys=False),
    )
    write_text_atomic(tmp / "README.md", _readme(plan, tasks))
    man = new_manifest(
        "biaskit export lm-eval",
        inputs=plan.inputs,
        config={
            "name": group,
            "kind": k,
            "config_by": plan.config_by,
            "generation_kwargs": plan.gen_kwargs,
            "samples": plan.samples,
            "strip_trailing_space": plan.strip_trailing_space,
            "data_root": str(plan.data_root),
        },
        extra={"tasks": tasks, "rows": plan.rows, "format": FORMAT},
    )
    return man


def _readme(plan: ExportPlan, tasks: dict[str, int]) -> str:
    """The README of the task folder of ``plan`` (``tasks``: task name -> rows): what the tasks ask, how to run them."""
    group, kind, folder, gen_kwargs = plan.group, plan.kind, plan.out.resolve(), plan.gen_kwargs
    samples, strip, command = plan.samples, plan.strip_trailing_space, plan.command
    rows = "\n".join(f"| `{t}` | {n} |" for t, n in tasks.items())
    what = (
        "`generate_until`: each prompt is continued; settings (lm-eval `generation_kwargs`): "
        f"`{json.dumps(gen_kwargs)}`, {samples} sample(s) per prompt (`repeats`)."
        + (
            " Prompts are given without their trailing spaces (column `lm_input`), as `biaskit generate` does;"
            " `biaskit import lm-eval` puts the text back together."
            if strip
            else ""
        )
        if kind == "generate"
        else "`loglikelihood_rolling`: the log-likelihood of each sentence (column `lm_input`), every token scored after "
        "the tokenizer's BOS (else EOS) token, which is `biaskit likelihood --bos yes`."
    )
    return f"""# lm-eval tasks `{group}` (written by `biaskit export lm-eval`)

{what}

| task | docs |
|---|---|
{rows}

Each doc carries the prompt's biaskit columns (`prompt_id`, `text`, ...); the data files are under `data/` and
the task YAMLs name them by absolute path ({folder / "data"}): export again (or pass `--data-root`) if
the folder moves to another machine.

Run (offline, one machine; replace MODEL with a model folder or Hub id):

```bash
{command}
```

With vLLM on a GPU node (data parallel over 8 GPUs):

```bash
{lm_eval_command(group, folder, model="vllm", model_args="pretrained=MODEL,data_parallel_size=8,tensor_parallel_size=1,dtype=auto", batch_size="auto")}
```

Then bring the samples back into biaskit:

```bash
biaskit import lm-eval lm-eval-out --out {"generations" if kind == "generate" else "likelihoods"}.parquet
```

See docs/lm-eval.md in biaskit for how this compares with `biaskit {kind}`.
"""
