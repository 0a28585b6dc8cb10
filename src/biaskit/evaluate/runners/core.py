"""The runner loop shared by every backend: prompts in, generations-stage table out, resumable.

A run turns each prompt into work units (one per sample for generation), skips units already in the
output's shard folder (resume), hands the rest to the backend, which yields results batch by batch, and
writes every batch as one atomic Parquet shard (:class:`biaskit.io.ShardedWriter`). At the end the shards
are merged in prompt order (then sample index), duplicate keys are dropped (a row without an error wins)
and the table is written with its manifest. Rows that ended in an error are retried on resume.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from biaskit.arrow import to_arrow
from biaskit.assets import display_name
from biaskit.errors import BiaskitError
from biaskit.evaluate.cache import ResponseCache, open_cache
from biaskit.evaluate.runners.backend import ROW_KEYS, SETTINGS_TYPES, Backend, RunSettings, capabilities_of, not_supported, run_kind
from biaskit.evaluate.runners.builtin import make_backend as _make_backend
from biaskit.evaluate.runners.cache import UnitCache
from biaskit.evaluate.runners.common import HONEST_FILL, GenerationSettings, Unit, fill_procedure, parse_batch_size
from biaskit.evaluate.runners.on_ray import ActorWork, RemoteBackend, describe_backend
from biaskit.evaluate.runners.options import RunOptions, public_run_options
from biaskit.formats.run_state import read_run_state
from biaskit.io import ShardedWriter, drop_duplicate_keys, output_lock, read_manifest, read_table, write_json_atomic, write_table
from biaskit.jsonread import loads_json
from biaskit.log import ProgressBar, get_logger
from biaskit.manifest import new_manifest
from biaskit.pool import RayCluster, engine_spec
from biaskit.schema import GENERATIONS, check_columns, check_types, conform
from biaskit.secrets import redact

log = get_logger("runners")

#: output columns every runner writes (all kinds; the ones a kind does not use stay null)
OUTPUT_COLUMNS = (
    "sample_index",
    "model",
    "kind",
    "model_revision",
    "backend",
    "seed",
    "generation_config",
    "continuation",
    "full_text",
    "token",
    "token_score",
    "rank",
    "nll_mean",
    "perplexity",
    "sum_logprob",
    "n_tokens",
    "truncated",
    "error",
    "n_subwords",
    "fill_pll",
    "prompt_format",
)
_DESC = {"generate": "generating", "fill_mask": "filling masks", "likelihood": "scoring"}


def _output_schema() -> pa.Schema:
    types = {c.name: c.type for c in GENERATIONS.columns}
    return pa.schema([pa.field(c, types[c]) for c in OUTPUT_COLUMNS])


def prompt_table(prompts: Any, *, require: Sequence[str] = ()) -> tuple[pa.Table, list[str]]:
    """The prompts as an Arrow table (a path is read), checked for ``prompt_id``/``text`` and unique ids."""
    inputs: list[str] = []
    if isinstance(prompts, (str, Path)):
        inputs.append(str(prompts))
        t = read_table(prompts)
    else:
        t = to_arrow(prompts)
    needed = ["prompt_id", "text", *require]
    fix = "give a prompts table (see `biaskit schema prompts`) or rename the columns"
    check_columns(t.column_names, needed, "the prompts table lacks required column(s)", fix=fix)
    ids = t.column("prompt_id").to_pylist()
    if any(i is None or str(i) == "" for i in ids):
        raise BiaskitError(
            "E005",
            "prompts table has rows without a prompt_id",
            value=ids.index(None) if None in ids else ids.index(""),
            fix="give every prompt a unique id",
        )
    if len(set(ids)) != len(ids):
        seen, dup = set(), None
        for i in ids:
            if i in seen:
                dup = i
                break
            seen.add(i)
        raise BiaskitError("E007", "duplicate prompt_id in the prompts table", value=dup, fix="make prompt ids unique (drop duplicate prompts)")
    # output columns computed by the runner replace same-named prompt columns
    drop = [c for c in OUTPUT_COLUMNS if c in t.column_names]
    if drop:
        t = t.drop_columns(drop)

    check_types(t, "prompts", where=str(prompts) if isinstance(prompts, (str, Path)) else "")  # before any model work
    return t, inputs


def _fingerprint(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


#: the key of an output row (a resumed or retried run keeps one row per key)
_ROW_KEY = ("prompt_id", "model", "kind", "sample_index")


@dataclass
class _RunId:
    """What identifies a run: its generation config, seed, model revision and the fingerprint resume compares."""

    config: dict
    seed: int
    revision: str | None
    source: dict  # what the fingerprint is made of (kept in run.json; E063 names what differs)
    fingerprint: str


@dataclass
class _Work:
    """The run's work units (one per prompt and sample) and the rows that get an error without a model call."""

    ids: list[str]
    units: list[Unit]
    null_span: set[int]
    empty: dict[int, str]  # row -> why its text cannot run (null or empty)

    def is_early(self, u: Unit) -> bool:
        return u.row in self.null_span or u.row in self.empty

    @property
    def early_keys(self) -> set[tuple[str, int]]:
        return {(u.prompt_id, u.sample_index) for u in self.units if self.is_early(u)}


