"""Every output format biaskit writes (Parquet, JSON Lines, CSV, a save_to_disk folder) read back
by every reader biaskit has for its own tables gives the rows that were written, value for value and type for
type: ``read_table`` with and without a stage, the runners' ``prompt_table``, the table
reader of ``hub stage`` (``spec_from_path``), and ``biaskit schema STAGE --check``.

The values are the ones a CSV reader likes to reinterpret: ISO times (``retrieved_at``), texts that look like
numbers or booleans, empty strings next to nulls, quotes, commas, line breaks, a BOM-like character and
right-to-left text."""

from __future__ import annotations

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.io import read_table, write_table
from biaskit.schema import conform, get_stage

TRICKY = ["2026-11-30T05:00:00Z", "10", "", "true", 'a, "quoted"\nline', "\ufeffbom", "\u05e9\u05dc\u05d5\u05dd", "1e5", "NaN", "null"]


def _table(stage: str) -> pa.Table:
    n = len(TRICKY)
    base = {
        "prompt_id": [f"p{i:02d}" for i in range(n)],
        "text": TRICKY,
        "source": ["wiki"] * n,
        "language": ["en"] * n,
        "retrieved_at": ["2026-11-30T05:00:00Z"] * (n - 1) + [None],
        "page_id": list(range(n - 1)) + [None],
        "group": list(reversed(TRICKY)),
    }
    if stage in ("generations", "scores"):
        base.update(
            {
                "sample_index": [0] * n,
                "model": ["m"] * n,
                "kind": ["generate"] * n,
                "continuation": TRICKY[::-1],
                "truncated": [False, True] * (n // 2),
                "error": [None, "2026-11-30"] * (n // 2),
            }
        )
    if stage == "scores":
        base.update({"vader_compound": [0.5, -0.25, 0.0, 1.0, None] * (n // 5), "vader_label": ["positive", "10"] * (n // 2)})
    return conform(pa.table(base), get_stage(stage))


def _same(a: pa.Table, b: pa.Table) -> None:
    assert b.column_names == a.column_names
    for name in a.column_names:
        assert b.schema.field(name).type == a.schema.field(name).type or (
            pa.types.is_integer(a.schema.field(name).type) and pa.types.is_integer(b.schema.field(name).type)
        ), name
        assert b.column(name).to_pylist() == a.column(name).to_pylist(), name


@pytest.mark.parametrize("stage", ["prompts", "generations", "scores"])
@pytest.mark.parametrize("name", ["t.parquet", "t.jsonl", "t.csv", "t_dir"])
def test_every_format_round_trips_through_every_reader(stage, name, tmp_path):
    from biaskit.datasets.stage import spec_from_path
    from biaskit.evaluate.runners.core import prompt_table

    t = _table(stage)
    p = tmp_path / name
    write_table(t, p, stage=stage, manifest={"command": "test", "stage": stage})
    _same(t, read_table(p, stage))
    _same(t, read_table(p))
    pt = prompt_table(p)[0]  # (the runners' input: the prompt columns, earlier outputs dropped)
    assert {"prompt_id", "text", "retrieved_at", "page_id", "group"} <= set(pt.column_names)
    _same(t.select(pt.column_names), pt)
    spec = spec_from_path(p)
    assert spec.stage == stage
    _same(t, spec.table)
    res = CliRunner().invoke(app, ["schema", stage, "--check", str(p)])
    assert res.exit_code == 0, res.output


def test_a_bom_crlf_copy_of_a_csv_output_reads_the_same(tmp_path):
    t = _table("scores")
    p = tmp_path / "t.csv"
    write_table(t, p, stage="scores")
    q = tmp_path / "excel.csv"
    q.write_bytes(b"\xef\xbb\xbf" + p.read_bytes().replace(b"\n", b"\r\n"))  # as a spreadsheet program saves it
    back = read_table(q, "scores")
    for name in t.column_names:  # (CRLF inside a quoted cell stays CRLF: that one value differs by its \r)
        want = [v.replace("\n", "\r\n") if isinstance(v, str) else v for v in t.column(name).to_pylist()]
        assert back.column(name).to_pylist() == want, name
