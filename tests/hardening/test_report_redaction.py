"""report.html is redacted first and formatted after: the line-break opportunities (``<wbr>`` after ``_``, ``/``,
``-``) that the page puts in narrow columns never split a secret where the redaction of the written page could no
longer find it."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from biaskit.evaluate.report.tables import html_table

CANARY = "hf_wbrCanaryFAKE0123456789abcdefgh"


def test_an_html_table_cell_holding_a_secret_is_redacted_before_wbr_is_added(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", CANARY)
    out = html_table(pd.DataFrame({"group": [f"grp-{CANARY}", "plain_group"], "n": [1, 2]}))
    flat = out.replace("<wbr>", "")
    assert CANARY[:8] not in flat and CANARY[-12:] not in flat
    assert "plain_<wbr>group" in out  # formatting still applies to what is left


def test_report_html_holds_no_part_of_a_secret_in_a_group_name(tmp_path, monkeypatch):
    from biaskit.evaluate.report import build_report

    monkeypatch.setenv("HF_TOKEN", CANARY)
    labels = ["positive", "negative", "neutral"]
    rows = [
        {"prompt_id": f"p{i}", "text": "t", "domain": "d", "group": f"g_{CANARY}" if i % 2 else "plain", "model": "m", "kind": "generate"}
        | {"sample_index": 0, "continuation": "c", "vader_label": labels[i % 3], "vader_compound": 0.1 * (i % 3)}
        for i in range(12)
    ]
    (tmp_path / "run").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "run" / "scores.parquet")
    build_report(tmp_path / "run", tmp_path / "rep", n_boot=5)
    for p in (tmp_path / "rep").rglob("*"):
        if p.is_file():
            data = p.read_bytes().replace(b"<wbr>", b"")
            assert CANARY[:8].encode() not in data and CANARY[-12:].encode() not in data, p