@dataclass
class _Resume:
    """What an earlier run on the same ``out`` left: the shard writer (None without ``out``), the units done,
    failed and to run again, or ``finished`` (the complete output) when there is nothing to do."""

    writer: Any = None
    done: set[tuple[str, int]] = field(default_factory=set)
    failed: set[tuple[str, int]] = field(default_factory=set)
    redo: set[tuple[str, int]] = field(default_factory=set)  # error rows of the finished output, run again now
    finished: pa.Table | None = None


def run(kind: str, prompts: Any, settings: RunSettings, options: RunOptions) -> pa.Table:
    """Run ``kind`` (generate, fill_mask, likelihood) over ``prompts`` with the kind's ``settings`` object
    (:class:`~.common.GenerationSettings`, ...) and the run's :class:`~.common.RunOptions`; see :mod:`.api`.

    With ``options.out`` the whole run holds the output's lock (:func:`biaskit.io.output_lock`): a second run on
    the same ``out`` fails at once with E140 naming this one, instead of mixing its shards into this run's.
    ``options.engine`` (a name or :class:`biaskit.pool.EngineSpec`) picks where the model work runs:
    ``local`` (this process) or ``ray`` (an actor pool on a Ray cluster); the output is the same table.
    ``options.cache`` (a folder or :class:`biaskit.evaluate.cache.ResponseCache`) answers units already computed.
    """
    options = public_run_options(options)
    spec = engine_spec(options.engine)
    if spec.is_ray and options.backend_obj is not None:
        raise BiaskitError(
            "E160",
            "a ready backend object cannot be sent to Ray actors",
            value=type(options.backend_obj).__name__,
            fix="pass backend= and model= (each actor builds its own backend), or use engine='local'",
        )
    o = _Run(options, settings, open_cache(options.cache))
    if options.out is None:
        return _run_on(kind, prompts, spec, o)

    with output_lock(options.out):
        return _run_on(kind, prompts, spec, o)


class _Run:
    """One run's options (:class:`~.common.RunOptions`, read as ``o.options.model`` ...), settings and opened cache."""

    def __init__(self, options: RunOptions, settings: RunSettings, cache: ResponseCache | None) -> None:
        self.options, self.settings, self.cache = options, settings, cache

    @property
    def span_column(self) -> str | None:
        return self.settings.span_column

    @property
    def seed(self) -> int:
        return int(self.settings.seed or 0)


def _run_on(kind: str, prompts: Any, spec: Any, opts: _Run) -> pa.Table:
    if not spec.is_ray:
        return _run(kind, prompts, opts, cluster=None)

    with RayCluster(spec) as cluster:
        return _run(kind, prompts, opts, cluster=cluster)


