"""Demo stage 'report': the statistical report of the run (biaskit.evaluate.report.build_report).

Runs on whatever tables earlier stages recorded in ``ctx.tables``; every analysis whose table or columns
are missing is listed in the report under "Not made" and in this stage's note.
"""

from __future__ import annotations

import json

from biaskit.evaluate.report import build_report
from biaskit.evaluate.report.headline import EVIDENCE, verdicts


def run(ctx) -> None:
    rd = ctx.run_dir
    manifest = {
        "command": "biaskit demo",
        "seed": ctx.seed,
        "quick": ctx.quick,
        "tables": {k: str(v.relative_to(rd)) if v.is_relative_to(rd) else str(v) for k, v in ctx.tables.items()},
        "timings_s": dict(ctx.timings),
        "info": json.loads(json.dumps(ctx.info, default=str)),
        "note": "the run's manifest.json (written after the last stage) adds versions and the remaining stages",
    }
    res = build_report(
        rd,
        rd / "report",
        tables=dict(ctx.tables),
        summary=list(ctx.summary),
        manifest=manifest,
        seed=ctx.seed,
        n_boot=200 if ctx.quick else 1000,
        title="biaskit demo report",
        allow_empty=True,
    )
    ctx.add("report_html", res.html)
    lines = verdicts(res.headline)
    ctx.info["report"] = {
        "figures": len(res.figures),
        "tables": len(res.tables),
        "sections": res.sections,
        "not_made": [f"{w}: {r}" for w, r in res.skipped],
        # the first screen's verdict lines (what the demo claims, and why it claims nothing where it cannot)
        "verdicts": [{"line": v.title, "verdict": v.verdict, "family": v.family} for v in lines],
    }
    missing = "; not made: " + ", ".join(w for w, _ in res.skipped) if res.skipped else ""
    n_ev = sum(v.verdict == EVIDENCE for v in lines)
    ctx.note(
        "report",
        f"{res.html.relative_to(rd)}: {len(res.figures)} figures, {len(res.tables)} tables; first screen: {len(lines)} verdict lines, "
        f"{n_ev} with evidence of a gap{missing}",
    )
