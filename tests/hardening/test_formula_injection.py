"""CSV/XLSX files meant for spreadsheets neutralise formula cells (OWASP: prefix ')."""

import csv

import pandas as pd
import pyarrow as pa

from biaskit.spreadsheet import FORMULA_START, neutralize, unneutralize

HOSTILE = ["=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\tx=1", "\r=1", '=HYPERLINK("http://evil","x")']
SAFE = ["An astronomer is", "'quoted", "", "x=1"]


def test_neutralize_rules():
    for v in HOSTILE:
        assert neutralize(v) == "'" + v and unneutralize(neutralize(v)) == v
    for v in SAFE:
        assert neutralize(v) == v
    assert neutralize(-1.5) == -1.5 and neutralize(-3) == -3 and neutralize(None) is None  # numbers stay numbers
    assert set(FORMULA_START) == {"=", "+", "-", "@", "\t", "\r"}


def _samples(texts):
    n = len(texts)
    return pa.table({"sample_id": [f"s-{i}" for i in range(n)], "round": ["r1"] * n, "task_type": ["sentiment"] * n, "text": texts})


def test_task_csv_cells_are_text_not_formulas(tmp_path):
    from biaskit.annotate.files import export_tasks

    texts = HOSTILE + SAFE
    f, _ = export_tasks(_samples(texts), tmp_path / "tasks.csv")
    with open(f, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    got = [r["text"] for r in rows]
    assert got == ["'" + t for t in HOSTILE] + SAFE  # every hostile cell starts with ' (a spreadsheet shows text)
    assert not any(c.startswith(FORMULA_START) for r in rows for c in r.values())
    # JSONL task files are not spreadsheets: the text is kept exactly
    f2, _ = export_tasks(_samples(texts), tmp_path / "tasks.jsonl")
    assert [r["text"] for r in pd.read_json(f2, lines=True).to_dict("records")] == texts


def test_report_csv_neutralises_text_but_keeps_negative_numbers(tmp_path):
    from biaskit.evaluate.report.tables import write_table_files

    df = pd.DataFrame({"group": ["=cmd()", "-x", "plain"], "delta": [-0.25, -1.0, 2.0], "=col": ["a", "b", "c"]})
    paths = write_table_files(df, tmp_path, "t")
    with open(paths["csv"], encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["group", "delta", "'=col"]
    assert [r[0] for r in rows[1:]] == ["'=cmd()", "'-x", "plain"]
    assert [r[1] for r in rows[1:]] == ["-0.25", "-1.0", "2.0"]  # numbers are numbers, not '-0.25
    back = pd.read_csv(paths["csv"])
    assert back["delta"].tolist() == [-0.25, -1.0, 2.0]


def test_translation_sheet_xlsx_holds_text_and_round_trips(tmp_path):
    import openpyxl

    from biaskit.templates.sheet import read_sheet, sheet_columns, write_sheet

    cols = sheet_columns(["cs"])
    row = {c: "" for c in cols}
    row.update({"template_id": "t1", "category": "work", "source": '=HYPERLINK("http://evil","x")', "cs": "@SUM(A1)"})
    for suffix in (".xlsx", ".csv"):
        p = write_sheet([row], ["cs"], tmp_path / f"sheet{suffix}")
        if suffix == ".xlsx":
            ws = openpyxl.load_workbook(p)["templates"]
            cells = {ws.cell(1, j).value: ws.cell(2, j) for j in range(1, ws.max_column + 1)}
            assert cells["source"].data_type == "s" and cells["source"].value.startswith("'=")  # text, not a formula
            assert cells["cs"].data_type == "s" and cells["cs"].value == "'@SUM(A1)"
        else:
            with open(p, encoding="utf-8-sig", newline="") as fh:
                r = next(csv.DictReader(fh))
            assert r["source"].startswith("'=") and r["cs"] == "'@SUM(A1)"
        back = read_sheet(p)[0]  # import-sheet gets the original text back
        assert back["source"] == row["source"] and back["cs"] == "@SUM(A1)"