def _run(kind: str, prompts: Any, o: _Run, cluster: Any) -> pa.Table:
    bs, t, inputs = _checked_prompts(kind, prompts, o)
    be = _backend_for(kind, o, cluster)
    rid = _run_id(kind, o, be, t)
    work = _work_units(kind, o, t, paired=_masked_pairs(kind, be, t))
    res = _resume(o, rid, work)
    if res.finished is not None:
        return res.finished
    base = {
        "model": o.options.model,
        "kind": kind,
        "model_revision": rid.revision,
        "backend": be.name,
        "seed": rid.seed,
        "generation_config": json.dumps(rid.config, sort_keys=True),
        "prompt_format": o.settings.prompt_format if isinstance(o.settings, GenerationSettings) else None,
    }
    sink = _Sink(t, base, res.writer)
    eng = _Engine(kind, be, cluster, bs, UnitCache.for_run(o.cache, kind, be, rid.config, rid.seed))
    retried = _run_units(o, eng, work, res, sink)
    trunc = be.truncated_count + sink.cached_truncated
    if trunc:
        log.warning("%d prompt(s) were longer than the model context and were cut from the left (truncated=True)", trunc)
    merged = sink.merged(work.ids)
    n_err = sum(e is not None for e in merged.column("error").to_pylist())
    if n_err:
        log.warning("%d of %d output rows have an error (see the error column)", n_err, merged.num_rows)
    counts: dict[str, object] = {"truncated_prompts": trunc, "error_rows": n_err, "retried_error_rows": retried}
    if o.cache is not None:
        counts["cache"] = o.cache.stats()
    manifest = _manifest(o, eng, rid, inputs, counts)
    return _finish(merged, manifest, res.writer, o.options.out, retried)


def _checked_prompts(kind: str, prompts: Any, o: _Run) -> tuple[int | None, pa.Table, list[str]]:
    """(batch size, prompts table cut to ``limit``, input paths), every input checked before any model work."""
    if kind not in _DESC:
        raise BiaskitError("E062", "unknown runner kind", value=kind, options=list(_DESC))
    bs = parse_batch_size(o.options.batch_size)
    if not isinstance(o.settings, SETTINGS_TYPES[kind]):
        raise BiaskitError(
            "E062",
            f"a {kind} run needs {SETTINGS_TYPES[kind].__name__} settings",
            value=type(o.settings).__name__,
            fix="build the settings of the kind you run (biaskit.evaluate.runners.common)",
        )
    o.settings.check()
    t, inputs = prompt_table(prompts, require=[o.span_column] if o.span_column else [])

    # the type checks the output will get, made before any model call (never refuse after the work)
    check_types(t, "generations", where=inputs[0] if inputs else "")
    if o.options.limit is not None:
        if o.options.limit < 0:
            raise BiaskitError("E062", "limit must be >= 0", value=o.options.limit)
        t = t.slice(0, o.options.limit)
    return bs, t, inputs


def _backend_for(kind: str, o: _Run, cluster: Any) -> Backend:
    """The backend (on Ray: a stand-in that knows what the actors' backend is), checked to run ``kind``."""
    be: object
    if cluster is not None:
        # the model lives on the actors only: one remote call tells the driver what it needs to know
        be = RemoteBackend(cluster.call_once(describe_backend, _actor_work(kind, o, None)))
    else:
        be = (
            o.options.backend_obj
            if o.options.backend_obj is not None
            else _make_backend(o.options.backend, o.options.model, o.options.backend_options)
        )
    if not isinstance(be, Backend):
        missing = [
            m for m in ("name", "capabilities", "revision", "truncated_count", "batch_sizes_used", "describe", "cache_identity") if not hasattr(be, m)
        ]
        raise BiaskitError(
            "E062",
            f"{type(be).__name__} is not a model backend (it lacks {', '.join(missing) or 'parts of the Backend protocol'})",
            value=type(be).__name__,
            fix="subclass biaskit.evaluate.runners.backend.BackendBase and declare its capabilities",
        )
    if not capabilities_of(be).supports(kind):
        raise not_supported(be, kind)
    if isinstance(o.settings, GenerationSettings) and o.settings.prompt_format not in capabilities_of(be).formats:
        raise BiaskitError(
            "E313",
            f"the {be.name} backend has no {o.settings.prompt_format} prompt format",
            value=o.settings.prompt_format,
            options=list(capabilities_of(be).formats),
        )
    return be


