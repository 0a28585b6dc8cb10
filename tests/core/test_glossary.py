"""docs/glossary.md: one name for each column and term. Its stage-table columns are in docs/schemas.md under the
tables it names, its other columns are ones the code writes, every column a doc names is in one of the two, and the
CLI's column options default to columns it knows."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from biaskit.cli import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
_ROW = re.compile(r"^\| `(\w+)` \| ([^|]+) \|", re.M)
#: how a doc names a column: "the `x` column", "column `x`", "columns `a`, `b` and `c`"
_NAMED = re.compile(r"`([a-z][a-z0-9_]+)` column|column `([a-z][a-z0-9_]+)`|columns? ((?:`[a-z][a-z0-9_]+`(?:, | and | or |/)?)+)")


def schema_columns() -> dict[str, set[str]]:
    """{stage: its columns} of docs/schemas.md."""
    out: dict[str, set[str]] = {}
    for sec in re.split(r"^## ", (DOCS / "schemas.md").read_text(encoding="utf-8"), flags=re.M)[1:]:
        name = sec.split("\n", 1)[0].strip("` ")
        out[name] = set(re.findall(r"^\| `(\w+)` \|", sec, re.M))
    return out


def glossary_tables() -> tuple[dict[str, list[str]], set[str]]:
    """({stage-table column: the tables the glossary names}, {report and statistics columns})."""
    text = (DOCS / "glossary.md").read_text(encoding="utf-8")
    stage_part = text.split("## Columns of the stage tables", 1)[1].split("## Columns of report", 1)[0]
    other_part = text.split("## Columns of report and statistics tables", 1)[1].split("## Terms", 1)[0]
    stage = {c: [t.strip() for t in tables.split(",")] for c, tables in _ROW.findall(stage_part)}
    return stage, {c for c, _ in _ROW.findall(other_part)}


def test_glossary_stage_columns_are_in_docs_schemas_under_the_tables_it_names():
    schemas = schema_columns()
    stage, _ = glossary_tables()
    assert len(stage) >= 40
    wrong = [(c, t) for c, tables in stage.items() for t in tables if c not in schemas.get(t, set())]
    assert wrong == []


def test_glossary_report_and_statistics_columns_are_written_by_the_code():
    _, other = glossary_tables()
    code = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "src" / "biaskit").rglob("*.py"))
    assert len(other) >= 10
    assert [c for c in other if f'"{c}"' not in code] == []


def _named_columns(text: str) -> set[str]:
    out = set()
    for m in _NAMED.finditer(text):
        one = m.group(1) or m.group(2)
        out |= {one} if one else set(re.findall(r"`([a-z][a-z0-9_]+)`", m.group(3)))
    return out


def test_every_column_a_doc_names_is_in_docs_schemas_or_the_glossary():
    known = set().union(*schema_columns().values()) | set(glossary_tables()[0]) | glossary_tables()[1]
    unknown = {}
    for p in sorted(DOCS.glob("*.md")):
        for c in _named_columns(p.read_text(encoding="utf-8")) - known:
            unknown.setdefault(c, []).append(p.name)
    assert unknown == {}
    # the scan finds what it should: a made-up column in each of the three phrasings
    assert _named_columns("the `foo_bar` column, column `baz` and columns `a_b`, `c_d` and `e_f`") == {"foo_bar", "baz", "a_b", "c_d", "e_f"}


def _column_options(cmd, ctx, path):
    if hasattr(cmd, "list_commands"):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            yield from _column_options(sub, typer.Context(sub, info_name=name, parent=ctx), [*path, name])
        return
    for p in cmd.params:
        if any(o.endswith("-column") or o == "--column" for o in getattr(p, "opts", [])):
            yield " ".join(path), p.opts[0], p.default


def test_cli_column_options_default_to_columns_the_glossary_or_schemas_know():
    known = set().union(*schema_columns().values()) | set(glossary_tables()[0]) | glossary_tables()[1]
    root = typer.main.get_command(app)
    options = list(_column_options(root, typer.Context(root, info_name="biaskit"), []))
    assert ("score", "--text-column", "continuation") in options
    assert [o for o in options if o[2] is not None and o[2] not in known] == []
