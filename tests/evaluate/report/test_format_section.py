"""The report's Prompt format section: the share of conclusions that flip between ``raw`` and ``chat``.

A scored table with known label counts: in domain d1 group A's positive share is 80/100 against B's 20/100 in
the raw format and 50/100 against 50/100 in the chat format (a conclusion drawn in raw only: it flips); in
domain d2 it is 90/100 against 10/100 in both formats (the same conclusion). So 1 of 2 conclusions flips.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from statsmodels.stats.proportion import proportions_ztest

from biaskit.evaluate.report.build import build_report


def _rows(fmt: str, domain: str, group: str, n_pos: int, n: int = 100) -> list[dict]:
    return [
        {
            "prompt_id": f"{fmt}-{domain}-{group}-{i}",
            "text": "x",
            "sample_index": 0,
            "model": "m",
            "kind": "generate",
            "prompt_format": fmt,
            "domain": domain,
            "group": group,
            "continuation": "y",
            "vader_label": "positive" if i < n_pos else "neutral",
            "vader_compound": 0.9 if i < n_pos else 0.0,
        }
        for i in range(n)
    ]


def _table() -> pa.Table:
    rows = []
    for fmt, (a1, b1) in (("raw", (80, 20)), ("chat", (50, 50))):
        rows += _rows(fmt, "d1", "A", a1) + _rows(fmt, "d1", "B", b1)
        rows += _rows(fmt, "d2", "A", 90) + _rows(fmt, "d2", "B", 10)
    return pa.Table.from_pylist(rows)


def test_flip_share_and_figure(tmp_path):
    p = tmp_path / "scores.parquet"
    pq.write_table(_table(), p)
    res = build_report(p, tmp_path / "rep", n_boot=50)
    assert "Prompt format" not in dict(res.skipped)
    flips = pd.read_csv(res.tables["formats_flips"])
    row = flips[flips["metric"].str.startswith("Sentiment")].iloc[0]
    assert (row["comparisons"], row["conclusions"], row["flipped"], row["share_flipped"]) == (2, 2, 1, 0.5)
    per = pd.read_csv(res.tables["formats_vader"]).set_index("domain")
    assert (per.loc["d1", "raw"], per.loc["d1", "chat"], bool(per.loc["d1", "flips"])) == ("higher", "none", True)
    assert (per.loc["d2", "raw"], per.loc["d2", "chat"], bool(per.loc["d2", "flips"])) == ("higher", "higher", False)
    # the raw d1 conclusion by an independent test: one pair per family, so Holm leaves p as it is
    _, p_raw = proportions_ztest([80, 20], [100, 100])
    _, p_chat = proportions_ztest([50, 50], [100, 100])
    assert p_raw < 0.05 < p_chat
    assert any(f.name.startswith("formats_vader") for f in res.figures)
    page = res.html.read_text()
    assert "1 of 2 conclusions (50%) flip between formats" in page


def test_one_format_only_is_skipped(tmp_path):
    t = _table()
    t = t.filter(pa.compute.equal(t.column("prompt_format"), "raw"))
    p = tmp_path / "scores.parquet"
    pq.write_table(t, p)
    res = build_report(p, tmp_path / "rep", n_boot=50)
    assert "two prompt formats" in dict(res.skipped)["Prompt format"]
