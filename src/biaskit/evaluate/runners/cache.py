"""The response cache on the runner side: what identifies a backend's model, and the run loop's lookups.

The store and the key are :mod:`biaskit.evaluate.cache`. A backend says what identifies its answers with
``cache_identity()`` (:class:`~.backend.Backend`):

- hf: ``model`` = ``sha256:`` over the weight files of a local model (each file's sha256 remembered by path,
  size, mtime, ctime and inode in the cache, so it is computed once), or ``hub:<id>@<commit>`` for a Hub model;
  ``tokenizer`` = the sha256 of the tokenizer (its vocabulary and merges, special tokens and settings) and its
  chat template; ``device`` and ``dtype``;
- openai: the model id and revision the server reports in ``/v1/models`` (with its ``root``/``meta`` facts:
  llama.cpp reports the GGUF's size and parameter count there) and ``--model-revision``. Ids that are local
  paths (llama.cpp reports the GGUF's full path; vLLM's ``root`` is often a folder) are keyed by their last
  part (:func:`~.common.public_model_id`), so a key does not hold a local directory and the same file served
  from another folder is the same model; a Hub id or a served name is kept as it is. The base URL is not
  part of it (the same served model behind another address is the same model); ``created`` is not either
  (vLLM reports the time of the request).

:class:`UnitCache` turns a run's units into keys (the identity, the kind, the run's ``generation_config`` and
seed, and the unit's prompt text, span, prompt id and sample index), answers the units found, and stores the
units the backend ran without an error. None of these parts is written to the output or its manifest: the key is
a hash, and the manifest records only ``cache: {"hits", "misses", "path"}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.cache import ResponseCache, cache_key, tokenizer_hash, weights_identity
from biaskit.evaluate.runners.backend import Backend
from biaskit.evaluate.runners.common import Unit, public_model_id
from biaskit.formats.cache_entries import rows_entry
from biaskit.formats.responses import BadResponse, decode_reply, model_list
from biaskit.log import get_logger
from biaskit.net import HttpError

log = get_logger("runners.cache")


def hf_identity(be: Any, cache: ResponseCache | None = None) -> dict[str, Any] | None:
    """The cache identity of an :class:`~.hf.HFBackend` (see the module docs); None when a Hub model's commit is
    unknown (then nothing is cached)."""
    lm = be.lm
    if lm.extra.get("origin") == "hub":
        commit = lm.model.config._commit_hash if "_commit_hash" in vars(lm.model.config) else None
        if not commit:
            log.warning("%s: its Hub commit is unknown, so the response cache cannot key its answers", be.spec)
            return None
        model: str | dict[str, Any] = f"hub:{be.spec}@{commit}"
    else:
        model = {"weights": ("pending", lm.source)}  # hashed by UnitCache with the cache's memo of file hashes
    return {"model": model, "tokenizer": tokenizer_hash(lm.tokenizer), "device": lm.device, "dtype": lm.dtype, "task": lm.task}


def server_identity(be: Any) -> dict[str, Any] | None:
    """The cache identity of an :class:`~.openai.OpenAIBackend`: what ``/v1/models`` says of ``be.model`` and
    ``--model-revision``. A server that does not list the model is identified by the name alone, with a warning."""
    listed = _listed_model(be)
    if listed is None:
        log.warning("the endpoint does not list model %r in /v1/models; the cache keys it by its name and --model-revision only", be.model)
    facts = {k: listed.get(k) for k in ("id", "root", "revision", "parent", "meta", "max_model_len", "owned_by")} if listed else {}
    for k in ("id", "root", "parent"):  # a local path (llama.cpp's id, vLLM's root) keyed by its file name only
        if isinstance(v := facts.get(k), str):
            facts[k] = public_model_id(v)
    return {"model": {"name": public_model_id(be.model), "server": facts, "model_revision": be.model_revision}}


def _listed_model(be: Any) -> dict | None:
    """The entry of ``/v1/models`` whose id is the run's model (the only one when the server serves one)."""
    try:
        r = be._client().request("GET", be.url("/models"), what="/models", headers=be._headers())
        if not 200 <= r.status_code < 300:
            return None
        listed = model_list(decode_reply(r.content, "/models"))
    except (HttpError, BadResponse):
        return None  # (a server that lists no model, or not as OpenAI does, is keyed by the name alone)
    entries = [d.model_dump() for d in listed.data]
    wanted = {be.model, be.request_model}
    same = [d for d in entries if d.get("id") in wanted or (isinstance(i := d.get("id"), str) and public_model_id(i) == be.model)]
    if same:
        return same[0]
    return entries[0] if len(entries) == 1 else None


