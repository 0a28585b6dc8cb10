"""Render the report as one self-contained HTML page (images as data: URIs, inline CSS, no scripts, no
external requests) and as Markdown next to its ``figures/`` and ``tables/`` folders."""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from biaskit.evaluate.baseline import SPAN_WORDS
from biaskit.evaluate.report.headline import families_sentence, verdict_extras, verdicts
from biaskit.evaluate.report.model import Finding, Section
from biaskit.evaluate.report.tables import compact, html_table, markdown_table

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:72em;margin:1.5em auto;padding:0 1em;color:#222;line-height:1.45}
h1{border-bottom:2px solid #2a9d8f;padding-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ddd}
nav ol{columns:2}.headline{background:#f7fbfa;border:1px solid #cfe8e4;padding:.3em 1em .8em;margin:1em 0}
.headline h2{margin-top:.4em}tr.flagged td{color:#6b6b6b}td .flag{color:#8a4b08;font-weight:600}
ul.verdicts{padding-left:1.2em;margin:.4em 0}ul.verdicts li{margin:.15em 0}ul.verdicts details{margin:.2em 0 .4em}
td,th{overflow-wrap:break-word}table.hl{width:100%}figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.9em;color:#555}.tw{overflow-x:auto;margin:.5em 0}
table{border-collapse:collapse;font-size:.82em}td,th{border:1px solid #ccc;padding:.15em .45em;vertical-align:top}
th{background:#f3f5f6;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{font-size:.85em;color:#666}.skip li{color:#8a4b08}pre{background:#f6f8fa;padding:.8em;font-size:.8em;white-space:pre-wrap;overflow-wrap:anywhere}
code{background:#f3f5f6;padding:0 .2em}
"""


def _inline(text: str) -> str:
    """Escape text and show `backticked` parts as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _img_data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def _rel(p, base: Path) -> str:
    try:
        return str(Path(p).resolve().relative_to(base.resolve()))
    except ValueError:
        return str(p)


def _num(v, signed: bool = False) -> str:
    if v is None or v != v:
        return "n/a"
    v = float(v) + 0.0  # no "-0.000"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def _p(v) -> str:
    if v is None:
        return ""
    if v != v:
        return "n/a"
    return f"{v:.2e}" if 0 < v < 0.001 else f"{v:.3f}"


HEADLINE_COLUMNS = (
    "finding",
    "measure",
    "where",
    "comparison",
    "estimate [95% CI] (first minus second)",
    "p (corrected, over what)",
    "n",
    "uncertain / caution",
)


def headline_rows(headline) -> list[tuple[str, ...]]:
    """The headline block as text rows (``HEADLINE_COLUMNS``), shared by the HTML and Markdown pages."""
    rows: list[tuple[str, ...]] = []
    for f in headline:
        if f.text:
            est = f.text
        else:
            signed = f.kind not in ("Likelihood Bias", "Annotator agreement")
            est = _num(f.estimate, signed) + (f" [{_num(f.ci[0], signed)}, {_num(f.ci[1], signed)}]" if f.ci else "")
        p = f"{_p(f.p)} ({f.p_label})" if f.p is not None else ""
        notes = ([f"uncertain: {', '.join(f.flags)}"] if f.flags else []) + (
            [f"caution: {', '.join(f.cautions)}"] if getattr(f, "cautions", None) else []
        )
        rows.append((f.kind, f.metric, f.where, f.comparison, est, p, f.n, "; ".join(notes)))
    return rows


def _headline_summary(headline, alpha: float) -> str:
    n = len(headline)
    base = sum(1 for f in headline if getattr(f, "baseline", False))
    flagged = sum(1 for f in headline if f.flags)
    small = sum(1 for f in headline if any("n <" in c for c in getattr(f, "cautions", [])))
    sig = [f for f in headline if f.p is not None and f.p == f.p and f.p < alpha and not f.flags]
    parts = [
        f"{n} finding(s) from this run"
        + (f": the model findings first, then {base} about the Wikipedia baseline alone (its own groups, no model involved)." if base else ".")
    ]
    spans = {f.comparison.rsplit("(same span: ", 1)[1].rstrip(")") for f in headline if "(same span: " in f.comparison}
    if spans:
        parts.append("Model vs Wikipedia compares the same span of text: " + "; ".join(SPAN_WORDS.get(x, x) for x in sorted(spans)) + ".")
    if flagged:
        parts.append(
            f"{flagged} are uncertain (grey): their interval includes 0 (or the chance rate), or their corrected p is not below "
            f"{alpha:g}, so the data are consistent with no difference."
        )
    if small:
        parts.append(
            f"{small} rest on fewer than 30 texts (sentences, items) in a group: a caution (their interval and p are approximate), "
            "not a verdict; a small group can still give an interval that excludes 0."
        )
    if any(f.p is not None for f in headline):
        parts.append(f"{len(sig)} finding(s) have a corrected p < {alpha:g} and an interval that excludes 0.")
    return " ".join(parts)


def _folded(headline, alpha: float, min_gap: float):
    """(verdict lines, findings folded under each line, findings left in the main table): an uncertain finding of a
    headline family folds under its verdict line; every other finding stays in the main table."""
    lines = verdicts(headline, alpha, min_gap)
    folded = {id(f) for v in lines for f in v.findings if f.flags}
    return lines, {id(v): [f for f in v.findings if f.flags] for v in lines}, [f for f in headline if id(f) not in folded]


def _hl_table_html(rows_of, cls: str = "hl") -> str:
    e = html.escape
    out = ["<div class='tw'><table class='" + cls + "'><thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in HEADLINE_COLUMNS) + "</tr></thead><tbody>"]
    for f, row in zip(rows_of, headline_rows(rows_of)):
        cells = [
            f"<a href='#{e(f.anchor)}'>{e(row[0])}</a>" if f.anchor else e(row[0]),
            *map(e, row[1:7]),
            f"<span class='flag'>{e(row[7])}</span>" if row[7] else "",
        ]
        out.append(f"<tr class='{'flagged' if f.flags else 'ok'}'>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _verdicts_html(lines, folds) -> str:
    e = html.escape
    items = []
    for v in lines:
        fold = folds[id(v)]
        det = (
            f"<details><summary>{len(fold)} uncertain row{'s' if len(fold) != 1 else ''}</summary>{_hl_table_html(fold, 'hl fold')}</details>"
            if fold
            else ""
        )
        fam, untested = verdict_extras(v)
        bad = next((f for f in v.findings if f.invalid), None) if v.lead is None else None
        link = f" (<a href='#{e(bad.invalid_anchor)}'>see the validation</a>)" if bad is not None and bad.invalid_anchor else ""
        extra = (f" <span class='note'>[{e(fam)}]</span>" if fam else "") + (f"<br><span class='note'>{e(untested)}</span>" if untested else "")
        items.append(f"<li><b>{e(v.title)}</b>: <span class='verdict'>{e(v.verdict)}</span>{link}{extra}{det}</li>")
    return "<ul class='verdicts'>" + "".join(items) + "</ul>" if items else ""


@dataclass(frozen=True)
class ReportPage:
    """What the HTML and the Markdown page of a report are made of: the title, the run folder, the sections in page
    order, the run's tables (``overview``), the stage notes (``summary``), the analyses not made (``skipped``), the
    output folder (links are relative to it), the headline findings with the ``alpha`` and ``min_gap`` they are read
    with, and the run manifest (shown on the HTML page)."""

    title: str
    run_dir: Path
    sections: Sequence[Section]
    overview: Sequence[tuple]
    summary: Sequence[tuple]
    skipped: Sequence[tuple[str, str]]
    out_dir: Path
    headline: Sequence[Finding] = ()
    alpha: float = 0.05
    min_gap: float = 0.05
    manifest: dict | None = None


def render_html(page: ReportPage) -> str:
    title, run_dir, sections, overview, summary = page.title, page.run_dir, page.sections, page.overview, page.summary
    manifest, skipped, out_dir, headline, alpha, min_gap = page.manifest, page.skipped, page.out_dir, page.headline, page.alpha, page.min_gap
    e = html.escape
    toc = [
        ("headline", "Headline findings"),
        ("run", "Run"),
        *[(s.id, s.title) for s in sections],
        ("not_made", "Not made"),
        ("manifest", "Run manifest"),
    ]
    body = [f"<h1>{e(title)}</h1>"]
    body.append("<section class='headline' id='headline-block'><h2 id='headline'>Headline findings</h2>")
    if headline:
        lines, folds, main = _folded(headline, alpha, min_gap)
        body.append(f"<p>{e(_headline_summary(headline, alpha))} Details: follow the links to each section.</p>")
        fams = families_sentence(headline)
        if fams:
            body.append(f"<p class='families'>{e(fams)}</p>")
        body.append(_verdicts_html(lines, folds))
        if main:
            body.append(_hl_table_html(main))
        body.append("<p class='note'>The same headline, every row: <a href='tables/headline.csv'>tables/headline.csv</a>.</p>")
    else:
        body.append("<p>No analysis produced a finding (see Not made).</p>")
    if skipped:
        body.append("<p class='note'>Not made: " + e(", ".join(dict.fromkeys(w for w, _ in skipped))) + " (<a href='#not_made'>why</a>).</p>")
    body.append("</section>")
    body += [
        f"<p>Run folder: <code>{e(str(run_dir))}</code>. Tables and figures of this report are also in "
        f"<code>tables/</code> (CSV, Markdown) and <code>figures/</code> (PNG) next to this file.</p>",
        "<nav><h2 id='contents'>Contents</h2><ol>" + "".join(f"<li><a href='#{i}'>{e(t)}</a></li>" for i, t in toc) + "</ol></nav>",
    ]
    body.append("<section><h2 id='run'>Run</h2>")
    if summary:
        body.append("<h3>Stages</h3><ul id='stages'>" + "".join(f"<li><b>{e(str(s))}</b>: {_inline(str(t))}</li>" for s, t in summary) + "</ul>")
    body.append("<h3>Tables</h3><div class='tw'><table><thead><tr><th>table</th><th>file</th><th>rows</th><th>note</th></tr></thead><tbody>")
    for name, path, rows, note in overview:
        body.append(
            f"<tr><td>{e(name)}</td><td><code>{e(_rel(path, run_dir))}</code></td><td class='num'>{'' if rows is None else rows}</td><td>{e(str(note))}</td></tr>"
        )
    body.append("</tbody></table></div></section>")
    for s in sections:
        body.append(f"<section><h2 id='{e(s.id)}'>{e(s.title)}</h2>")
        body += [f"<p>{_inline(t)}</p>" for t in s.text]
        for f in s.figures:
            body.append(
                f"<figure><img src='{_img_data_uri(f.path)}' alt='{e(f.caption)}'><figcaption>{e(f.caption)} "
                f"(<code>{e(_rel(f.path, out_dir))}</code>)</figcaption></figure>"
            )
        for t in s.tables:
            shown, hidden = compact(t.df, t.show)
            more = f"; {hidden} more column(s) in the CSV" if hidden > 0 else ""
            body.append(
                f"<h3>{_inline(t.caption)}</h3><p class='note'>Full table: <a href='tables/{e(t.name)}.csv'>tables/{e(t.name)}.csv</a> "
                f"({len(t.df)} rows, {len(t.df.columns)} columns{more}).</p>"
            )
            body.append(html_table(shown, max_rows=t.max_rows))
        body.append("</section>")
    body.append("<section><h2 id='not_made'>Not made</h2>")
    if skipped:
        body.append("<ul class='skip'>" + "".join(f"<li><b>{e(w)}</b>: {_inline(r)}</li>" for w, r in skipped) + "</ul>")
    else:
        body.append("<p>Every analysis found the tables it needs.</p>")
    body.append("</section><section><h2 id='manifest'>Run manifest</h2>")
    if manifest:
        text = json.dumps(manifest, indent=2, ensure_ascii=False, default=str)
        body.append(
            f"<details><summary>Show the run manifest ({text.count(chr(10)) + 1} lines of JSON; also in "
            "<code>manifest.json</code>)</summary><pre>" + e(text) + "</pre></details>"
        )
    else:
        body.append("<p>No <code>manifest.json</code> in the run folder.</p>")
    body.append("</section>")
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{e(title)}</title><style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _md_table(rows_of) -> list[str]:
    md = ["| " + " | ".join(HEADLINE_COLUMNS) + " |", "|" + "---|" * len(HEADLINE_COLUMNS)]
    return md + ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in headline_rows(rows_of)]


def render_markdown(page: ReportPage) -> str:
    title, run_dir, sections, overview, summary = page.title, page.run_dir, page.sections, page.overview, page.summary
    skipped, out_dir, headline, alpha, min_gap = page.skipped, page.out_dir, page.headline, page.alpha, page.min_gap
    md = [f"# {title}", "", "## Headline findings", ""]
    if headline:
        lines, folds, main = _folded(headline, alpha, min_gap)
        md += [_headline_summary(headline, alpha), ""]
        fams = families_sentence(headline)
        md += [fams, ""] if fams else []
        for v in lines:
            fam, untested = verdict_extras(v)
            bad = next((f for f in v.findings if f.invalid), None) if v.lead is None else None
            link = f" ([see the validation](#{bad.invalid_anchor}))" if bad is not None and bad.invalid_anchor else ""
            md.append(f"- **{v.title}**: {v.verdict}{link}" + (f" [{fam}]" if fam else "") + (f"; {untested}" if untested else ""))
            fold = folds[id(v)]
            if fold:
                md += ["", f"  <details><summary>{len(fold)} uncertain row{'s' if len(fold) != 1 else ''}</summary>", ""]
                md += ["  " + x for x in _md_table(fold)]
                md += ["", "  </details>", ""]
        md += [""] + (_md_table(main) if main else []) + ["", "The same headline, every row: [tables/headline.csv](tables/headline.csv)."]
    else:
        md.append("No analysis produced a finding (see Not made).")
    md += ["", f"Run folder: `{run_dir}`", "", "## Run", ""]
    md += [f"- **{s}**: {t}" for s, t in summary]
    md += ["", "| table | file | rows | note |", "|---|---|---|---|"]
    md += [f"| {n} | `{_rel(p, run_dir)}` | {'' if r is None else r} | {note} |" for n, p, r, note in overview]
    for s in sections:
        md += ["", f"## {s.title}", ""] + [*s.text, ""]
        for f in s.figures:
            md += [f"![{f.caption}]({_rel(f.path, out_dir)})", "", f"_{f.caption}_", ""]
        for t in s.tables:
            shown, _ = compact(t.df, t.show)
            md += [
                f"### {t.caption}",
                "",
                f"Full table: [tables/{t.name}.csv](tables/{t.name}.csv) ({len(t.df)} rows, {len(t.df.columns)} columns)",
                "",
                markdown_table(shown, max_rows=min(t.max_rows, 25)),
                "",
            ]
    md += ["", "## Not made", ""]
    md += [f"- **{w}**: {r}" for w, r in skipped] or ["Every analysis found the tables it needs."]
    return "\n".join(md) + "\n"
