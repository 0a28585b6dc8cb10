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

Nothing here imports lm_eval; only the likelihood import loads a tokenizer (transformers).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.log import get_logger

log = get_logger("interop.lmeval")

#: version of the export layout (in each task's ``metadata.biaskit.format``)
FORMAT = 1
KINDS = ("auto", "generate", "likelihood")
OUTPUT_TYPES = {"generate": "generate_until", "likelihood": "loglikelihood_rolling"}
#: the doc column holding the text given to the model
INPUT_COLUMN = "lm_input"
EXPORT_FILE = "biaskit_export.json"
#: the ``kind`` of the export folder's marker (:mod:`biaskit.ownership`)
MARKER_KIND = "lm-eval export"
#: the config column used when none is given, by the table's ``source``
DEFAULT_CONFIG_BY = {"bold": "domain", "holistic_bias": "axis"}
_CHUNK = 20_000  # rows per Arrow chunk while importing
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,99}$")
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")


# ============================================================================ export


@dataclass
class ExportResult:
    folder: Path
    group: str
    kind: str
    tasks: dict[str, int]  # task name -> rows
    command: str  # the lm_eval command line (also in the README)
    facts: dict[str, Any] = field(default_factory=dict)


def _config_names(values: list[Any]) -> dict[Any, str]:
    """value -> task-name suffix: lowercase [a-z0-9_]; null -> ``none``; two values that clash get a hash suffix;
    a suffix over 100 bytes keeps its head and gets a hash of the whole (:func:`biaskit.inputs.name_part`, which
    also removes known secrets first), so a 300-character domain gives a file name the file system accepts."""
    from biaskit.inputs import name_part

    base = {v: ("none" if v is None else name_part(v, limit=100)) for v in values}
    counts: dict[str, int] = {}
    for s in base.values():
        counts[s] = counts.get(s, 0) + 1
    out = {}
    for v, s in base.items():
        if counts[s] > 1:
            s = f"{s}_{hashlib.sha1(repr(v).encode()).hexdigest()[:6]}"
        out[v] = s
    return out


def _task_name(group: str, suffix: str) -> str:
    """The lm-eval task name (and file stem) of one config: at most 200 bytes, so that lm-eval's own
    ``samples_<task>_<date>.jsonl`` also fits the file system's 255-byte name limit."""
    from biaskit.inputs import path_component

    return path_component(f"{group}_{suffix}", limit=200)


def _default_kind(t: pa.Table) -> str:
    if "source" in t.column_names:
        src = set(t.column("source").unique().to_pylist())
        if src == {"holistic_bias"}:
            return "likelihood"
    return "generate"


def _default_config_by(t: pa.Table) -> str | None:
    if "source" in t.column_names:
        src = t.column("source").unique().to_pylist()
        if len(src) == 1 and DEFAULT_CONFIG_BY.get(src[0]) in t.column_names:
            return DEFAULT_CONFIG_BY[src[0]]
    return "domain" if "domain" in t.column_names else None


def _default_name(t: pa.Table) -> str:
    if "source" in t.column_names:
        src = t.column("source").unique().to_pylist()
        if len(src) == 1 and src[0]:
            from biaskit.inputs import name_part

            return "biaskit_" + name_part(src[0], limit=100)
    return "biaskit_prompts"


def generation_kwargs(
    *, max_new_tokens: int, do_sample: bool, temperature: float, top_p: float | None, top_k: int | None, until: list[str] | None
) -> dict[str, Any]:
    """lm-eval ``generation_kwargs`` for the settings (``until: []`` stops at EOS only, like ``biaskit generate``)."""
    kw: dict[str, Any] = {"until": list(until or []), "max_gen_toks": int(max_new_tokens), "do_sample": bool(do_sample)}
    if do_sample:
        kw["temperature"] = float(temperature)
        if top_p is not None:
            kw["top_p"] = float(top_p)
        if top_k is not None:
            kw["top_k"] = int(top_k)
    else:
        kw["temperature"] = 0.0
    return kw


def lm_eval_command(
    group: str, folder: Path, *, model_args: str = "pretrained=MODEL", model: str = "hf", batch_size: str = "1", output_path: str = "lm-eval-out"
) -> str:
    return (
        f"HF_DATASETS_OFFLINE=1 lm_eval --model {model} --model_args {model_args} --tasks {group} "
        f"--include_path {folder} --batch_size {batch_size} --log_samples --output_path {output_path}"
    )


