"""Render the report as one self-contained HTML page (images as data: URIs, inline CSS, no scripts, no
external requests) and as Markdown next to its ``figures/`` and ``tables/`` folders."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:72em;margin:1.5em auto;padding:0 1em;color:#222;line-height:1.45}
h1{border-bottom:2px solid #2a9d8f;padding-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd}
nav ol{columns:2}figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.9em;color:#555}.tw{overflow-x:auto;margin:.5em 0}
table{border-collapse:collapse;font-size:.82em}td,th{border:1px solid #ccc;padding:.15em .45em;vertical-align:top}
th{background:#f3f5f6;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{font-size:.85em;color:#666}.skip li{color:#8a4b08}pre{background:#f6f8fa;padding:.8em;overflow-x:auto;font-size:.8em}
code{background:#f3f5f6;padding:0 .2em}
"""


def _inline(text: str) -> str:
    """Escape text and show `backticked` parts as code."""
    import re

    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _img_data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def _rel(p, base: Path) -> str:
    try:
        return str(Path(p).resolve().relative_to(base.resolve()))
    except ValueError:
        return str(p)


def render_html(*, title: str, run_dir: Path, sections, overview, summary, manifest, skipped, out_dir: Path) -> str:
    from biaskit.evaluate.report.tables import html_table

    e = html.escape
    toc = [("run", "Run"), *[(s.id, s.title) for s in sections], ("not_made", "Not made"), ("manifest", "Run manifest")]
    body = [f"<h1>{e(title)}</h1>", f"<p>Run folder: <code>{e(str(run_dir))}</code>. Tables and figures of this report are also in "
            f"<code>tables/</code> (CSV, Markdown) and <code>figures/</code> (PNG) next to this file.</p>",
            "<nav><h2 id='contents'>Contents</h2><ol>" + "".join(f"<li><a href='#{i}'>{e(t)}</a></li>" for i, t in toc) + "</ol></nav>"]
    body.append("<section><h2 id='run'>Run</h2>")
    if summary:
        body.append("<h3>Stages</h3><ul>" + "".join(f"<li><b>{e(str(s))}</b>: {e(str(t))}</li>" for s, t in summary) + "</ul>")
    body.append("<h3>Tables</h3><div class='tw'><table><thead><tr><th>table</th><th>file</th><th>rows</th><th>note</th></tr></thead><tbody>")
    for name, path, rows, note in overview:
        body.append(f"<tr><td>{e(name)}</td><td><code>{e(_rel(path, run_dir))}</code></td><td class='num'>{'' if rows is None else rows}</td><td>{e(str(note))}</td></tr>")
    body.append("</tbody></table></div></section>")
    for s in sections:
        body.append(f"<section><h2 id='{e(s.id)}'>{e(s.title)}</h2>")
        body += [f"<p>{_inline(t)}</p>" for t in s.text]
        for f in s.figures:
            body.append(f"<figure><img src='{_img_data_uri(f.path)}' alt='{e(f.caption)}'><figcaption>{e(f.caption)} "
                        f"(<code>{e(_rel(f.path, out_dir))}</code>)</figcaption></figure>")
        for t in s.tables:
            body.append(f"<h3>{_inline(t.caption)}</h3><p class='note'><code>tables/{e(t.name)}.csv</code>, {len(t.df)} rows</p>")
            body.append(html_table(t.df, max_rows=t.max_rows))
        body.append("</section>")
    body.append("<section><h2 id='not_made'>Not made</h2>")
    if skipped:
        body.append("<ul class='skip'>" + "".join(f"<li><b>{e(w)}</b>: {_inline(r)}</li>" for w, r in skipped) + "</ul>")
    else:
        body.append("<p>Every analysis found the tables it needs.</p>")
    body.append("</section><section><h2 id='manifest'>Run manifest</h2>")
    if manifest:
        body.append("<pre>" + e(json.dumps(manifest, indent=2, ensure_ascii=False, default=str)) + "</pre>")
    else:
        body.append("<p>No <code>manifest.json</code> in the run folder.</p>")
    body.append("</section>")
    return ("<!doctype html>\n<html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{e(title)}</title><style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def render_markdown(*, title: str, run_dir: Path, sections, overview, summary, skipped, out_dir: Path) -> str:
    from biaskit.evaluate.report.tables import markdown_table

    md = [f"# {title}", "", f"Run folder: `{run_dir}`", "", "## Run", ""]
    md += [f"- **{s}**: {t}" for s, t in summary]
    md += ["", "| table | file | rows | note |", "|---|---|---|---|"]
    md += [f"| {n} | `{_rel(p, run_dir)}` | {'' if r is None else r} | {note} |" for n, p, r, note in overview]
    for s in sections:
        md += ["", f"## {s.title}", ""] + [*s.text, ""]
        for f in s.figures:
            md += [f"![{f.caption}]({_rel(f.path, out_dir)})", "", f"_{f.caption}_", ""]
        for t in s.tables:
            md += [f"### {t.caption}", "", f"`tables/{t.name}.csv` ({len(t.df)} rows)", "", markdown_table(t.df, max_rows=min(t.max_rows, 25)), ""]
    md += ["", "## Not made", ""]
    md += [f"- **{w}**: {r}" for w, r in skipped] or ["Every analysis found the tables it needs."]
    return "\n".join(md) + "\n"