def _generation_config(kind: str, settings: Any, be: Any, paired: bool = False) -> dict:
    """The run's settings as recorded in every row (``generation_config``) and the manifest."""
    gen_config = {"kind": kind, **settings.as_config()}
    described = be.describe()
    if kind == "likelihood" and described.get("task") == "masked" and paired:
        gen_config["scored"] = (
            "pseudo-log-likelihood of the tokens shared with the pair's other variant, masked one at a time, the differing "
            "tokens given (CrowS-Pairs, Nangia et al. 2020)"
        )
    elif kind == "likelihood" and described.get("task") == "masked":
        gen_config["scored"] = "pseudo-log-likelihood: every non-special token, masked one at a time"
    elif kind == "likelihood":
        b = be.bos_policy(settings)
        gen_config["bos_token_id"] = b
        gen_config["scored"] = "all text tokens after a BOS" if b is not None else "all tokens but the first (context only)"
    gen_config.update({k: v for k, v in described.items() if k in ("dtype", "task", "chat_endpoint")})
    if kind == "generate" and settings.do_sample:
        gen_config["seeding"] = "per row: sha256(seed, prompt_id, sample_index)"
    return gen_config


def _run_id(kind: str, o: _Run, be: Any, t: pa.Table) -> _RunId:
    gen_config = _generation_config(kind, o.settings, be, paired=_masked_pairs(kind, be, t))
    run_seed = o.seed
    revision = be.revision
    source = {
        "kind": kind,
        "model": o.options.model,
        "backend": be.name,
        "revision": revision,
        "config": gen_config,
        "seed": run_seed,
        "prompt_ids": _fingerprint({"ids": t.column("prompt_id").to_pylist(), "text": t.column("text").to_pylist()}),
    }
    endpoint = be.describe().get("base_url")
    if endpoint:
        # a resume against another server would merge the rows of two servers: the endpoint is part of the run
        # (the public URL: no user info, credential query values as ***)
        source["endpoint"] = endpoint
    return _RunId(gen_config, run_seed, revision, source, _fingerprint(source))


def _masked_pairs(kind: str, be: Any, t: pa.Table) -> bool:
    """Whether this run scores a pairs table (``pair_id`` and ``variant``) with a masked LM: CrowS-Pairs' score."""
    return kind == "likelihood" and {"pair_id", "variant"} <= set(t.column_names) and be.describe().get("task") == "masked"


def _partners(t: pa.Table, texts: list) -> tuple[list[str | None], dict[int, str]]:
    """(text of the pair's other variant per row, row -> why it has none) of a pairs table."""
    rows: dict[Any, list[int]] = {}
    for r, pid in enumerate(t.column("pair_id").to_pylist()):
        rows.setdefault(pid, []).append(r)
    partner: list[str | None] = [None] * t.num_rows
    why: dict[int, str] = {}
    for pid, rs in rows.items():
        if pid is None or len(rs) != 2:
            for r in rs:
                why[r] = "no pair_id" if pid is None else f"pair {pid!r} has {len(rs)} row(s); the CrowS-Pairs score compares two variants"
            continue
        a, b = rs
        partner[a], partner[b] = texts[b] or "", texts[a] or ""
    return partner, why


