"""The runner loop shared by every backend: prompts in, generations-stage table out, resumable.

A run turns each prompt into work units (one per sample for generation), skips units already in the
output's shard folder (resume), hands the rest to the backend, which yields results batch by batch, and
writes every batch as one atomic Parquet shard (:class:`biaskit.io.ShardedWriter`). At the end the shards
are merged in prompt order (then sample index), duplicate keys are dropped (a row without an error wins)
and the table is written with its manifest. Rows that ended in an error are retried on resume.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners.builtin import make_backend as _make_backend
from biaskit.evaluate.runners.common import (
    FillMaskSettings,
    GenerationSettings,
    LikelihoodSettings,
    Unit,
    parse_batch_size,
)
from biaskit.log import ProgressBar, get_logger

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
    "n_tokens",
    "truncated",
    "error",
    "n_subwords",
    "fill_pll",
)
_DESC = {"generate": "generating", "fill_mask": "filling masks", "likelihood": "scoring"}


def _output_schema() -> pa.Schema:
    from biaskit.schema import GENERATIONS

    return pa.schema([pa.field(c, GENERATIONS.column(c).type) for c in OUTPUT_COLUMNS])


def prompt_table(prompts: Any, *, require: Sequence[str] = ()) -> tuple[pa.Table, list[str]]:
    """The prompts as an Arrow table (a path is read), checked for ``prompt_id``/``text`` and unique ids."""
    from biaskit.io import read_table, to_arrow

    inputs: list[str] = []
    if isinstance(prompts, (str, Path)):
        inputs.append(str(prompts))
        t = read_table(prompts)
    else:
        t = to_arrow(prompts)
    needed = ["prompt_id", "text", *require]
    missing = [c for c in needed if c not in t.column_names]
    if missing:
        raise BiaskitError(
            "E001",
            f"the prompts table lacks required column(s) {', '.join(missing)}",
            value=sorted(t.column_names),
            fix="give a prompts table (see `biaskit schema prompts`) or rename the columns",
        )
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
    from biaskit.schema import check_types

    check_types(t, "prompts", where=str(prompts) if isinstance(prompts, (str, Path)) else "")  # before any model work
    return t, inputs


def _fingerprint(config: dict) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run(
    kind: str,
    prompts: Any,
    *,
    model: str,
    settings: Any,
    backend: str = "hf",
    out: str | Path | None = None,
    batch_size: int | str | None = None,
    overwrite: bool = False,
    limit: int | None = None,
    backend_options: dict | None = None,
    span_column: str | None = None,
    seed: int | None = None,
    progress: bool | None = None,
    backend_obj: Any = None,
    retry_errors: bool = True,
    engine: Any = None,
) -> pa.Table:
    """Run ``kind`` (generate, fill_mask, likelihood) over ``prompts``; see the public wrappers.

    With ``out`` the whole run holds the output's lock (:func:`biaskit.io.output_lock`): a second run on the
    same ``out`` fails at once with E140 naming this one, instead of mixing its shards into this run's.
    ``engine`` (a name or :class:`biaskit.evaluate.engine.EngineSpec`) picks where the model work runs:
    ``local`` (this process) or ``ray`` (an actor pool on a Ray cluster); the output is the same table.
    """
    from biaskit.evaluate.engine import engine_spec

    spec = engine_spec(engine)
    if spec.is_ray and backend_obj is not None:
        raise BiaskitError(
            "E160",
            "a ready backend object cannot be sent to Ray actors",
            value=type(backend_obj).__name__,
            fix="pass backend= and model= (each actor builds its own backend), or use engine='local'",
        )
    kw = dict(
        model=model,
        settings=settings,
        backend=backend,
        out=out,
        batch_size=batch_size,
        overwrite=overwrite,
        limit=limit,
        backend_options=backend_options,
        span_column=span_column,
        seed=seed,
        progress=progress,
        backend_obj=backend_obj,
        retry_errors=retry_errors,
    )
    if out is None:
        return _run_on(kind, prompts, spec, kw)
    from biaskit.io import output_lock

    with output_lock(out):
        return _run_on(kind, prompts, spec, kw)


def _run_on(kind: str, prompts: Any, spec: Any, kw: dict) -> pa.Table:
    if not spec.is_ray:
        return _run(kind, prompts, cluster=None, **kw)
    from biaskit.evaluate.engine import RayCluster

    with RayCluster(spec) as cluster:
        return _run(kind, prompts, cluster=cluster, **kw)


def _run(
    kind: str,
    prompts: Any,
    *,
    model: str,
    settings: Any,
    backend: str,
    out: str | Path | None,
    batch_size: int | str | None,
    overwrite: bool,
    limit: int | None,
    backend_options: dict | None,
    span_column: str | None,
    seed: int | None,
    progress: bool | None,
    backend_obj: Any,
    retry_errors: bool,
    cluster: Any,
) -> pa.Table:
    from biaskit.io import ShardedWriter, drop_duplicate_keys, read_manifest, read_table, write_json_atomic, write_table
    from biaskit.manifest import new_manifest
    from biaskit.secrets import redact

    if kind not in _DESC:
        raise BiaskitError("E062", "unknown runner kind", value=kind, options=list(_DESC))
    bs = parse_batch_size(batch_size)
    if hasattr(settings, "check"):
        settings.check()
    t, inputs = prompt_table(prompts, require=[span_column] if span_column else [])
    from biaskit.schema import check_types

    # the type checks the output will get, made before any model call (never refuse after the work)
    check_types(t, "generations", where=inputs[0] if inputs else "")
    if limit is not None:
        if limit < 0:
            raise BiaskitError("E062", "limit must be >= 0", value=limit)
        t = t.slice(0, limit)
    if cluster is not None:
        # the model lives on the actors only: one remote call tells the driver what it needs to know
        from biaskit.evaluate.runners.on_ray import RemoteBackend, describe_backend

        be = RemoteBackend(cluster.call_once(describe_backend, kind, backend, model, backend_options or {}, settings))
    else:
        be = backend_obj if backend_obj is not None else _make_backend(backend, model, backend_options)
    method = kind
    if not hasattr(be, method):
        raise BiaskitError(
            "E062",
            f"the {be.name} backend cannot run {kind}",
            value=be.name,
            options=[n for n in ("generate", "fill_mask", "likelihood") if hasattr(be, n)],
            fix="use --backend hf for this kind of run",
        )
    gen_config = {"kind": kind, **settings.as_config()}
    task = be.describe().get("task") if hasattr(be, "describe") else None
    if kind == "likelihood" and task == "masked":
        gen_config["scored"] = "pseudo-log-likelihood: every non-special token, masked one at a time"
    elif kind == "likelihood" and getattr(be, "bos_policy", None) is not None:
        b = be.bos_policy(settings)
        gen_config["bos_token_id"] = b
        gen_config["scored"] = "all text tokens after a BOS" if b is not None else "all tokens but the first (context only)"
    if hasattr(be, "describe"):
        gen_config.update({k: v for k, v in be.describe().items() if k in ("dtype", "task", "chat_endpoint")})
    if getattr(settings, "do_sample", False):
        gen_config["seeding"] = "per row: sha256(seed, prompt_id, sample_index)"
    gen_config_json = json.dumps(gen_config, sort_keys=True)
    run_seed = int(seed if seed is not None else getattr(settings, "seed", 0) or 0)
    revision = getattr(be, "revision", None)
    fingerprint_src = {
        "kind": kind,
        "model": model,
        "backend": be.name,
        "revision": revision,
        "config": gen_config,
        "seed": run_seed,
        "prompt_ids": _fingerprint({"ids": t.column("prompt_id").to_pylist(), "text": t.column("text").to_pylist()}),
    }
    endpoint = be.describe().get("base_url") if hasattr(be, "describe") else None
    if endpoint:
        # a resume against another server would merge the rows of two servers: the endpoint is part of the run
        # (the public URL: no user info, credential query values as ***)
        fingerprint_src["endpoint"] = endpoint
    fp = _fingerprint(fingerprint_src)

    texts = t.column("text").to_pylist()
    ids = [str(x) for x in t.column("prompt_id").to_pylist()]
    spans = t.column(span_column).to_pylist() if span_column else [None] * t.num_rows
    n_samples = settings.num_return_sequences if kind == "generate" else 1
    units = [
        Unit(r, ids[r], texts[r] if texts[r] is not None else "", k, spans[r] if span_column else None)
        for r in range(t.num_rows)
        for k in range(n_samples)
    ]
    null_span = {r for r in range(t.num_rows) if span_column and spans[r] is None}
    empty = {
        r: ("prompt text is null" if texts[r] is None else "empty prompt text")
        for r in range(t.num_rows)
        if texts[r] is None or not str(texts[r]).strip()
    }

    writer = None
    out_p = Path(out) if out is not None else None
    done: set[tuple[str, int]] = set()
    failed: set[tuple[str, int]] = set()
    redo: set[tuple[str, int]] = set()  # units that ended in an error in the finished output, run again now
    early_keys = {(u.prompt_id, u.sample_index) for u in units if u.row in null_span or u.row in empty}
    if out_p is not None:
        parts = out_p.parent / (out_p.name + ".parts")
        state = parts / "run.json"
        if overwrite:
            shutil.rmtree(parts, ignore_errors=True)
        elif out_p.exists():
            m = read_manifest(out_p) or {}
            if m.get("config", {}).get("fingerprint") != fp:
                raise BiaskitError(
                    "E063",
                    "the output file exists from another run (different model, settings or prompts)",
                    value=str(out_p),
                    fix="pass --overwrite to replace it, or choose another --out",
                )
            if not _state_fp(state) == fp:  # (a retry of a finished run that was killed resumes below)
                prev = read_table(out_p, "generations")
                redo = _error_units(prev) - early_keys if retry_errors else set()
                if not redo:
                    log.info("%s is already complete for these settings; nothing to do", out_p)
                    return _with_run_facts(prev, retried=0, complete=True)
                log.info("retrying %d row(s) of %s that ended in an error", len(redo), out_p)
                shutil.rmtree(parts, ignore_errors=True)
                writer = ShardedWriter(out_p, key=("prompt_id", "model", "kind", "sample_index"))
                write_json_atomic(state, {"fingerprint": fp, "run": fingerprint_src, "retry_of_finished": sorted(redo)})
                keep = [i for i, k in enumerate(_unit_keys(prev)) if k not in redo]
                writer.write(prev.take(pa.array(keep, type=pa.int64())))  # the rows that succeeded stay as they are
        if writer is None:
            writer = ShardedWriter(out_p, key=("prompt_id", "model", "kind", "sample_index"))
        if state.exists():
            old = json.loads(state.read_text(encoding="utf-8"))
            if old.get("fingerprint") != fp:
                prev_run = old.get("run") if isinstance(old.get("run"), dict) else {}
                differ = sorted(k for k in set(prev_run) | set(fingerprint_src) if prev_run.get(k) != fingerprint_src.get(k)) or ["fingerprint"]
                shown = {k: prev_run.get(k) for k in differ if k != "prompt_ids"}
                writer.close()
                raise BiaskitError(
                    "E063",
                    f"{writer.parts} holds a partial run with other settings (different {', '.join(differ)})",
                    value=shown or old.get("run"),
                    fix="rerun with the same endpoint, model, prompts and settings to resume, or pass --overwrite to start over",
                )
            redo |= {(str(a), int(b)) for a, b in old.get("retry_of_finished") or ()}
        else:
            write_json_atomic(state, {"fingerprint": fp, "run": fingerprint_src})
        done, failed = _done_units(writer, with_failed=True)
        if done:
            log.info("resuming: %d of %d units already done in %s", len(done), len(units), writer.parts)

    out_schema = _output_schema()
    base = {"model": model, "kind": kind, "model_revision": revision, "backend": be.name, "seed": run_seed, "generation_config": gen_config_json}
    acc: list[pa.Table] = []

    def emit(results: list[dict]) -> None:
        rows_idx = [r["_unit"].row for r in results]
        cols: dict[str, list] = {c: [] for c in OUTPUT_COLUMNS}
        for r in results:
            u: Unit = r["_unit"]
            full = {**base, "sample_index": u.sample_index, **{k: v for k, v in r.items() if k != "_unit"}}
            if isinstance(full.get("error"), str):
                full["error"] = redact(full["error"])  # a server may echo the key in its error body
            for c in OUTPUT_COLUMNS:
                cols[c].append(full.get(c))
        tab = t.take(pa.array(rows_idx, type=pa.int64()))
        for c in OUTPUT_COLUMNS:
            tab = tab.append_column(out_schema.field(c), pa.array(cols[c], type=out_schema.field(c).type))
        if writer is not None:
            writer.write(tab)
        else:
            acc.append(tab)

    pending = [u for u in units if (u.prompt_id, u.sample_index) not in done]
    early = [u for u in pending if u.row in null_span or u.row in empty]
    pending = [u for u in pending if u.row not in null_span and u.row not in empty]
    retried = sum((u.prompt_id, u.sample_index) in redo or (u.prompt_id, u.sample_index) in failed for u in pending)
    if retried:
        log.info("running again %d unit(s) that ended in an error before", retried)
    if early:
        emit([{"_unit": u, "truncated": False, "error": empty.get(u.row) or f"{span_column} is null: no span to score"} for u in early])
    try:
        if pending:
            with ProgressBar(len(pending), desc=f"{_DESC[kind]} ({model})", disable=True if progress is False else None) as bar:
                if cluster is not None:
                    from biaskit.evaluate.runners.on_ray import run_units_on_ray

                    source = run_units_on_ray(cluster, kind, backend, model, backend_options or {}, settings, bs, pending, be)
                else:
                    source = getattr(be, method)(pending, settings, bs)
                for results in source:
                    if not results:
                        continue
                    emit(results)
                    bar.advance(len({(r["_unit"].row, r["_unit"].sample_index) for r in results}))
    except BaseException:
        if writer is not None and not writer.shards():  # nothing to resume: leave no stale run state behind
            shutil.rmtree(writer.parts, ignore_errors=True)
        raise
    trunc = getattr(be, "truncated_count", 0)
    if trunc:
        log.warning("%d prompt(s) were longer than the model context and were cut from the left (truncated=True)", trunc)

    # merge: shards (or in-memory batches) in prompt order, then sample index; rows without error win
    if writer is not None:
        merged = writer.read_all()
    else:
        merged = pa.concat_tables(acc, promote_options="permissive") if acc else None
    if merged is None:
        merged = t.slice(0, 0)
        for c in OUTPUT_COLUMNS:
            merged = merged.append_column(out_schema.field(c), pa.array([], type=out_schema.field(c).type))
    pos = {pid: i for i, pid in enumerate(ids)}
    pids = merged.column("prompt_id").to_pylist()
    sidx = merged.column("sample_index").to_pylist()
    errs = merged.column("error").to_pylist()
    order = sorted(range(merged.num_rows), key=lambda i: (pos.get(str(pids[i]), len(pos)), sidx[i], errs[i] is not None))
    merged = merged.take(pa.array(order, type=pa.int64()))
    merged = drop_duplicate_keys(merged, ("prompt_id", "model", "kind", "sample_index"))
    n_err = sum(e is not None for e in merged.column("error").to_pylist())
    if n_err:
        log.warning("%d of %d output rows have an error (see the error column)", n_err, merged.num_rows)
    manifest = new_manifest(
        f"biaskit {kind.replace('_', '-')}",
        stage="generations",
        seed=run_seed,
        inputs=inputs,
        config={
            "fingerprint": fp,
            "model": model,
            "backend": be.name,
            "generation_config": gen_config,
            "span_column": span_column,
            "limit": limit,
            "batch_size": "auto" if bs is None else bs,
            **_fill_facts(kind, gen_config),
        },
        extra={
            "model": {"id": model, "revision": revision, **(be.describe() if hasattr(be, "describe") else {})},
            "truncated_prompts": trunc,
            "error_rows": n_err,
            "retried_error_rows": retried,
            "batch_sizes_used": sorted(set(getattr(be, "batch_sizes_used", []))),
            "engine": cluster.facts if cluster is not None else {"engine": "local"},
        },
    )
    if writer is not None:
        write_table(merged, out_p, stage="generations", manifest=manifest)
        shutil.rmtree(writer.parts, ignore_errors=True)
        return _with_run_facts(read_table(out_p, "generations"), retried=retried)
    from biaskit.schema import conform

    merged = conform(merged, "generations")
    return merged.replace_schema_metadata({**(merged.schema.metadata or {}), b"biaskit_manifest": json.dumps(manifest, default=str).encode()})


def _with_run_facts(t: pa.Table, *, retried: int, complete: bool = False) -> pa.Table:
    """``t`` with what this call did in its schema metadata (``biaskit_run``: retried rows, already complete)."""
    facts = json.dumps({"retried_error_rows": retried, "already_complete": complete}).encode()
    return t.replace_schema_metadata({**(t.schema.metadata or {}), b"biaskit_run": facts})


def run_facts(t: pa.Table) -> dict:
    """What the run that returned ``t`` did (see :func:`_with_run_facts`); {} for other tables."""
    raw = (t.schema.metadata or {}).get(b"biaskit_run")
    return json.loads(raw) if raw else {}


def _state_fp(state: Path) -> str | None:
    try:
        return json.loads(state.read_text(encoding="utf-8")).get("fingerprint")
    except (OSError, ValueError, AttributeError):
        return None


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
    import pyarrow.parquet as pq

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


def generate(
    prompts: Any,
    *,
    model: str,
    backend: str = "hf",
    out: str | Path | None = None,
    batch_size: int | str | None = None,
    seed: int = 0,
    max_new_tokens: int = 20,
    do_sample: bool = False,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    repetition_penalty: float | None = None,
    num_return_sequences: int = 1,
    first_sentence: bool = False,
    chat: bool = False,
    strip_trailing_space: bool = True,
    device: str | None = "auto",
    dtype: str | None = "auto",
    overwrite: bool = False,
    limit: int | None = None,
    backend_options: dict | None = None,
    progress: bool | None = None,
    retry_errors: bool = True,
    engine: Any = None,
) -> pa.Table:
    """Continue every prompt: one row per (prompt, sample) with ``continuation`` (prompt stripped) and ``full_text``.

    Greedy by default; ``do_sample=True`` samples with ``temperature``/``top_k``/``top_p`` from a per-row
    generator seeded by (seed, prompt_id, sample_index), so outputs do not depend on ``batch_size`` or the
    prompt order. ``engine="ray"`` (or an :class:`~biaskit.evaluate.engine.EngineSpec`) runs the model on a Ray
    actor pool with the same result. ``first_sentence`` cuts each continuation after its first sentence. Trailing spaces of a
    prompt (BOLD prompts end in one) are cut before tokenising and the continuation's first space is dropped,
    so ``text + continuation`` reads right (``strip_trailing_space=False`` feeds the prompt as it is). ``out`` makes the run
    resumable (shards in ``<out>.parts/``); rerunning a finished run runs again exactly the rows that ended in
    an error (``retry_errors=False`` leaves them). Prompts longer than the model context are cut from the left
    (``truncated=True``).
    """
    s = GenerationSettings(
        max_new_tokens=max_new_tokens,
        do_sample=do_sample,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        repetition_penalty=repetition_penalty,
        num_return_sequences=num_return_sequences,
        first_sentence=first_sentence,
        chat=chat,
        strip_trailing_space=strip_trailing_space,
        seed=seed,
    )
    s.check()
    opts = {"device": device, "dtype": dtype, "task": "causal", **(backend_options or {})}
    return run(
        "generate",
        prompts,
        model=model,
        settings=s,
        backend=backend,
        out=out,
        batch_size=batch_size,
        overwrite=overwrite,
        limit=limit,
        backend_options=opts,
        seed=seed,
        progress=progress,
        retry_errors=retry_errors,
        engine=engine,
    )


def fill_mask(
    prompts: Any,
    *,
    model: str,
    backend: str = "hf",
    out: str | Path | None = None,
    batch_size: int | str | None = None,
    top_k: int = 10,
    whole_word: bool = False,
    targets: list[str] | None = None,
    device: str | None = "auto",
    dtype: str | None = "auto",
    overwrite: bool = False,
    limit: int | None = None,
    backend_options: dict | None = None,
    progress: bool | None = None,
    max_subwords: int = 1,
    beam_size: int | None = None,
    pll: str = "original",
    retry_errors: bool = True,
    engine: Any = None,
) -> pa.Table:
    """Top-k fill-ins of each prompt's single mask slot (``<mask>`` or ``[MASK]``): ``top_k`` rows per prompt.

    Rows carry ``token`` (the predicted word), ``token_score`` (its probability), ``rank`` (1-based) and
    ``full_text`` (the template with the slot filled). ``whole_word`` keeps only word-initial, alphabetic
    vocabulary entries (no ``##`` continuation pieces, punctuation or special tokens). A prompt without a mask
    or with several gives one row with an error.

    ``max_subwords=N`` (> 1) proposes whole words of 1..N subword tokens instead (needed for languages whose
    words are several pieces, e.g. Czech or Polish): beam search (``beam_size`` per length) fills N mask tokens,
    only whole words are kept, and all lengths are ranked together by pseudo-log-likelihood (``fill_pll``,
    ``pll="original"`` or ``"word_l2r"``); ``n_subwords`` says how many pieces each fill-in has. Every row has
    ``n_subwords`` and ``fill_pll`` (log ``token_score`` for single-token fill-ins).
    """
    s = FillMaskSettings(top_k=top_k, whole_word=whole_word, targets=targets, max_subwords=max_subwords, beam_size=beam_size, pll=pll)
    s.check()
    opts = {"device": device, "dtype": dtype, "task": "masked", **(backend_options or {})}
    return run(
        "fill_mask",
        prompts,
        model=model,
        settings=s,
        backend=backend,
        out=out,
        batch_size=batch_size,
        overwrite=overwrite,
        limit=limit,
        backend_options=opts,
        seed=0,
        progress=progress,
        retry_errors=retry_errors,
        engine=engine,
    )


def likelihood(
    prompts: Any,
    *,
    model: str,
    backend: str = "hf",
    out: str | Path | None = None,
    batch_size: int | str | None = None,
    add_bos: bool | None = None,
    span_column: str | None = None,
    device: str | None = "auto",
    dtype: str | None = "auto",
    overwrite: bool = False,
    limit: int | None = None,
    backend_options: dict | None = None,
    progress: bool | None = None,
    retry_errors: bool = True,
    engine: Any = None,
) -> pa.Table:
    """Per-sentence mean negative log-likelihood (nats/token), perplexity and number of scored tokens.

    Causal LMs: every text token is scored given the ones before it; the BOS position is never scored
    (``add_bos=None`` does what the tokenizer does by default; ``True`` puts BOS (or EOS, GPT-2 style) before
    each sentence so the first word is scored too; ``False`` leaves the first token as context only).
    Masked LMs: pseudo-log-likelihood (mask one token at a time). ``span_column`` (e.g. ``descriptor``)
    scores only the tokens overlapping that column's text inside the sentence.
    """
    s = LikelihoodSettings(add_bos=add_bos, span_column=span_column)
    opts = {"device": device, "dtype": dtype, "task": "auto", **(backend_options or {})}
    return run(
        "likelihood",
        prompts,
        model=model,
        settings=s,
        backend=backend,
        out=out,
        batch_size=batch_size,
        overwrite=overwrite,
        limit=limit,
        backend_options=opts,
        span_column=span_column,
        seed=0,
        progress=progress,
        retry_errors=retry_errors,
        engine=engine,
    )


def _fill_facts(kind: str, gen_config: dict) -> dict:
    """fill-mask manifests: the fill-in procedure and whether HONEST computed on it is HONEST as published."""
    if kind != "fill_mask":
        return {}
    from biaskit.evaluate.runners.common import HONEST_FILL, fill_procedure

    proc = fill_procedure(gen_config) or HONEST_FILL
    return {"fill_procedure": proc, "honest_as_published": proc == HONEST_FILL}
