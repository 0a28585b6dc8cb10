"""Result tables as Markdown, CSV and HTML (no tabulate dependency)."""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

from biaskit.io import write_text_atomic
from biaskit.output import clean, write_frame_csv
from biaskit.spreadsheet import neutralize_frame


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


def _breakable(text: str) -> str:
    """Escaped ``text`` with a line-break opportunity (``<wbr>``) after each ``_``, ``/`` and ``-``: a narrow
    column wraps "unigram_male" as "unigram_ / male", never inside a word (no ``overflow-wrap:anywhere``).

    Redacted first (:func:`biaskit.output.clean`), formatted after: a ``<wbr>`` inside a secret (``hf_<wbr>...``)
    would hide it from the redaction that the page gets when it is written."""
    return re.sub(r"([_/-])(?=[^\s])", r"\1<wbr>", html.escape(clean(text)))


def html_table(df, *, max_rows: int | None = 60, floatfmt: str = ".3f") -> str:
    cols = [str(c) for c in df.columns]
    shown = df if max_rows is None else df.head(max_rows)
    head = "".join(f"<th>{_breakable(c)}</th>" for c in cols)
    body = []
    for row in shown.itertuples(index=False):
        cells = []
        for v in row:
            s = fmt_value(v, floatfmt)
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            cells.append(f"<td class='num'>{html.escape(clean(s))}</td>" if num else f"<td>{_breakable(s)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    note = ""
    if max_rows is not None and len(df) > max_rows:
        note = f"<p class='note'>{len(df) - max_rows} more rows in the CSV file.</p>"
    return f"<div class='tw'><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>{note}"


#: columns a statistics table shows on the report page at most (the CSV always has every column)
MAX_SHOWN_COLUMNS = 10
#: columns left off the page (they stay in the CSV): test statistics and counts a reader rarely needs
HIDDEN_COLUMNS = ("z", "u", "count_a", "count_b", "significant_holm", "mean", "dof", "family", "family_size", "p_floor")
#: columns left off the page when every value is 0 (nothing to see)
HIDDEN_IF_ZERO = ("n_null", "n_error", "n_null_a", "n_null_b", "n_untestable")
#: when a table is still wider than MAX_SHOWN_COLUMNS, these go first (in this order, pairs together); the
#: multiple-comparison-corrected p-values, differences and effect sizes stay
DROP_ORDER = (
    ("n_null_a", "n_null_b"),
    ("n_null", "n_error"),
    ("p_value",),
    ("test",),  # which test the row's p comes from (pooled-z / fisher-exact / cr1-wald): in the CSV; the caution says n < 30
    ("p_a", "p_b"),
    ("median_a", "median_b"),
    ("n",),
    ("n_rows", "n_templates"),
)


def compact(df, show=None, max_cols: int = MAX_SHOWN_COLUMNS):
    """The columns of a result table a reader needs on the page: ``show`` when given, else the table with
    ``prop_<x>`` / ``ci_low_<x>`` / ``ci_high_<x>`` merged into one ``<x> [95% CI]`` column, ``count_<x>`` and the
    :data:`HIDDEN_COLUMNS` dropped, :data:`HIDDEN_IF_ZERO` columns dropped when all zero, then the
    :data:`DROP_ORDER` columns while wider than ``max_cols``, and at most ``max_cols`` columns. Returns ``(shown DataFrame, number of columns of ``df`` not shown as such)``."""
    if show is not None:
        cols = [c for c in show if c in df.columns]
        return df[cols], len(df.columns) - len(cols)
    out = df.copy()
    for c in [c for c in df.columns if str(c).startswith("prop_")]:
        lab = str(c)[len("prop_") :]
        lo, hi = f"ci_low_{lab}", f"ci_high_{lab}"
        if lo in out.columns and hi in out.columns:
            out[c] = [_with_ci(v, a, b) for v, a, b in zip(out[c], out[lo], out[hi])]
            out = out.drop(columns=[lo, hi])
        new = lab + (" [CI]" if lo in df.columns else "")
        if new in out.columns:  # a count column of that name is already there (male, female, prop_male, ...): say "share"
            new = f"share {lab}" + (" [CI]" if lo in df.columns else "")
        out = out.drop(columns=[x for x in (f"count_{lab}",) if x in out.columns]).rename(columns={c: new})
    out = out.drop(columns=[c for c in HIDDEN_COLUMNS if c in out.columns])
    for c in HIDDEN_IF_ZERO:
        if c in out.columns and (out[c].fillna(0) == 0).all():
            out = out.drop(columns=[c])
    if "caution" in out.columns and (out["caution"].fillna("") == "").all():
        out = out.drop(columns=["caution"])  # no small group: nothing to say
    for group in DROP_ORDER:  # too wide: leave out the least needed columns first
        if len(out.columns) <= max_cols:
            break
        out = out.drop(columns=[c for c in group if c in out.columns])
    out = out.iloc[:, :max_cols]
    merged = sum(2 for c in df.columns if str(c).startswith("ci_low_") and f"prop_{str(c)[7:]}" in df.columns)
    return out, len(df.columns) - len(out.columns) - merged


def _with_ci(v, lo, hi) -> str:
    if v is None or v != v:
        return "n/a"
    if lo is None or hi is None or lo != lo or hi != hi:
        return f"{float(v):.2f}"
    return f"{float(v):.2f} [{float(lo):.2f}, {float(hi):.2f}]"


#: rows written to a table's .md file (the .csv always has every row)
MD_MAX_ROWS = 2000


def write_table_files(df, out_dir: str | Path, name: str) -> dict[str, Path]:
    """Write ``<name>.csv`` (all rows, full precision) and ``<name>.md`` (first :data:`MD_MAX_ROWS`) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv = out / f"{name}.csv"

    write_frame_csv(csv, neutralize_frame(df))  # opened in spreadsheets: text cells that would be formulas get a leading ' (OWASP)
    md = write_text_atomic(out / f"{name}.md", markdown_table(df, max_rows=MD_MAX_ROWS) + "\n")
    return {"csv": csv, "md": md}
