"""Names and formats shared by the lm-eval export and import (:mod:`biaskit.interop.lmeval`): the export layout's
version and file names, the output types by kind, the doc column given to the model, task and group names, the
generation settings as lm-eval ``generation_kwargs`` and the ``lm_eval`` command line."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.evaluate.runners.common import GenerationSettings
from biaskit.inputs import name_part, path_component

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


def config_names(values: list[Any]) -> dict[Any, str]:
    """value -> task-name suffix: lowercase [a-z0-9_]; null -> ``none``; two values that clash get a hash suffix;
    a suffix over 100 bytes keeps its head and gets a hash of the whole (:func:`biaskit.inputs.name_part`, which
    also removes known secrets first), so a 300-character domain gives a file name the file system accepts."""
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


def task_name(group: str, suffix: str) -> str:
    """The lm-eval task name (and file stem) of one config: at most 200 bytes, so that lm-eval's own
    ``samples_<task>_<date>.jsonl`` also fits the file system's 255-byte name limit."""
    return path_component(f"{group}_{suffix}", limit=200)


def default_kind(t: pa.Table) -> str:
    if "source" in t.column_names:
        src = set(t.column("source").unique().to_pylist())
        if src == {"holistic_bias"}:
            return "likelihood"
    return "generate"


def default_config_by(t: pa.Table) -> str | None:
    if "source" in t.column_names:
        src = t.column("source").unique().to_pylist()
        if len(src) == 1 and DEFAULT_CONFIG_BY.get(src[0]) in t.column_names:
            return DEFAULT_CONFIG_BY[src[0]]
    return "domain" if "domain" in t.column_names else None


def default_name(t: pa.Table) -> str:
    if "source" in t.column_names:
        src = t.column("source").unique().to_pylist()
        if len(src) == 1 and src[0]:
            return "biaskit_" + name_part(src[0], limit=100)
    return "biaskit_prompts"


def generation_kwargs(s: GenerationSettings, until: list[str] | None) -> dict[str, Any]:
    """lm-eval ``generation_kwargs`` for the decoding settings ``s`` (``until: []`` stops at EOS only, like
    ``biaskit generate``)."""
    kw: dict[str, Any] = {"until": list(until or []), "max_gen_toks": int(s.max_new_tokens), "do_sample": bool(s.do_sample)}
    if s.do_sample:
        kw["temperature"] = float(s.temperature)
        if s.top_p is not None:
            kw["top_p"] = float(s.top_p)
        if s.top_k is not None:
            kw["top_k"] = int(s.top_k)
    else:
        kw["temperature"] = 0.0
    return kw


def lm_eval_command(group: str, folder: Path, *, model_args: str = "pretrained=MODEL", model: str = "hf", batch_size: str = "1") -> str:
    """The lm_eval command that runs the task group ``group`` of ``folder`` and logs its samples to ``lm-eval-out``."""
    return (
        f"HF_DATASETS_OFFLINE=1 lm_eval --model {model} --model_args {model_args} --tasks {group} "
        f"--include_path {folder} --batch_size {batch_size} --log_samples --output_path lm-eval-out"
    )
