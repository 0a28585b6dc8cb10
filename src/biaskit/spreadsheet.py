"""Cells for spreadsheets: neutralise formula injection (CSV/XLSX meant to be opened in Excel, LibreOffice, Sheets).

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by spreadsheet
programs as a formula (``=HYPERLINK(...)``, ``@SUM(...)``, DDE payloads). Following the OWASP "CSV injection"
advice, such a cell is written with a leading apostrophe (``'=1+1``), which spreadsheets show as text.

Only text cells of files meant for spreadsheets pass through here: crowd-platform task files
(``annotate export``/``sample --tasks-out`` .csv), report tables (``report``'s ``tables/*.csv``) and
translation sheets (``templates export-sheet``, which strips the apostrophe again on ``import-sheet``).
Data tables (Parquet, JSONL, ``--out x.csv`` stage tables that biaskit reads back) keep their values exactly,
and numbers (also negative ones) are never touched.
"""

from __future__ import annotations

from typing import Any

#: first characters that make a spreadsheet cell a formula (OWASP)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralize(value: Any) -> Any:
    """``value`` with a leading ``'`` when it is text starting with a formula character; anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def unneutralize(value: Any) -> Any:
    """Undo :func:`neutralize` (for files biaskit reads back): ``'=x`` -> ``=x``; other values unchanged."""
    if isinstance(value, str) and len(value) > 1 and value[0] == "'" and value[1:].startswith(FORMULA_START):
        return value[1:]
    return value


def neutralize_frame(df):
    """A copy of a pandas DataFrame whose text cells and column names are neutralised (numbers untouched)."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object or str(out[c].dtype) in ("string", "str"):
            out[c] = out[c].map(neutralize)
    out.columns = [neutralize(c) if isinstance(c, str) else c for c in out.columns]
    return out
