"""The pages' work spread over worker processes (:mod:`multiprocessing`) or Ray tasks, results in task order, for
:func:`biaskit.scrape.pipeline.build_from_pages`."""

from __future__ import annotations

import multiprocessing as mp
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from biaskit.pool import RayCluster, biaskit_cause
from biaskit.scrape.dump import Page
from biaskit.scrape.extract import ALL_PAGES_KEY, AllPages, assigns_to_do, process_stream


def _ray_map(fn, tasks: Iterable, engine: Any, window: int = 8) -> Iterator:
    """``fn`` over ``tasks`` as Ray tasks on the cluster of ``engine`` (an :class:`~biaskit.pool.EngineSpec`),
    results in task order, at most ``window`` x actors tasks in flight."""
    with RayCluster(engine):  # connects (or starts) Ray for the tasks below
        import ray

        remote = ray.remote(num_cpus=engine.num_cpus, max_retries=0)(fn)
        pending: deque = deque()
        limit = max(1, engine.actors) * window
        try:
            for t in tasks:
                pending.append(remote.remote(t))
                if len(pending) >= limit:
                    yield ray.get(pending.popleft())
            while pending:
                yield ray.get(pending.popleft())
        except Exception as exc:
            err = biaskit_cause(exc)
            if err is not None:
                raise err from None
            raise


def pool_map(fn, tasks: Iterable, processes: int) -> Iterator:
    if processes <= 1:
        for t in tasks:
            yield fn(t)
        return

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ctx.Pool(processes) as pool:
        yield from pool.imap(fn, tasks, chunksize=1)


def page_tasks(pages: Callable[[set[str]], Iterable[Page]], assignments, done: set[str], settings: dict, skipped: dict) -> Iterator[tuple]:
    """Tasks for :func:`process_page`: the source's pages not done yet that the config names (the rest counted)."""
    for page in pages(done):
        assigns = assigns_to_do(page, assignments, done, skipped)
        if assigns:
            done.add(page.title)
            yield page, assigns, settings


def stream_results(streams, assignments, done: set[str], settings: dict, skipped: dict, processes: int, engine: Any, extra: dict | None) -> Iterator:
    """Page results of a multistream dump, its streams run on ``processes`` workers or on Ray, adding up what
    each stream skipped."""
    stream_tasks = streams(done, settings)
    mapped = (
        _ray_map(process_stream, stream_tasks, engine) if engine is not None and engine.is_ray else pool_map(process_stream, stream_tasks, processes)
    )
    for out, skip in mapped:
        skipped["pages_not_in_config"] += skip["pages_not_in_config"]
        skipped["pages_resumed"] += skip["pages_resumed"]
        if isinstance(assignments, AllPages) and extra and ALL_PAGES_KEY in extra.get("pages_per_group", {}):
            extra["pages_per_group"][ALL_PAGES_KEY] += skip["articles"]  # as the one-pass reader counts them
        yield from out