def _work_units(kind: str, o: _Run, t: pa.Table, *, paired: bool = False) -> _Work:
    texts = t.column("text").to_pylist()
    ids = [str(x) for x in t.column("prompt_id").to_pylist()]
    spans = t.column(o.span_column).to_pylist() if o.span_column else [None] * t.num_rows
    n_samples = o.settings.num_return_sequences if isinstance(o.settings, GenerationSettings) else 1
    partner, unpaired = _partners(t, texts) if paired else ([None] * t.num_rows, {})
    units = [
        Unit(r, ids[r], texts[r] if texts[r] is not None else "", k, spans[r] if o.span_column else None, partner[r])
        for r in range(t.num_rows)
        for k in range(n_samples)
    ]
    null_span = {r for r in range(t.num_rows) if o.span_column and spans[r] is None}
    empty = {
        **unpaired,
        **{
            r: ("prompt text is null" if texts[r] is None else "empty prompt text")
            for r in range(t.num_rows)
            if texts[r] is None or not str(texts[r]).strip()
        },
    }
    return _Work(ids, units, null_span, empty)


def _resume(o: _Run, rid: _RunId, work: _Work) -> _Resume:
    """Open ``<out>.parts/`` for this run: start over (``overwrite``), retry the error rows of a finished output,
    or resume the shards of a killed run with the same fingerprint (E063 for another run's files)."""
    if o.options.out is None:
        return _Resume()

    out_p = Path(o.options.out)
    state = out_p.parent / (out_p.name + ".parts") / "run.json"
    res = _Resume()
    if o.options.overwrite:
        shutil.rmtree(state.parent, ignore_errors=True)
    elif out_p.exists():
        res = _reopen_finished(out_p, state, o, rid, work)
        if res.finished is not None:
            return res
    if res.writer is None:
        res.writer = ShardedWriter(out_p, key=_ROW_KEY)
    if state.exists():
        res.redo |= _check_run_state(state, rid, res.writer)
    else:
        write_json_atomic(state, {"fingerprint": rid.fingerprint, "run": rid.source})
    res.done, res.failed = _done_units(res.writer, with_failed=True)
    if res.done:
        log.info("resuming: %d of %d units already done in %s", len(res.done), len(work.units), res.writer.parts)
    return res


def _reopen_finished(out_p: Path, state: Path, o: _Run, rid: _RunId, work: _Work) -> _Resume:
    """A finished output of this run: nothing to do, or its error rows to run again (the other rows are kept)."""
    m = read_manifest(out_p) or {}
    if m.get("config", {}).get("fingerprint") != rid.fingerprint:
        raise BiaskitError(
            "E063",
            "the output file exists from another run (different model, settings or prompts)",
            value=str(out_p),
            fix="pass --overwrite to replace it, or choose another --out",
        )
    if _state_fp(state) == rid.fingerprint:  # a retry of a finished run that was killed: resume its shards
        return _Resume()
    prev = read_table(out_p, "generations")
    redo = _error_units(prev) - work.early_keys if o.options.retry_errors else set()
    if not redo:
        log.info("%s is already complete for these settings; nothing to do", out_p)
        return _Resume(finished=_with_run_facts(prev, retried=0, complete=True))
    log.info("retrying %d row(s) of %s that ended in an error", len(redo), out_p)
    shutil.rmtree(state.parent, ignore_errors=True)
    writer = ShardedWriter(out_p, key=_ROW_KEY)
    write_json_atomic(state, {"fingerprint": rid.fingerprint, "run": rid.source, "retry_of_finished": sorted(redo)})
    keep = [i for i, k in enumerate(_unit_keys(prev)) if k not in redo]
    writer.write(prev.take(pa.array(keep, type=pa.int64())))  # the rows that succeeded stay as they are
    return _Resume(writer=writer, redo=redo)