@dataclass
class _ExportPlan:
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
    from biaskit.evaluate.runners.core import prompt_table
    from biaskit.ownership import claim_folder, write_owned_folder

    out_p = Path(out)
    _check_export_target(kind, out_p)
    claim = claim_folder(out_p, EXPORT_FILE, MARKER_KIND, overwrite=overwrite)
    t, inputs = prompt_table(table)
    if t.num_rows == 0:
        raise BiaskitError("E260", "the prompts table has no rows", value=inputs[0] if inputs else None, fix="export a table with prompts")
    k = _default_kind(t) if kind == "auto" else kind
    _check_generation_settings(
        k, max_new_tokens=max_new_tokens, do_sample=do_sample, temperature=temperature, top_p=top_p, top_k=top_k, samples=samples, until=until
    )
    group = _group_name(name, t)
    col = _config_column(config_by, t)
    _refuse_empty_texts(t)
    t = _with_input_column(t, k == "generate" and strip_trailing_space)
    plan = _ExportPlan(
        out=out_p,
        group=group,
        kind=k,
        config_by=col,
        configs=_configs(t, col),
        gen_kwargs=(
            generation_kwargs(max_new_tokens=max_new_tokens, do_sample=do_sample, temperature=temperature, top_p=top_p, top_k=top_k, until=until)
            if k == "generate"
            else None
        ),
        samples=samples,
        strip_trailing_space=strip_trailing_space,
        data_root=Path(data_root) if data_root is not None else (out_p.resolve() / "data"),
        inputs=inputs,
        source_sha=_source_sha(inputs),
        command=lm_eval_command(group, out_p.resolve()),
        rows=t.num_rows,
    )

    def fill(tmp: Path) -> dict[str, int]:
        tasks = _write_tasks(tmp, plan, t)
        marker.update(_write_group_files(tmp, plan, tasks))
        return tasks

    marker: dict[str, Any] = {}
    tasks = write_owned_folder(claim, fill, marker)
    return ExportResult(out_p, group, k, tasks, plan.command, {"config_by": col, "rows": t.num_rows})


def _check_export_target(kind: str, out_p: Path) -> None:
    """E260 for an unknown kind (the folder itself is checked by :func:`biaskit.ownership.claim_folder`)."""
    if kind not in KINDS:
        raise BiaskitError("E260", "unknown export kind", value=kind, options=KINDS, fix="e.g. --kind generate")


def _check_generation_settings(
    kind: str,
    *,
    max_new_tokens: int,
    do_sample: bool,
    temperature: float,
    top_p: float | None,
    top_k: int | None,
    samples: int,
    until: list[str] | None,
) -> None:
    """E260 for sampling settings on likelihood tasks; for generate tasks, the checks of ``biaskit generate``."""
    from biaskit.evaluate.runners.common import GenerationSettings

    if kind == "likelihood" and (do_sample or samples != 1 or until):
        raise BiaskitError(
            "E260",
            "sampling settings (--do-sample, --samples, --until) apply to generation, not to likelihood tasks",
            value={"do_sample": do_sample, "samples": samples, "until": until},
            fix="drop them, or pass --kind generate to export generation tasks",
        )
    if kind == "generate":
        GenerationSettings(
            max_new_tokens=max_new_tokens, do_sample=do_sample, temperature=temperature, top_k=top_k, top_p=top_p, num_return_sequences=samples
        ).check()


def _group_name(name: str | None, t: pa.Table) -> str:
    group = name or _default_name(t)
    if not _NAME.match(group):
        raise BiaskitError(
            "E260",
            "invalid task group name",
            value=group,
            fix="use letters, digits and underscores, starting with a letter (e.g. --name bold_gender)",
        )
    return group


def _config_column(config_by: str | None, t: pa.Table) -> str | None:
    col = config_by if config_by is not None else _default_config_by(t)
    if col is not None and col not in t.column_names:
        raise BiaskitError(
            "E260",
            "the --config-by column is not in the table",
            value=col,
            options=sorted(t.column_names),
            fix="name a column of the table (e.g. domain, axis), or leave --config-by out",
        )
    return col


def _refuse_empty_texts(t: pa.Table) -> None:
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


def _with_input_column(t: pa.Table, strip: bool) -> pa.Table:
    """The table with ``lm_input`` last (replacing one it has): the text, its trailing spaces cut when ``strip``."""
    import pyarrow.compute as pc

    texts = t.column("text")
    lm_input = pc.utf8_rtrim(texts, characters=" ") if strip else texts
    if INPUT_COLUMN in t.column_names:
        t = t.drop_columns([INPUT_COLUMN])
    return t.append_column(INPUT_COLUMN, lm_input)