def resolve_identity(identity: dict[str, Any] | None, cache: ResponseCache) -> dict[str, Any] | None:
    """``identity`` with a local model's weights replaced by their sha256 (the cache remembers file hashes); None
    when the weights are not on this machine (a remote Ray cluster's actors loaded them)."""
    model = (identity or {}).get("model")
    if isinstance(model, dict) and isinstance(model.get("weights"), (tuple, list)):
        src = Path(model["weights"][1])
        if not src.exists():
            log.warning("the response cache is not used: the model weights are not on this machine to be hashed")
            return None
        assert identity is not None  # its model was read above
        return {**identity, "model": weights_identity(src, cache)}
    return identity


@dataclass(frozen=True)
class RunKey:
    """What every unit key of a run starts from: the kind, the backend's name, the model's identity, the run's
    generation config and its seed (a unit's key adds the unit)."""

    kind: str
    backend: str
    identity: dict[str, Any]
    config: dict
    seed: int


class UnitCache:
    """The cache of one run: a key per unit, lookups and stores (see the module docs)."""

    def __init__(self, cache: ResponseCache, run: RunKey) -> None:
        self.cache, self.kind = cache, run.kind
        self.base = {"backend": run.backend, "identity": run.identity, "kind": run.kind, "config": run.config, "seed": run.seed}
        self.keys: dict[tuple[int, int], str] = {}

    @classmethod
    def for_run(cls, cache: ResponseCache | None, kind: str, be: Backend, config: dict, seed: int) -> UnitCache | None:
        """The run's unit cache (None without a cache, or when the model's weights are not on this machine to be
        hashed: a remote Ray cluster's, said in a warning). A backend that gives no cache identity is refused (E319):
        a run with ``--cache`` is never silently left uncached."""
        if cache is None:
            return None
        own = be.cache_identity()
        if own is None:
            raise BiaskitError(
                "E319",
                f"the {be.name} backend gives no cache identity for this model, so its answers cannot be keyed in the response cache",
                value=be.name,
                fix="run without --cache, or give the backend a cache_identity() naming what identifies its model (docs/architecture.md)",
            )
        identity = resolve_identity(dict(own), cache)
        if identity is None:
            return None
        return cls(cache, RunKey(kind, be.name, identity, config, seed))

    def key(self, u: Unit) -> str:
        k = self.keys.get((u.row, u.sample_index))
        if k is None:
            unit = {"text": u.text, "span": u.span, "prompt_id": u.prompt_id, "sample_index": u.sample_index}
            if u.partner is not None:  # a masked LM's pair score depends on the other variant
                unit["partner"] = u.partner
            k = self.keys[(u.row, u.sample_index)] = cache_key({**self.base, "unit": unit})
        return k

    def lookup(self, units: Sequence[Unit]) -> tuple[list[dict], list[Unit]]:
        """(result rows of the units found, units to run); hits and misses are counted in output rows."""
        found = self.cache.get_many([self.key(u) for u in units], count=False, shape=rows_entry)
        rows: list[dict] = []
        todo: list[Unit] = []
        for u in units:
            value = found.get(self.key(u))
            if value is None or (self.kind == "likelihood" and any("sum_logprob" not in r for r in value)):
                # an entry stored before likelihood rows had sum_logprob: run the unit again
                todo.append(u)
                continue
            rows.extend({"_unit": u, **r} for r in value)
        self.cache.count(hits=len(rows))
        return rows, todo

    def store(self, results: list[dict]) -> None:
        """Store the units of ``results`` whose rows all have no error (a failed call is run again next time)."""
        by_unit: dict[tuple[int, int], list[dict]] = {}
        units: dict[tuple[int, int], Unit] = {}
        for r in results:
            u = r["_unit"]
            by_unit.setdefault((u.row, u.sample_index), []).append({k: v for k, v in r.items() if k != "_unit"})
            units[(u.row, u.sample_index)] = u
        self.cache.count(misses=len(results))
        ok = {self.key(units[k]): rows for k, rows in by_unit.items() if all(r.get("error") is None for r in rows)}
        self.cache.put_many(ok, kind=self.kind)