def _check_run_state(state: Path, rid: _RunId, writer: Any) -> set[tuple[str, int]]:
    """The units a killed retry still has to run again; E063 naming what differs if the parts are another run's."""
    try:
        old = read_run_state(state)
    except BiaskitError:
        writer.close()
        raise
    if old["fingerprint"] != rid.fingerprint:
        prev_run = old["run"]
        new_run = rid.source
        differ = sorted(k for k in set(prev_run) | set(new_run) if prev_run.get(k) != new_run.get(k)) or ["fingerprint"]
        shown = {k: prev_run.get(k) for k in differ if k != "prompt_ids"}
        writer.close()
        raise BiaskitError(
            "E063",
            f"{writer.parts} holds a partial run with other settings (different {', '.join(differ)})",
            value=shown or old.get("run"),
            fix="rerun with the same endpoint, model, prompts and settings to resume, or pass --overwrite to start over",
        )
    return set(old["retry_of_finished"])


class _Sink:
    """Where result rows go: each batch as one shard (with ``out``) or kept in memory; merged at the end."""

    def __init__(self, t: pa.Table, base: dict, writer: Any) -> None:
        self.t, self.base, self.writer = t, base, writer
        self.schema = _output_schema()
        self.acc: list[pa.Table] = []
        self.cached_truncated = 0  # prompts answered by the cache that were cut to fit the context

    def emit(self, results: list[dict]) -> None:
        """Write one batch: the prompt rows with the output columns (run facts + the backend's results). A key the
        run's kind has no column for (:data:`~.backend.ROW_KEYS`) is E062 before anything of the batch is written: a
        misspelt key would otherwise be a null output without an error."""
        kind = str(self.base["kind"])
        odd = sorted({k for r in results for k in r if k != "_unit" and k not in ROW_KEYS[kind]})
        if odd:
            raise BiaskitError(
                "E062",
                f"the {self.base['backend']} backend's {kind} rows have key(s) no {kind} column takes: {', '.join(odd)}",
                value=odd,
                options=list(ROW_KEYS[kind]),
                fix="yield rows with _unit and the kind's keys (docs/architecture.md, The backend contract)",
            )
        rows_idx = [r["_unit"].row for r in results]
        cols: dict[str, list] = {c: [] for c in OUTPUT_COLUMNS}
        for r in results:
            u: Unit = r["_unit"]
            full = {**self.base, "sample_index": u.sample_index, **{k: v for k, v in r.items() if k != "_unit"}}
            if isinstance(full.get("error"), str):
                full["error"] = redact(full["error"])  # a server may echo the key in its error body
            for c in OUTPUT_COLUMNS:
                cols[c].append(full.get(c))
        tab = self.t.take(pa.array(rows_idx, type=pa.int64()))
        for c in OUTPUT_COLUMNS:
            tab = tab.append_column(self.schema.field(c), pa.array(cols[c], type=self.schema.field(c).type))
        if self.writer is not None:
            self.writer.write(tab)
        else:
            self.acc.append(tab)

    def merged(self, ids: list[str]) -> pa.Table:
        """Shards (or in-memory batches) in prompt order, then sample index; of duplicate keys a row without error wins."""
        if self.writer is not None:
            merged = self.writer.read_all()
        else:
            merged = pa.concat_tables(self.acc, promote_options="permissive") if self.acc else None
        if merged is None:
            merged = self.t.slice(0, 0)
            for c in OUTPUT_COLUMNS:
                merged = merged.append_column(self.schema.field(c), pa.array([], type=self.schema.field(c).type))
        pos = {pid: i for i, pid in enumerate(ids)}
        pids = merged.column("prompt_id").to_pylist()
        sidx = merged.column("sample_index").to_pylist()
        errs = merged.column("error").to_pylist()
        order = sorted(range(merged.num_rows), key=lambda i: (pos.get(str(pids[i]), len(pos)), sidx[i], errs[i] is not None))
        merged = merged.take(pa.array(order, type=pa.int64()))
        return drop_duplicate_keys(merged, _ROW_KEY)


