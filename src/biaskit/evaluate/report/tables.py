"""Result tables as Markdown, CSV and HTML (no tabulate dependency)."""

from __future__ import annotations

import html
import math
from pathlib import Path


def fmt_value(v, floatfmt: str = ".3f") -> str:
    if v is None:
        return ""
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "yes" if v else "no"
    if isinstance(v, float) or type(v).__name__ in ("float64", "float32"):
        f = float(v)
        if math.isnan(f):
            return "n/a"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        if f != 0 and abs(f) < 10 ** -int(floatfmt[1:-1] if floatfmt[1:-1].isdigit() else 3):
            return f"{f:.2e}"
        return format(f, floatfmt)
    return str(v)


def markdown_table(df, *, max_rows: int | None = None, floatfmt: str = ".3f") -> str:
    """A GitHub-flavoured Markdown table; ``|`` in cells escaped; a note when rows were cut."""
    cols = [str(c) for c in df.columns]
    shown = df if max_rows is None else df.head(max_rows)
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in shown.itertuples(index=False):
        out.append("| " + " | ".join(fmt_value(v, floatfmt).replace("|", "\\|").replace("\n", " ") for v in row) + " |")
    if max_rows is not None and len(df) > max_rows:
        out.append(f"\n_{len(df) - max_rows} more rows in the CSV file._")
    return "\n".join(out)


def html_table(df, *, max_rows: int | None = 60, floatfmt: str = ".3f") -> str:
    cols = [str(c) for c in df.columns]
    shown = df if max_rows is None else df.head(max_rows)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = []
    for row in shown.itertuples(index=False):
        cells = []
        for v in row:
            s = fmt_value(v, floatfmt)
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            cells.append(f"<td class='num'>{html.escape(s)}</td>" if num else f"<td>{html.escape(s)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = ""
    if max_rows is not None and len(df) > max_rows:
        note = f"<p class='note'>{len(df) - max_rows} more rows in the CSV file.</p>"
    return f"<div class='tw'><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>{note}"


#: rows written to a table's .md file (the .csv always has every row)
MD_MAX_ROWS = 2000


def write_table_files(df, out_dir: str | Path, name: str) -> dict[str, Path]:
    """Write ``<name>.csv`` (all rows, full precision) and ``<name>.md`` (first :data:`MD_MAX_ROWS`) into ``out_dir``."""
    from biaskit.io import atomic_path, write_text_atomic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv = out / f"{name}.csv"
    from biaskit.spreadsheet import neutralize_frame

    with atomic_path(csv) as tmp:  # opened in spreadsheets: text cells that would be formulas get a leading ' (OWASP)
        neutralize_frame(df).to_csv(tmp, index=False)
    md = write_text_atomic(out / f"{name}.md", markdown_table(df, max_rows=MD_MAX_ROWS) + "\n")
    return {"csv": csv, "md": md}