def _configs(t: pa.Table, col: str | None) -> list[tuple[Any, str]]:
    """(config value, task-name suffix) per task: one per value of ``col`` in the order values first occur; without
    ``col`` a single task ``all``."""
    if col is None:
        return [(None, "all")]
    values = t.column(col).unique().to_pylist()
    names = _config_names(values)
    return [(v, names[v]) for v in values]


def _config_part(t: pa.Table, col: str | None, value: Any) -> pa.Table:
    """The rows of one task (all rows without ``col``; null matches null)."""
    import pyarrow.compute as pc

    if col is None:
        return t
    cv = t.column(col)
    mask = pc.is_null(cv) if value is None else pc.fill_null(pc.equal(cv, pa.scalar(value, cv.type)), False)
    return t.filter(mask)


def _source_sha(inputs: list[str]) -> str | None:
    if not inputs:
        return None
    from biaskit.io import sha256_file

    return sha256_file(inputs[0])


def _write_tasks(tmp: Path, plan: _ExportPlan, t: pa.Table) -> dict[str, int]:
    """Each task's rows (``data/<task>.parquet``) and YAML, one part cut, written and dropped in turn; task -> rows."""
    import yaml

    from biaskit.io import write_text_atomic
    from biaskit.output import write_parquet

    (tmp / "data").mkdir(parents=True)
    tasks: dict[str, int] = {}
    for value, suffix in plan.configs:
        part = _config_part(t, plan.config_by, value)
        task = _task_name(plan.group, suffix)
        write_parquet(part, tmp / "data" / f"{task}.parquet")
        cfg = _task_config(plan, task, value, part.num_rows)
        write_text_atomic(tmp / f"{task}.yaml", "# written by `biaskit export lm-eval`\n" + yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
        tasks[task] = part.num_rows
    return tasks


def _task_config(plan: _ExportPlan, task: str, value: Any, rows: int) -> dict[str, Any]:
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


def _write_group_files(tmp: Path, plan: _ExportPlan, tasks: dict[str, int]) -> dict[str, Any]:
    """The group YAML naming the tasks and the README with the lm_eval command; returns the export manifest (the
    folder's marker, written last by :func:`biaskit.ownership.write_owned_folder`)."""
    import yaml

    from biaskit.io import write_text_atomic
    from biaskit.manifest import new_manifest

    group, k = plan.group, plan.kind
    write_text_atomic(
        tmp / f"{group}.yaml",
        "# written by `biaskit export lm-eval`\n"
        + yaml.safe_dump({"group": group, "task": list(tasks), "metadata": {"version": 1.0}}, sort_keys=False),
    )
    write_text_atomic(
        tmp / "README.md", _readme(group, k, tasks, plan.out.resolve(), plan.gen_kwargs, plan.samples, plan.strip_trailing_space, plan.command)
    )
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


def _readme(group: str, kind: str, tasks: dict[str, int], folder: Path, gen_kwargs: dict | None, samples: int, strip: bool, command: str) -> str:
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


# ============================================================================ import


@dataclass
class ImportResult:
    table: pa.Table
    kind: str  # generate or likelihood (or mixed: both)
    inputs: list[str]
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Run:
    samples: Path
    task: str
    date: str | None
    results: Path | None


def _json_file(path: Path) -> dict:
    from biaskit.inputs import loads_json
    from biaskit.io import read_text_utf8

    text = read_text_utf8(path, "lm-eval results file")
    obj = loads_json(text, source=str(path), nonfinite=True, code="E262", fix="the file is damaged or cut short: run lm_eval again")
    if not isinstance(obj, dict):
        raise BiaskitError(
            "E262",
            f"{path}:1: an lm-eval results file holds a JSON object",
            value=type(obj).__name__,
            fix="give the folder lm_eval --output_path wrote",
        )
    return obj


def _find_runs(source: Path) -> list[_Run]:
    if not source.exists():
        raise BiaskitError(
            "E261", "lm-eval output not found", value=str(source), fix="give the folder passed to lm_eval --output_path, or one samples_*.jsonl file"
        )
    if source.is_file():
        files = [source]
    else:
        files = sorted(p for p in source.rglob("samples_*.jsonl") if p.is_file())
        if not files:
            raise BiaskitError(
                "E261",
                "no lm-eval samples files (samples_<task>_<date>.jsonl) in the folder",
                value=str(source),
                fix="run lm_eval with --log_samples --output_path FOLDER and give that folder",
            )
    runs = []
    for f in files:
        m = _SAMPLES.match(f.name)
        task, date = (m.group("task"), m.group("date")) if m else (None, None)
        res = f.parent / f"results_{date}.json" if date else None
        if res is not None and not res.is_file():
            cands = sorted(f.parent.glob("results_*.json"))
            res = cands[-1] if len(cands) == 1 else None
        runs.append(_Run(f, task or f.stem, date, res))
    return runs


def _biaskit_meta(cfg: Any) -> dict | None:
    meta = cfg.get("metadata") if isinstance(cfg, dict) else None
    b = meta.get("biaskit") if isinstance(meta, dict) else None
    return b if isinstance(b, dict) else None


def _model_args(results: dict) -> dict[str, str]:
    raw = (results.get("config") or {}).get("model_args")
    if isinstance(raw, dict):
        return {str(k): str(v) for k, v in raw.items()}
    out: dict[str, str] = {}
    if isinstance(raw, str):
        for part in raw.split(","):
            if "=" in part:
                key, val = part.split("=", 1)
                out[key.strip()] = val.strip()
    return out


def _read_samples(path: Path):
    """(line number, record) for every line, streamed; E262 naming file and line for a line that is not a JSON object."""
    from biaskit.inputs import loads_json
    from biaskit.io import check_utf8

    check_utf8(path, "lm-eval samples file")
    seen = False
    with open(path, encoding="utf-8-sig") as fh:  # a UTF-8 byte-order mark at the start is fine
        for no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = loads_json(line, source=str(path), line=no, nonfinite=True, code="E262")
            except BiaskitError as exc:
                if exc.code != "E262":
                    raise
                cut = "" if line.endswith("\n") else " (the line has no end: the file was cut short)"
                raise BiaskitError(
                    "E262",
                    f"{path}:{no}: not a complete JSON object{cut}: {exc.what.partition('not valid JSON (')[2][:-1]}",
                    value=line[:80],
                    fix="the samples file is damaged or was cut short: run lm_eval again",
                ) from None
            if not isinstance(rec, dict) or not isinstance(rec.get("doc"), dict) or "resps" not in rec:
                raise BiaskitError(
                    "E262",
                    f"{path}:{no}: not an lm-eval sample (a JSON object with doc and resps)",
                    value=line[:80],
                    fix="give the samples_*.jsonl files lm_eval --log_samples wrote",
                )
            seen = True
            yield no, rec
    if not seen:
        raise BiaskitError("E262", f"{path}:1: the samples file is empty", value=str(path), fix="run lm_eval again with --log_samples")


def _kind_of(rec: dict, cfg: dict | None) -> str:
    ot = cfg.get("output_type") if isinstance(cfg, dict) else None
    if ot == "generate_until":
        return "generate"
    if ot == "loglikelihood_rolling":
        return "likelihood"
    args = rec.get("arguments")
    first = args.get("gen_args_0") if isinstance(args, dict) else None
    if isinstance(first, dict):
        return "generate" if isinstance(first.get("arg_1"), dict) else "likelihood"
    outs = _flat(rec.get("resps"))
    return "generate" if outs and isinstance(outs[0], str) else "likelihood"


def _flat(resps: Any) -> list:
    """lm-eval's ``resps``: one list per request (one request per doc here), each with one entry per repeat."""
    if isinstance(resps, list) and resps and isinstance(resps[0], list):
        return list(resps[0])
    return list(resps) if isinstance(resps, list) else [resps]


def _ll_value(v: Any) -> float | None:
    """The log-likelihood of a rolling sample: lm-eval logs it as a string ("-30.04"), older versions as a number."""
    while isinstance(v, list) and v:
        v = v[0]
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _load_tokenizer(spec: str, model_args: dict[str, str]):
    from biaskit.evaluate.runners.hf import _locate, _transformers

    where, gguf, _ = _locate(spec, "causal")
    kw: dict[str, Any] = {}
    gg = gguf or model_args.get("gguf_file")
    if gg:
        kw["gguf_file"] = gg
    if model_args.get("trust_remote_code", "").lower() == "true":
        kw["trust_remote_code"] = True
    return _transformers().AutoTokenizer.from_pretrained(where, **kw)


def _token_counts(texts: list[str], tokenizer: str | None, model_args: dict[str, str], where: str) -> tuple[list[int], str]:
    """Tokens lm-eval scored per sentence: the tokenizer's own encoding (lm-eval's ``tok_encode``; a BOS the
    tokenizer adds is scored too, unless model_args set ``add_bos_token``)."""
    spec = tokenizer or model_args.get("tokenizer") or model_args.get("pretrained")
    if not spec:
        raise BiaskitError(
            "E265",
            "per-token NLL needs the model's tokenizer, and the lm-eval output does not name the model",
            value=where,
            fix="pass --tokenizer (the model folder, .gguf file or Hub id lm_eval ran)",
        )
    try:
        tok = _load_tokenizer(spec, model_args if not tokenizer else {})
    except BiaskitError as exc:
        raise BiaskitError(
            "E265",
            f"cannot load the tokenizer to count tokens: {exc.what}",
            value=spec,
            fix="pass --tokenizer with a local model folder, .gguf file or cached Hub id",
        ) from None
    except Exception as exc:  # noqa: BLE001 - transformers raises many kinds here
        raise BiaskitError(
            "E265",
            f"cannot load the tokenizer to count tokens: {str(exc).splitlines()[0][:200]}",
            value=spec,
            fix="pass --tokenizer with a local model folder, .gguf file or cached Hub id",
        ) from None
    kw: dict[str, Any] = {}
    bos = model_args.get("add_bos_token", "").lower()
    if bos in ("true", "false"):
        kw["add_special_tokens"] = bos == "true"
    counts: list[int] = []
    for i in range(0, len(texts), 10_000):  # in slices: only the lengths are kept
        counts.extend(len(x) for x in tok(texts[i : i + 10_000], **kw)["input_ids"])
    return counts, spec


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
    from biaskit.schema import conform

    src = Path(source)
    ours, skipped = _select_runs(_find_runs(src), group)
    acc = _Rows()
    inputs: list[str] = []
    tasks_facts: dict[str, dict] = {}
    runs_facts: dict[str, dict] = {}
    for r, res, cfg in ours:
        inputs.append(str(r.samples))
        run = _run_info(r, res, cfg, model, tokenizer)
        if r.results is not None and str(r.results) not in runs_facts:
            inputs.append(str(r.results))
            runs_facts[str(r.results)] = _run_facts(res, run.model_args)
        tasks_facts[r.task] = _read_run(acc, run)
    table = acc.table()
    table, tok_facts = _add_nll(table, acc, str(src))
    table = conform(table, "generations")
    facts = {"lm_eval": {"runs": runs_facts, "tasks": tasks_facts}, "skipped_tasks": skipped, "tokenizers": tok_facts, "rows": table.num_rows}
    return ImportResult(table, "+".join(sorted(acc.kinds)), inputs, facts)


def _select_runs(runs: list[_Run], group: str | None) -> tuple[list[tuple[_Run, dict | None, dict | None]], list[dict]]:
    """The runs to read, each with its results file and task config, and the tasks skipped as not biaskit's (a
    warning each); E261 when nothing is left to read."""
    results_cache: dict[Path, dict] = {}
    ours: list[tuple[_Run, dict | None, dict | None]] = []
    skipped: list[dict] = []
    for r in runs:
        res = None
        if r.results is not None:
            res = results_cache.get(r.results)
            if res is None:
                res = results_cache[r.results] = _json_file(r.results)
        cfg = ((res or {}).get("configs") or {}).get(r.task) if res else None
        if res is not None and _biaskit_meta(cfg) is None:
            skipped.append({"task": r.task, "samples": str(r.samples), "results": str(r.results)})
            continue
        if group is not None and group not in (r.task, (_biaskit_meta(cfg) or {}).get("group")):
            continue
        ours.append((r, res, cfg))
    if not ours and group is not None:
        found = sorted({r.task for r in runs})
        raise BiaskitError(
            "E261",
            "no biaskit task of this group in the lm-eval output",
            value=group,
            options=found,
            fix="give the --name used with `biaskit export lm-eval`, or one of the task names",
        )
    if not ours:
        s = skipped[0]
        raise BiaskitError(
            "E261",
            f"{s['samples']}:1: lm-eval task {s['task']!r} was not exported by biaskit (its config in "
            f"{Path(s['results']).name} has no metadata.biaskit)",
            value=[x["task"] for x in skipped],
            fix="give the output of an lm_eval run on a task folder written by `biaskit export lm-eval`",
        )
    for s in skipped:
        log.warning("skipping lm-eval task %s (%s): not exported by biaskit", s["task"], s["samples"])
    return ours, skipped


@dataclass
class _RunInfo:
    """One samples file to read, with what all its rows share."""

    run: _Run
    results: dict | None
    cfg: dict | None
    model_args: dict[str, str]
    model_name: str
    backend: str
    seed: Any
    tokenizer_key: tuple  # (tokenizer, model_args): likelihood rows with the same key are counted by one tokenizer


def _public_name(name: str) -> str:
    """A model name as the ``model`` column may hold it: a URL (an API endpoint as lm-eval's model name) without
    its user info and secret query values, which are remembered as secrets so no other output shows them; a local
    path (lm-eval's ``pretrained=/models/smol`` is its model name) as its last part (``smol``), as biaskit's
    served-model runs record it, so no table, and no Hub card made from it, names the machine's folders."""
    from biaskit.evaluate.runners.openai import public_model_id
    from biaskit.secrets import public_url, redact_data

    name = str(name)
    if name.startswith("file://") or "://" not in name:
        return redact_data(public_model_id(name))
    return redact_data(public_url(name))


def _run_info(r: _Run, res: dict | None, cfg: dict | None, model: str | None, tokenizer: str | None) -> _RunInfo:
    margs = _model_args(res) if res else {}
    return _RunInfo(
        run=r,
        results=res,
        cfg=cfg,
        model_args=margs,
        model_name=_public_name(model or (res or {}).get("model_name") or margs.get("pretrained") or "lm-eval"),
        backend="lm-eval:" + str(((res or {}).get("config") or {}).get("model") or "unknown"),
        seed=((res or {}).get("config") or {}).get("torch_seed") if res else None,
        tokenizer_key=(tokenizer, tuple(sorted(margs.items()))),
    )


def _run_facts(res: dict | None, margs: dict[str, str]) -> dict[str, Any]:
    """What the manifest keeps of an lm-eval results file (``lm_eval.runs``): versions, model, settings, seeds."""
    rc = (res or {}).get("config") or {}
    return {
        "lm_eval_version": (res or {}).get("lm_eval_version"),
        "git_hash": (res or {}).get("git_hash"),
        "date": (res or {}).get("date"),
        "model": rc.get("model"),
        "model_name": (res or {}).get("model_name"),
        "model_args": margs,
        "model_revision": rc.get("model_revision"),
        "model_sha": rc.get("model_sha"),
        "model_dtype": rc.get("model_dtype"),
        "batch_size": rc.get("batch_size"),
        "device": rc.get("device"),
        "seeds": {k: rc.get(k) for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed") if k in rc},
        "transformers_version": (res or {}).get("transformers_version"),
        "max_length": (res or {}).get("max_length"),
        "eot_token_id": (res or {}).get("eot_token_id"),
    }


@dataclass
class _Rows:
    """The rows read so far: the current chunk as dicts (turned into Arrow every ``_CHUNK`` rows: bounded memory)
    and the chunks done; where each (prompt, model, kind, sample) was read; the kinds seen; and for each likelihood
    row (global index) its log-likelihood, sentence and tokenizer key, for the per-token NLL once all are read."""

    rows: list[dict] = field(default_factory=list)
    chunks: list[pa.Table] = field(default_factory=list)
    n_done: int = 0
    where_of: dict[tuple, tuple[Path, int]] = field(default_factory=dict)  # key -> (samples file, line)
    kinds: set[str] = field(default_factory=set)
    ll_rows: list[int] = field(default_factory=list)
    ll_vals: list[float] = field(default_factory=list)
    ll_texts: list[str] = field(default_factory=list)
    ll_spec: list[tuple] = field(default_factory=list)

    def flush(self) -> None:
        self.chunks.append(_rows_table(self.rows))
        self.n_done += len(self.rows)
        self.rows = []

    def claim(self, key: tuple, samples: Path, no: int, what: str) -> None:
        """Note that ``key`` was read at ``samples:no``; E264 when it was read before."""
        if key in self.where_of:
            first, line = self.where_of[key]
            raise BiaskitError(
                "E264",
                f"{samples}:{no}: {what} was already read at {first}:{line}",
                value=key[0],
                fix="import one lm_eval run per model, or give one samples file",
            )
        self.where_of[key] = (samples, no)

    def table(self) -> pa.Table:
        """All rows read, as one Arrow table."""
        if self.rows:
            self.flush()
        chunks, self.chunks = self.chunks, []
        return chunks[0] if len(chunks) == 1 else pa.concat_tables(chunks, promote_options="permissive")


def _read_run(acc: _Rows, run: _RunInfo) -> dict[str, Any]:
    """Read one samples file into ``acc``; its facts for the manifest (``lm_eval.tasks``)."""
    r, res, cfg = run.run, run.results, run.cfg
    gen_kwargs_seen = None
    n_docs, first_rec = 0, None
    for no, rec in _read_samples(r.samples):
        n_docs += 1
        first_rec = first_rec or rec
        if len(acc.rows) >= _CHUNK:
            acc.flush()
        doc = rec["doc"]
        pid = _check_doc(doc, r.samples, no)
        k = _kind_of(rec, cfg)
        acc.kinds.add(k)
        base = {c: v for c, v in doc.items() if c != INPUT_COLUMN}
        outs = _flat(rec["resps"])
        if k == "generate":
            gen_kwargs_seen = _add_generations(acc, run, no, rec, pid, base, outs)
        else:
            _add_likelihood(acc, run, no, rec, pid, base, outs)
    meta = _biaskit_meta(cfg) or {}
    exported = meta.get("rows")
    facts = {
        "samples_file": str(r.samples),
        "results_file": str(r.results) if r.results else None,
        "task_hash": ((res or {}).get("task_hashes") or {}).get(r.task),
        "output_type": (cfg or {}).get("output_type") or OUTPUT_TYPES[_kind_of(first_rec, cfg)],
        "generation_kwargs": gen_kwargs_seen if gen_kwargs_seen is not None else (cfg or {}).get("generation_kwargs"),
        "repeats": (cfg or {}).get("repeats"),
        "docs": n_docs,
        "exported_docs": exported,
        "n_samples": ((res or {}).get("n-samples") or {}).get(r.task),
        "biaskit_export": meta or None,
    }
    if isinstance(exported, int) and exported != n_docs:
        log.warning("%s: %d of %d exported prompts have samples (lm_eval --limit?)", r.samples.name, n_docs, exported)
    return facts


def _check_doc(doc: dict, samples: Path, no: int) -> str:
    """The doc's prompt_id; E263 when the doc lacks the columns of a biaskit export."""
    pid = doc.get("prompt_id")
    if not isinstance(pid, str) or not pid:
        raise BiaskitError(
            "E263",
            f"{samples}:{no}: the sample's doc has no biaskit prompt_id",
            value=sorted(doc)[:12],
            fix="run lm_eval on a task folder written by `biaskit export lm-eval` (its docs carry the ids)",
        )
    if not isinstance(doc.get("text"), str) or not isinstance(doc.get(INPUT_COLUMN), str):
        raise BiaskitError(
            "E263",
            f"{samples}:{no}: the sample's doc lacks the text or {INPUT_COLUMN} column of a biaskit export",
            value=pid,
            fix="run lm_eval on a task folder written by `biaskit export lm-eval`",
        )
    return pid


def _add_generations(acc: _Rows, run: _RunInfo, no: int, rec: dict, pid: str, base: dict, outs: list) -> dict:
    """The rows of one generate_until sample, one per repeat; returns the generation_kwargs it ran with."""
    from biaskit.evaluate.runners.common import join_continuation

    r, doc = run.run, rec["doc"]
    args = rec.get("arguments") or {}
    gk = (args.get("gen_args_0") or {}).get("arg_1") if isinstance(args, dict) else None
    gk = gk if isinstance(gk, dict) else (run.cfg or {}).get("generation_kwargs") or {}
    stripped = doc[INPUT_COLUMN] != doc["text"]
    gconf = json.dumps(
        {
            "engine": "lm-eval",
            "lm_eval_task": r.task,
            "output_type": "generate_until",
            "generation_kwargs": gk,
            "repeats": len(outs),
            "strip_trailing_space": stripped,
        },
        sort_keys=True,
        default=str,
    )
    if not outs or not all(isinstance(o, str) for o in outs):
        raise BiaskitError(
            "E262",
            f"{r.samples}:{no}: resps of a generate_until sample must be strings",
            value=repr(rec["resps"])[:80],
            fix="give the samples file of a generate_until task",
        )
    for j, raw in enumerate(outs):
        cont, full = join_continuation(doc["text"], doc[INPUT_COLUMN], stripped, raw, False)
        acc.rows.append(
            {
                **base,
                "sample_index": j,
                "model": run.model_name,
                "kind": "generate",
                "backend": run.backend,
                "seed": run.seed,
                "generation_config": gconf,
                "continuation": cont,
                "full_text": full,
                "truncated": None,
                "error": None,
                "model_revision": None,
            }
        )
        acc.claim((pid, run.model_name, "generate", j), r.samples, no, f"prompt {pid!r} (sample {j}, model {run.model_name})")
    return gk


def _add_likelihood(acc: _Rows, run: _RunInfo, no: int, rec: dict, pid: str, base: dict, outs: list) -> None:
    """The row of one loglikelihood_rolling sample; its log-likelihood waits in ``acc`` for the token counts."""
    r = run.run
    ll = _ll_value(outs[0] if outs else None)
    if ll is None or not math.isfinite(ll):
        raise BiaskitError(
            "E262",
            f"{r.samples}:{no}: resps of a loglikelihood_rolling sample must hold one number",
            value=repr(rec["resps"])[:80],
            fix="give the samples file of a loglikelihood_rolling task",
        )
    gconf = json.dumps(
        {
            "engine": "lm-eval",
            "lm_eval_task": r.task,
            "output_type": "loglikelihood_rolling",
            "prefix_token": "bos (else eos), every sentence token scored (= biaskit likelihood --bos yes)",
        },
        sort_keys=True,
    )
    acc.rows.append(
        {
            **base,
            "sample_index": 0,
            "model": run.model_name,
            "kind": "likelihood",
            "backend": run.backend,
            "seed": None,
            "generation_config": gconf,
            "truncated": None,
            "error": None,
            "model_revision": None,
        }
    )
    acc.ll_rows.append(acc.n_done + len(acc.rows) - 1)
    acc.ll_vals.append(ll)
    acc.ll_texts.append(rec["doc"][INPUT_COLUMN])
    acc.ll_spec.append(run.tokenizer_key)
    acc.claim((pid, run.model_name, "likelihood", 0), r.samples, no, f"prompt {pid!r} (model {run.model_name})")


def _add_nll(table: pa.Table, acc: _Rows, where: str) -> tuple[pa.Table, dict[str, int]]:
    """Likelihood rows get ``nll_mean``/``perplexity``/``n_tokens`` from the summed log-likelihood and the tokenizer's
    token count (``error`` for a sentence with no token); returns the table and tokenizer -> sentences counted."""
    tok_facts: dict[str, int] = {}
    if not acc.ll_rows:
        return table, tok_facts
    nll: list[float | None] = [None] * table.num_rows
    ppl: list[float | None] = [None] * table.num_rows
    ntok: list[int | None] = [None] * table.num_rows
    errs = table.column("error").to_pylist()
    by_spec: dict[tuple, list[int]] = {}
    for k, spec_key in enumerate(acc.ll_spec):
        by_spec.setdefault(spec_key, []).append(k)
    for (tk, margs_t), ks in by_spec.items():
        counts, spec = _token_counts([acc.ll_texts[k] for k in ks], tk, dict(margs_t), where)
        tok_facts[spec] = len(ks)
        for k, n in zip(ks, counts):
            i = acc.ll_rows[k]
            ntok[i] = n
            if n < 1:
                errs[i] = "no token to score"
                continue
            nm = -acc.ll_vals[k] / n
            nll[i], ppl[i] = nm, (math.exp(nm) if nm < 700 else math.inf)
    for name, vals, typ in (
        ("nll_mean", nll, pa.float64()),
        ("perplexity", ppl, pa.float64()),
        ("n_tokens", ntok, pa.int64()),
        ("error", errs, pa.string()),
    ):
        arr = pa.array(vals, type=typ)
        table = table.set_column(table.column_names.index(name), name, arr) if name in table.column_names else table.append_column(name, arr)
    return table, tok_facts


def _rows_table(rows: list[dict]) -> pa.Table:
    """Rows as an Arrow table with the stage types for known columns (other doc columns as inferred)."""
    from biaskit.schema import GENERATIONS, PROMPTS

    types: dict[str, pa.DataType] = {}
    for st in (PROMPTS, GENERATIONS):
        for c in st.columns:
            types[c.name] = c.type
    cols: list[str] = []
    seen: set[str] = set()
    for r in rows:
        for c in r:
            if c not in seen:
                seen.add(c)
                cols.append(c)
    arrays = {}
    for c in cols:
        vals = [r.get(c) for r in rows]
        if c in types:
            arrays[c] = pa.array(vals, type=types[c])
        else:
            arrays[c] = pa.array(vals)
    return pa.table(arrays)
