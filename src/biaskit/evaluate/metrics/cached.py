"""Model-based metrics answered from the response cache (``biaskit score --cache DIR``).

A metric opts in by returning its model's identity from ``cache_identity(cache)`` (the classifier metrics
do; a lexicon metric is cheap and returns None, so it is never cached). A row's key is the sha256 of the
metric's name, version and parameters, that identity (the weights' sha256 or a Hub commit, the tokenizer hash)
and the row's inputs (the text column and the metric's extra input columns). Rows whose score has an error are
not stored, so they are scored again next time.

Another metric (an LLM judge, say) opts in the same way::

    class JudgeMetric(Metric):
        cache_ignores = ("base_url", "concurrency", "timeout")  # how the server is reached, not what it says
        def cache_identity(self, cache):
            return {"judge": ..., "prompt_sha256": self.sha256, "orders": ...}

and :func:`score_cached` (what ``score_table(..., cache=...)`` calls per batch) does the rest; or it calls
:class:`biaskit.evaluate.cache.ResponseCache` directly for its own unit of work (see that module). The judge
(:mod:`.judge`) does the former.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from biaskit.evaluate.cache import ResponseCache, cache_key, tokenizer_hash, weights_identity
from biaskit.evaluate.metrics.cost import count_cached_tokens
from biaskit.formats.cache_entries import columns_shape


def metric_identity(m: Any, cache: ResponseCache) -> dict[str, Any] | None:
    """What identifies the metric's answers (None: the metric is not cached): name, version, parameters and
    the metric's own ``cache_identity``."""
    own = m.cache_identity(cache)
    if own is None:
        return None
    ignored = ("batch_size", "batch_tokens", *getattr(m, "cache_ignores", ()))  # speed or transport, not results
    params = {k: v for k, v in m.config.items() if k not in ignored}
    return {"metric": m.name, "version": m.version, "params": params, "text_column": m.text_column, "identity": own}


def hf_classifier_identity(clf: Any, cache: ResponseCache) -> dict[str, Any] | None:
    """The identity of a loaded :class:`~.classifier.HFClassifier`: its weights' sha256 (a local folder) or Hub
    commit, tokenizer hash, device and dtype; None when a Hub model's commit is unknown."""
    local = Path(str(clf.model_id)).expanduser()
    if local.exists():
        model = weights_identity(local, cache)
    else:
        commit = getattr(clf.model.config, "_commit_hash", None)
        if not commit:
            return None
        model = f"hub:{clf.model_id}@{commit}"
    return {"model": model, "tokenizer": tokenizer_hash(clf.tokenizer), "device": str(clf.device), "dtype": clf.dtype_name}


def score_cached(m: Any, batch: Mapping[str, Sequence[Any]], cache: ResponseCache, identity: dict[str, Any]) -> dict[str, list]:
    """``m.score(batch)`` with the rows found in ``cache`` taken from it and the others scored and stored.
    Hits and misses are counted in rows, and the hits' tokens (a metric with token columns) in
    ``cache.hit_tokens``: the run did not spend them."""
    inputs = [c for c in m.input_columns if c in batch]
    n = len(batch[m.text_column])
    keys = [cache_key({**identity, "inputs": {c: batch[c][i] for c in inputs}}) for i in range(n)]
    found = cache.get_many(keys, count=False, shape=columns_shape(m.output_columns()))
    todo = [i for i in range(n) if keys[i] not in found]
    cols = list(m.output_columns())
    out: dict[str, list] = {c: [None] * n for c in cols}
    for i in range(n):
        if keys[i] in found:
            for c in cols:
                out[c][i] = found[keys[i]].get(c)
    count_cached_tokens(cache, m, out, (i for i in range(n) if keys[i] in found))
    if todo:
        res = m.score({c: [batch[c][i] for i in todo] for c in batch})
        new: dict[str, dict] = {}
        for j, i in enumerate(todo):
            row = {c: res[c][j] for c in cols}
            for c in cols:
                out[c][i] = row[c]
            if row.get(m.error_column) is None:
                new[keys[i]] = row
        cache.put_many(new, kind=f"score:{m.name}")
    cache.count(hits=n - len(todo), misses=len(todo))
    return out
