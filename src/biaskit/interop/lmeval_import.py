"""The lm-eval import's parts (:func:`biaskit.interop.lmeval.import_lmeval`): finding the samples and results files,
reading them line by line, the rows of generate_until and loglikelihood_rolling samples, and the per-token NLL."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners._hf_base import transformers_module
from biaskit.evaluate.runners.common import join_continuation, public_model_id
from biaskit.evaluate.runners.hf import locate
from biaskit.inputs import loads_json
from biaskit.interop.lmeval_format import INPUT_COLUMN, OUTPUT_TYPES
from biaskit.io import check_utf8, read_text_utf8
from biaskit.log import get_logger
from biaskit.schema import GENERATIONS, PROMPTS
from biaskit.secrets import public_url, redact_data

log = get_logger("interop.lmeval")

_CHUNK = 20_000  # rows per Arrow chunk while importing
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")


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


def find_runs(source: Path) -> list[_Run]:
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
    where, gguf, _ = locate(spec, "causal")
    kw: dict[str, Any] = {}
    gg = gguf or model_args.get("gguf_file")
    if gg:
        kw["gguf_file"] = gg
    if model_args.get("trust_remote_code", "").lower() == "true":
        kw["trust_remote_code"] = True
    return transformers_module().AutoTokenizer.from_pretrained(where, **kw)


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


def select_runs(runs: list[_Run], group: str | None) -> tuple[list[tuple[_Run, dict | None, dict | None]], list[dict]]:
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
    name = str(name)
    if name.startswith("file://") or "://" not in name:
        return redact_data(public_model_id(name))
    return redact_data(public_url(name))


def run_info(r: _Run, res: dict | None, cfg: dict | None, model: str | None, tokenizer: str | None) -> _RunInfo:
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


def run_facts(res: dict | None, margs: dict[str, str]) -> dict[str, Any]:
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
class ReadRows:
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


def read_run(acc: ReadRows, run: _RunInfo) -> dict[str, Any]:
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
        sample = _Sample(no, rec, pid, {c: v for c, v in doc.items() if c != INPUT_COLUMN}, _flat(rec["resps"]))
        if k == "generate":
            gen_kwargs_seen = _add_generations(acc, run, sample)
        else:
            _add_likelihood(acc, run, sample)
    assert first_rec is not None  # _read_samples raises E262 for an empty file
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


@dataclass(frozen=True)
class _Sample:
    """One record of a samples file: its line ``no``, the record, its doc's ``prompt_id``, the doc's columns a
    row carries (``base``) and the model's answers (``outs``, one per repeat)."""

    no: int
    rec: dict
    pid: str
    base: dict
    outs: list


def _add_generations(acc: ReadRows, run: _RunInfo, sample: _Sample) -> dict:
    """The rows of one generate_until sample, one per repeat; returns the generation_kwargs it ran with."""
    no, rec, pid, base, outs = sample.no, sample.rec, sample.pid, sample.base, sample.outs
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


def _add_likelihood(acc: ReadRows, run: _RunInfo, sample: _Sample) -> None:
    """The row of one loglikelihood_rolling sample; its log-likelihood waits in ``acc`` for the token counts."""
    no, rec, pid, base, outs = sample.no, sample.rec, sample.pid, sample.base, sample.outs
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


def add_nll(table: pa.Table, acc: ReadRows, where: str) -> tuple[pa.Table, dict[str, int]]:
    """Likelihood rows get ``nll_mean``/``perplexity``/``sum_logprob``/``n_tokens`` from the summed log-likelihood and the tokenizer's
    token count (``error`` for a sentence with no token); returns the table and tokenizer -> sentences counted."""
    tok_facts: dict[str, int] = {}
    if not acc.ll_rows:
        return table, tok_facts
    nll: list[float | None] = [None] * table.num_rows
    ppl: list[float | None] = [None] * table.num_rows
    ntok: list[int | None] = [None] * table.num_rows
    total: list[float | None] = [None] * table.num_rows  # sum_logprob: lm-eval's summed log-likelihood as logged
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
            nll[i], ppl[i], total[i] = nm, (math.exp(nm) if nm < 700 else math.inf), float(acc.ll_vals[k])
    for name, vals, typ in (
        ("nll_mean", nll, pa.float64()),
        ("perplexity", ppl, pa.float64()),
        ("sum_logprob", total, pa.float64()),
        ("n_tokens", ntok, pa.int64()),
        ("error", errs, pa.string()),
    ):
        arr = pa.array(vals, type=typ)
        table = table.set_column(table.column_names.index(name), name, arr) if name in table.column_names else table.append_column(name, arr)
    return table, tok_facts


def _rows_table(rows: list[dict]) -> pa.Table:
    """Rows as an Arrow table with the stage types for known columns (other doc columns as inferred)."""
    types: dict[str, pa.DataType] = {}
    for st in (PROMPTS, GENERATIONS):
        for col in st.columns:
            types[col.name] = col.type
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
