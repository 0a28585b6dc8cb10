"""Model runs on the Ray engine: the runner's work handed to :class:`biaskit.pool.RayCluster`.

Each actor builds the backend once (with the same :func:`~biaskit.evaluate.runners.builtin.make_backend` the local engine uses) and turns batches
of units into result rows; the driver keeps a :class:`RemoteBackend` stand-in with no model in it.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from biaskit.evaluate.runners.backend import BackendBase, Capabilities, RunSettings, capabilities_of, run_kind
from biaskit.evaluate.runners.builtin import make_backend
from biaskit.evaluate.runners.common import LikelihoodSettings, Unit
from biaskit.pool import RayCluster


@dataclass(frozen=True)
class ActorWork:
    """What every actor of a run builds and runs: the backend ``backend`` of ``model`` with its constructor
    ``options``, asked for ``kind`` with ``settings`` in batches of ``batch_size`` (None: the backend picks).
    Sent to each actor whole (it pickles)."""

    kind: str
    backend: str
    model: str
    options: dict[str, Any]
    settings: RunSettings
    batch_size: int | None = None


def describe_backend(work: ActorWork) -> dict[str, Any]:
    """What the driver needs to know of the backend of ``work`` before a run (name, revision, describe(), BOS policy)."""
    be = make_backend(work.backend, work.model, work.options)
    caps = capabilities_of(be)
    s = work.settings
    info = {
        "name": be.name,
        "revision": be.revision,
        "describe": be.describe(),
        "capabilities": caps,
        "bos": be.bos_policy(s) if isinstance(s, LikelihoodSettings) and caps.supports("likelihood") else None,
        "cache_identity": be.cache_identity(),
    }
    return info


class RemoteBackend(BackendBase):
    """Driver-side stand-in for a backend that lives on the Ray actors (no model in the driver): it knows the
    actors' backend's name, revision, description, capabilities, BOS policy and cache identity."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.name = info["name"]
        self.revision = info["revision"]
        self._describe = info["describe"]
        self._bos = info.get("bos")
        self._identity = info.get("cache_identity")
        self.truncated_count = 0
        self.batch_sizes_used: list[int] = []
        caps = info["capabilities"]
        assert isinstance(caps, Capabilities)  # describe_backend sends the actors' backend's own
        self.capabilities = caps  # type: ignore[misc]  # this instance stands for the actors' backend class

    def describe(self) -> dict[str, Any]:
        return dict(self._describe or {})

    def bos_policy(self, s: LikelihoodSettings) -> int | None:
        return self._bos

    def cache_identity(self) -> dict[str, Any] | None:
        return self._identity


class RunnerActor:
    """A Ray actor holding one backend (model loaded once); turns a batch of units into result rows."""

    def __init__(self, work: ActorWork) -> None:
        self.kind = work.kind
        self.settings = work.settings
        self.batch_size = work.batch_size
        self.be = make_backend(work.backend, work.model, work.options)

    def __call__(self, batch):
        cols = {c: batch.column(c).to_pylist() for c in batch.column_names}
        units = [Unit(r, p, t, k, s) for r, p, t, k, s in zip(cols["row"], cols["prompt_id"], cols["text"], cols["sample_index"], cols["span"])]
        trunc0 = self.be.truncated_count
        n_bs = len(self.be.batch_sizes_used)
        rows, samples, results = [], [], []
        for res in run_kind(self.be, self.kind, units, self.settings, self.batch_size):
            for r in res:
                u = r["_unit"]
                rows.append(u.row)
                samples.append(u.sample_index)
                results.append(pickle.dumps({k: v for k, v in r.items() if k != "_unit"}))
        meta = {"truncated": self.be.truncated_count - trunc0, "batch_sizes": list(self.be.batch_sizes_used[n_bs:])}
        metas = [pickle.dumps(meta)] + [None] * (len(rows) - 1) if rows else []
        return pa.table(
            {
                "row": pa.array(rows, pa.int64()),
                "sample_index": pa.array(samples, pa.int64()),
                "result": pa.array(results, pa.binary()),
                "meta": pa.array(metas, pa.binary()),
            }
        )


def run_units_on_ray(cluster: RayCluster, work: ActorWork, units: Sequence[Unit], remote: RemoteBackend) -> Iterator[list[dict]]:
    """Yield result batches (lists of dicts with ``_unit``) like a backend method, computed on Ray actors that each
    build the backend of ``work``."""
    by_key = {(u.row, u.sample_index): u for u in units}
    table = pa.table(
        {
            "row": pa.array([u.row for u in units], pa.int64()),
            "prompt_id": pa.array([u.prompt_id for u in units], pa.string()),
            "text": pa.array([u.text for u in units], pa.string()),
            "sample_index": pa.array([u.sample_index for u in units], pa.int64()),
            "span": pa.array([u.span for u in units], pa.string()),
        }
    )
    for out in cluster.map_pool(table, RunnerActor, {"work": work}):
        rows = out.column("row").to_pylist()
        samples = out.column("sample_index").to_pylist()
        res = out.column("result").to_pylist()
        for m in out.column("meta").to_pylist():
            if m is not None:
                meta = pickle.loads(m)
                remote.truncated_count += meta["truncated"]
                remote.batch_sizes_used.extend(meta["batch_sizes"])
        batch = []
        for r, k, blob in zip(rows, samples, res):
            d = pickle.loads(blob)
            d["_unit"] = by_key[(r, k)]
            batch.append(d)
        if batch:
            yield batch