@dataclass(frozen=True)
class _Engine:
    """What answers a run's units: the backend ``be`` asked for ``kind`` (on the Ray ``cluster``'s actors when there
    is one) in batches of ``batch_size`` (None: the backend picks), after the unit cache ``unit_cache`` (None: none)."""

    kind: str
    be: Backend
    cluster: RayCluster | None
    batch_size: int | None
    unit_cache: UnitCache | None


def _actor_work(kind: str, o: _Run, batch_size: int | None) -> ActorWork:
    """What each Ray actor builds and runs for ``o``."""
    return ActorWork(kind, o.options.backend, o.options.model, o.options.backend_options or {}, o.settings, batch_size)


def _run_units(o: _Run, eng: _Engine, work: _Work, res: _Resume, sink: _Sink) -> int:
    """Run the units not done yet (error rows first for prompts that cannot run, then the units the cache
    answers); returns how many ran again."""
    kind, be, cluster, bs, ucache = eng.kind, eng.be, eng.cluster, eng.batch_size, eng.unit_cache
    pending = [u for u in work.units if (u.prompt_id, u.sample_index) not in res.done]
    early = [u for u in pending if work.is_early(u)]
    pending = [u for u in pending if not work.is_early(u)]
    retried = sum((u.prompt_id, u.sample_index) in res.redo or (u.prompt_id, u.sample_index) in res.failed for u in pending)
    if retried:
        log.info("running again %d unit(s) that ended in an error before", retried)
    if early:
        why = f"{o.span_column} is null: no span to score"
        sink.emit([{"_unit": u, "truncated": False, "error": work.empty.get(u.row) or why} for u in early])
    if ucache is not None and pending:
        cached, pending = ucache.lookup(pending)
        if cached:
            sink.emit(cached)
            sink.cached_truncated = len({(r["_unit"].row, r["_unit"].sample_index) for r in cached if r.get("truncated")})
    try:
        if pending:
            with ProgressBar(len(pending), desc=f"{_DESC[kind]} ({o.options.model})", disable=True if o.options.progress is False else None) as bar:
                if cluster is not None:
                    from biaskit.evaluate.runners.on_ray import run_units_on_ray

                    assert isinstance(be, RemoteBackend)  # _backend_for builds the stand-in whenever there is a cluster
                    source = run_units_on_ray(cluster, _actor_work(kind, o, bs), pending, be)
                else:
                    source = run_kind(be, kind, pending, o.settings, bs)
                for results in source:
                    if not results:
                        continue
                    sink.emit(results)
                    if ucache is not None:
                        ucache.store(results)
                    bar.advance(len({(r["_unit"].row, r["_unit"].sample_index) for r in results}))
    except BaseException:
        if res.writer is not None and not res.writer.shards():  # nothing to resume: leave no stale run state behind
            shutil.rmtree(res.writer.parts, ignore_errors=True)
        raise
    return retried


def _manifest(o: _Run, eng: _Engine, rid: _RunId, inputs: list[str], counts: dict) -> dict:
    """The output's manifest: run config (with the fingerprint), model facts, row counts and the engine."""
    kind, be, cluster, bs = eng.kind, eng.be, eng.cluster, eng.batch_size
    return new_manifest(
        f"biaskit {kind.replace('_', '-')}",
        stage="generations",
        seed=rid.seed,
        inputs=inputs,
        config={
            "fingerprint": rid.fingerprint,
            "model": o.options.model,
            "backend": be.name,
            "generation_config": rid.config,
            "span_column": o.span_column,
            "limit": o.options.limit,
            "batch_size": "auto" if bs is None else bs,
            **_fill_facts(kind, rid.config),
        },
        extra={
            "model": {
                "id": o.options.model,
                **({"name": n} if (n := display_name(o.options.model)) else {}),
                "revision": rid.revision,
                **be.describe(),
            },
            **counts,
            "batch_sizes_used": sorted(set(be.batch_sizes_used)),
            "engine": cluster.facts if cluster is not None else {"engine": "local"},
        },
    )


