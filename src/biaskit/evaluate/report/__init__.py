"""Reports: Markdown/CSV tables, matplotlib plots and one self-contained offline HTML page per run.

Entry point: :func:`build_report` (``biaskit report RUN_DIR --out DIR``).
"""

from __future__ import annotations

from biaskit.evaluate.report.build import ReportResult, build_report, discover_tables

__all__ = ["ReportResult", "build_report", "discover_tables"]
