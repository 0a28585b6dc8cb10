"""``biaskit demo``: the whole pipeline on bundled data, end to end.

The run folder holds one table per stage (each with its ``.manifest.json``), ``manifest.json`` for the
run, ``report/`` (Markdown + self-contained HTML) and ``hub/`` (a Hub-ready dataset folder). Stages run
in :data:`STAGES` order; each is a module ``biaskit.demo.stage_<name>`` with ``run(ctx)``. A stage reads
the tables earlier stages recorded in ``ctx.tables`` and records its own.
"""

from __future__ import annotations

import importlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.baseline import check_span
from biaskit.io import write_json_atomic
from biaskit.log import get_logger
from biaskit.manifest import new_manifest
from biaskit.ownership import claim_stagewise, mark_stagewise

#: pipeline order of the demo stages
STAGES = ("scrape", "templates", "generate", "counterfactual", "likelihood", "fillmask", "score", "annotate", "train", "report", "hub")


@dataclass
class DemoContext:
    run_dir: Path
    seed: int = 0
    quick: bool = False
    label_studio_url: str | None = None
    baseline_span: str = "continuation"  # biaskit.evaluate.baseline.SPANS: what the score stage scores on both sides
    tables: dict[str, Path] = field(default_factory=dict)  # logical name -> file
    summary: list[tuple[str, str]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # facts stages pass on (counts, settings)
    timings: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, path: Path) -> None:
        self.tables[name] = Path(path)

    def note(self, stage: str, line: str) -> None:
        self.summary.append((stage, line))


#: written first into the demo's run folder: a later demo run may write there (resume, rerun); nothing else is
DEMO_MARKER = "biaskit_demo.json"
DEMO_WRITTEN_BY = "biaskit demo"


def run_demo(
    out: str | Path,
    *,
    seed: int = 0,
    label_studio_url: str | None = None,
    quick: bool = False,
    stages: tuple[str, ...] = STAGES,
    baseline_span: str = "continuation",
) -> DemoContext:
    log = get_logger("demo")
    check_span(baseline_span)
    run_dir = Path(out)
    if run_dir.exists() and not run_dir.is_dir():
        raise BiaskitError(
            "E006",
            "the demo's --out must be a folder, and a file of that name exists",
            value=str(run_dir),
            fix="choose a folder, e.g. --out runs/demo",
        )
    # the run folder is the demo's (new, empty, or marked by an earlier demo run, finished or killed), never a user's
    claim_stagewise(run_dir, DEMO_MARKER, DEMO_WRITTEN_BY)
    run_dir.mkdir(parents=True, exist_ok=True)
    if not (run_dir / DEMO_MARKER).exists():
        write_json_atomic(run_dir / DEMO_MARKER, {"written_by": DEMO_WRITTEN_BY})
    ctx = DemoContext(run_dir=run_dir, seed=seed, quick=quick, label_studio_url=label_studio_url, baseline_span=baseline_span)
    for name in stages:
        mod = importlib.import_module(f"biaskit.demo.stage_{name}")
        log.info("demo stage: %s", name)
        t0 = time.perf_counter()
        mod.run(ctx)
        ctx.timings[name] = round(time.perf_counter() - t0, 2)
    manifest = new_manifest(
        "biaskit demo",
        config={"seed": seed, "quick": quick, "label_studio": bool(label_studio_url), "stages": list(stages), "baseline_span": baseline_span},
        seed=seed,
        stage="run",
        extra={
            "tables": {k: str(v.relative_to(run_dir)) if v.is_relative_to(run_dir) else str(v) for k, v in ctx.tables.items()},
            "summary": [list(s) for s in ctx.summary],
            "timings_s": ctx.timings,
            "info": json.loads(json.dumps(ctx.info, default=str)),
        },
    )
    write_json_atomic(run_dir / "manifest.json", manifest)
    # the run folder's marker lists the demo's files with their sha256 (report/ and hub/ have markers of their
    # own), so a later demo run into it refuses a file the user changed since (E006) instead of replacing it
    mark_stagewise(run_dir, DEMO_MARKER, DEMO_WRITTEN_BY, _run_files(run_dir))
    return ctx


def _run_files(run_dir: Path) -> list[Path]:
    """The files of a demo run folder that its own marker lists: all but report/, hub/ (each owned by its marker)."""
    return [p for p in sorted(run_dir.rglob("*")) if p.is_file() and p.relative_to(run_dir).parts[0] not in ("report", "hub", DEMO_MARKER)]
