"""A plain run report (tables, row counts, stage summary) in Markdown and self-contained HTML.

The full statistical report (plots, tests) lives in :mod:`biaskit.evaluate.report`; this one only needs
the run folder and is what the demo falls back to.
"""

from __future__ import annotations

import html
from pathlib import Path

from biaskit.io import write_text_atomic


def write_basic_report(run_dir: Path, tables: dict[str, Path], summary: list[tuple[str, str]], out: Path) -> dict[str, Path]:
    import pyarrow.parquet as pq

    rows = []
    for name, path in tables.items():
        n = None
        if str(path).endswith(".parquet") and Path(path).exists():
            n = pq.read_metadata(path).num_rows
        rows.append((name, str(Path(path).relative_to(run_dir)) if Path(path).is_relative_to(run_dir) else str(path), n))
    md = ["# biaskit run report", "", "## Stages", ""]
    md += [f"- **{s}**: {line}" for s, line in summary]
    md += ["", "## Tables", "", "| table | file | rows |", "|---|---|---|"]
    md += [f"| {n} | `{p}` | {'' if r is None else r} |" for n, p, r in rows]
    out.mkdir(parents=True, exist_ok=True)
    md_path = write_text_atomic(out / "report.md", "\n".join(md) + "\n")
    body = ["<h1>biaskit run report</h1>", "<h2 id='stages'>Stages</h2><ul>"]
    body += [f"<li><b>{html.escape(s)}</b>: {html.escape(line)}</li>" for s, line in summary]
    body += ["</ul><h2 id='tables'>Tables</h2><table><tr><th>table</th><th>file</th><th>rows</th></tr>"]
    body += [f"<tr><td>{html.escape(n)}</td><td><code>{html.escape(p)}</code></td><td>{'' if r is None else r}</td></tr>" for n, p, r in rows]
    body.append("</table>")
    page = ("<!doctype html><html lang='en'><head><meta charset='utf-8'><title>biaskit run report</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.2em .5em}</style></head><body>" + "\n".join(body) + "</body></html>\n")
    html_path = write_text_atomic(out / "report.html", page)
    return {"md": md_path, "html": html_path}
