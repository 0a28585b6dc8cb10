"""Demo stage 'report': a short Markdown + HTML report of the run's tables."""

from __future__ import annotations


def run(ctx) -> None:
    from biaskit.evaluate.basic_report import write_basic_report

    paths = write_basic_report(ctx.run_dir, ctx.tables, ctx.summary, ctx.run_dir / "report")
    ctx.add("report_html", paths["html"])
    ctx.note("report", f"report written to {paths['html'].relative_to(ctx.run_dir)}")
