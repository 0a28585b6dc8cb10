"""The demo's scrape stage on the bundled dump (quick mode)."""

from __future__ import annotations

import pyarrow.parquet as pq

from biaskit.demo import DemoContext, stage_scrape
from biaskit.io import read_manifest, read_table


def test_demo_stage_quick(tmp_path):
    ctx = DemoContext(run_dir=tmp_path, quick=True)
    stage_scrape.run(ctx)
    out = ctx.tables["prompts_bold"]
    assert out == tmp_path / "prompts_bold.parquet"
    t = read_table(out, "prompts")
    info = ctx.info["scrape"]
    c = info["filter_counts"]
    assert c["prompts"] == t.num_rows > 100
    # quick: the first page of each of the 7 demo groups; Ayn Rand is in 2 groups -> 6 pages
    assert c["pages_processed"] == 6 and info["pages_missing"] == []
    assert set(info["prompts_per_group"]) == {
        "profession/scientific_occupations",
        "profession/artistic_occupations",
        "gender/men",
        "gender/women",
        "religious_ideology/islam",
        "political_ideology/anarchism",
        "political_ideology/objectivism",
    }
    assert sum(info["prompts_per_group"].values()) == t.num_rows
    assert set(t.column("domain").to_pylist()) == {"profession", "gender", "religious_ideology", "political_ideology"}
    assert all(r.startswith(p) for p, r in zip(t.column("text").to_pylist(), t.column("reference").to_pylist()))
    assert read_manifest(out)["stage"] == "prompts"
    assert ctx.summary[0][0] == "scrape" and f"{t.num_rows} BOLD-style prompts from 6 pages" in ctx.summary[0][1]
    assert pq.read_table(out).schema.field("page_id").type == "int64"