def _finish(merged: pa.Table, manifest: dict, writer: Any, out: str | Path | None, retried: int) -> pa.Table:
    """Write the merged table with its manifest and drop the parts (with ``out``), or return it with the manifest."""
    if writer is not None:
        assert out is not None  # a writer is made only for an out
        out_p = Path(out)
        write_table(merged, out_p, stage="generations", manifest=manifest)
        shutil.rmtree(writer.parts, ignore_errors=True)
        return _with_run_facts(read_table(out_p, "generations"), retried=retried)

    merged = conform(merged, "generations")
    return merged.replace_schema_metadata({**(merged.schema.metadata or {}), b"biaskit_manifest": json.dumps(manifest, default=str).encode()})


def _with_run_facts(t: pa.Table, *, retried: int, complete: bool = False) -> pa.Table:
    """``t`` with what this call did in its schema metadata (``biaskit_run``: retried rows, already complete)."""
    facts = json.dumps({"retried_error_rows": retried, "already_complete": complete}).encode()
    return t.replace_schema_metadata({**(t.schema.metadata or {}), b"biaskit_run": facts})


def run_facts(t: pa.Table) -> dict:
    """What the run that returned ``t`` did (see :func:`_with_run_facts`); {} for other tables."""
    raw = (t.schema.metadata or {}).get(b"biaskit_run")
    try:
        facts = loads_json(raw.decode("utf-8"), source="the table's biaskit_run metadata") if raw else {}
    except (BiaskitError, UnicodeDecodeError):
        return {}
    return facts if isinstance(facts, dict) else {}


def _state_fp(state: Path) -> str | None:
    """The fingerprint of the state file at ``state``; None when there is none or it is damaged (the run starts over)."""
    try:
        fp: str = read_run_state(state)["fingerprint"]
    except BiaskitError:
        return None
    return fp


def _unit_keys(tab: pa.Table) -> list[tuple[str, int]]:
    """The work-unit key (prompt_id, sample_index; fill-mask rows of one prompt share unit 0) of each row."""
    return [
        (str(pid), 0 if kd == "fill_mask" else int(k))
        for pid, k, kd in zip(tab.column("prompt_id").to_pylist(), tab.column("sample_index").to_pylist(), tab.column("kind").to_pylist())
    ]


def _error_units(tab: pa.Table) -> set[tuple[str, int]]:
    """Units with at least one row that has an error."""
    errs = tab.column("error").to_pylist()
    return {k for k, e in zip(_unit_keys(tab), errs) if e is not None}


def _done_units(writer, with_failed: bool = False):
    """(prompt_id, sample_index) of units whose rows are in the shards without an error (and, with
    ``with_failed``, the units that have only error rows there)."""
    done: set[tuple[str, int]] = set()
    failed: set[tuple[str, int]] = set()
    for shard in writer.shards():
        tab = pq.read_table(shard, columns=["prompt_id", "sample_index", "error", "kind"])
        kinds = tab.column("kind").to_pylist()
        for pid, k, e, kd in zip(tab.column("prompt_id").to_pylist(), tab.column("sample_index").to_pylist(), tab.column("error").to_pylist(), kinds):
            key = (str(pid), 0 if kd == "fill_mask" else int(k))
            (failed if e is not None else done).add(key)
    # a unit that failed once and later succeeded is done; one that only failed is retried
    return (done, failed - done) if with_failed else done


def _fill_facts(kind: str, gen_config: dict) -> dict:
    """fill-mask manifests: the fill-in procedure and whether HONEST computed on it is HONEST as published."""
    if kind != "fill_mask":
        return {}

    proc = fill_procedure(gen_config) or HONEST_FILL
    return {"fill_procedure": proc, "honest_as_published": proc == HONEST_FILL}
