"""The worked example of docs/report.md ("Adding a section"): its code block, run as it is, adds a "Text length"
section to the report with the mean characters per group that pandas computes, and lands under Not made when no
table has a ``continuation`` column.

The scores are ``make_scores`` of this folder's conftest (the smallest report fixture: one scores table) with
continuations of known, different lengths per group.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from tests.evaluate.report.conftest import make_scores

from biaskit.evaluate.report import build, model
from biaskit.evaluate.report.build import build_report
from biaskit.io import write_table

DOC = Path(__file__).resolve().parents[3] / "docs" / "report.md"


def doc_example() -> str:
    """The first ```python block under "### Adding a section" of docs/report.md."""
    text = DOC.read_text(encoding="utf-8")
    part = text[text.index("### Adding a section") :]
    part = part[: part.index("\n## ")]
    blocks = re.findall(r"^```python\n(.*?)^```$", part, flags=re.S | re.M)
    assert blocks, "docs/report.md: no python block under 'Adding a section'"
    return blocks[0]


@pytest.fixture
def text_length(monkeypatch):
    """Registers the documented section on an empty registry (the one list the builder iterates), so it is
    gone again after the test and the report builds only it (the shipped sections, ~3 CPU s a report, have their
    own tests); returns the executed module's namespace."""
    sections: list = []
    monkeypatch.setattr(model, "SECTIONS", sections)
    ns: dict = {"__name__": "text_length_example"}
    exec(compile(doc_example(), str(DOC), "exec"), ns)
    assert sections[-1] == ("Text length", ns["text_length_section"])
    return ns


def _scores(drop_continuation: bool = False) -> pa.Table:
    t = make_scores(n_per=10)
    groups = t.column("group").to_pylist()
    # a different length per group and row: "w" repeated (group index + 1) * (row index % 4 + 1) times
    order = {g: i for i, g in enumerate(sorted(set(groups)))}
    texts = ["w" * ((order[g] + 1) * (i % 4 + 1)) for i, g in enumerate(groups)]
    texts[3] = None  # a null text is not counted
    t = t.set_column(t.column_names.index("continuation"), "continuation", pa.array(texts, pa.string()))
    return t.drop(["continuation"]) if drop_continuation else t


def _run(tmp_path: Path, t: pa.Table) -> Path:
    write_table(t, tmp_path / "scores.parquet", stage="scores")
    return tmp_path / "scores.parquet"


def test_the_documented_section_shows_the_mean_length_per_group(tmp_path, text_length):
    t = _scores()
    res = build_report(_run(tmp_path, t), tmp_path / "rep", n_boot=20, keep_figures=True)
    assert "text_length" in res.sections and "Text length" not in dict(res.skipped)
    got = pd.read_csv(res.tables["text_length"])
    # independently: characters of every non-null continuation, averaged per group
    df = t.select(["group", "continuation"]).to_pandas().dropna()
    want = df.assign(chars=[len(s) for s in df["continuation"]]).groupby("group")["chars"].agg(["size", "mean"]).reset_index()
    assert got["group"].tolist() == want["group"].tolist() == sorted(set(t.column("group").to_pylist()))
    assert got["n"].tolist() == want["size"].tolist()
    assert got["mean_chars"].tolist() == pytest.approx(want["mean"].tolist())
    assert sum(got["n"]) == t.num_rows - 1  # the null text is left out
    bars = res.figure_objects["text_length"].axes[0].patches
    assert [p.get_width() for p in bars] == pytest.approx(want["mean"].tolist())
    assert "Text length" in res.md.read_text(encoding="utf-8")
    assert any(f.name == "text_length.png" for f in res.figures)


def test_the_documented_section_is_not_made_without_a_continuation_column(tmp_path, text_length):
    res = build_report(_run(tmp_path, _scores(drop_continuation=True)), tmp_path / "rep", n_boot=20)
    assert "text_length" not in res.sections
    why = dict(res.skipped)["Text length"]
    assert why.startswith("no table has column(s) continuation, group (")
    md = res.md.read_text(encoding="utf-8")
    assert "Text length" in md[md.index("Not made") :]


def test_the_documented_section_is_gone_after_the_test():
    assert "Text length" not in [label for label, _ in model.SECTIONS]
    assert not hasattr(build, "ANALYSES")  # one registry, no second name for it
