"""`biaskit templates audit-pairs`: pairs aligned word by word, flagged when they differ in more than one span, in a
span that is not a term of the declared axes, or not at all (Blodgett et al. 2021's critique of CrowS-Pairs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.datasets.load import load_source
from biaskit.errors import BiaskitError
from biaskit.templates.crows import bundled_crows_pairs
from biaskit.templates.pair_audit import audit_pairs, differing_spans

ROOT = Path(__file__).resolve().parents[2]


def _table(pairs: list[tuple[str, str | None, str]]) -> pa.Table:
    """Rows (pair_id, text or None for a missing partner, group); the first row of a pair is 'more'."""
    rows, seen = [], set()
    for pid, text, group in pairs:
        rows.append({"pair_id": pid, "variant": "less" if pid in seen else "more", "text": text, "bias_type": group})
        seen.add(pid)
    return pa.Table.from_pylist(rows)


def _axis_file(tmp_path: Path) -> str:
    f = tmp_path / "class.yaml"
    f.write_text("name: class\ngroups: [low, high]\nentries:\n  - {low: poor, high: rich}\n  - {low: Mexican, high: white}\n", encoding="utf-8")
    return str(f)


def test_differing_spans_are_the_non_equal_blocks_of_a_word_alignment():
    assert differing_spans("The man is a doctor.", "The woman is a doctor.") == [("man", "woman")]
    assert differing_spans("He said he was tired.", "She said she was tired.") == [("He", "She"), ("he", "she")]
    assert differing_spans("The old man sat.", "The man sat.") == [("old", "")]  # words only one side has


def test_each_flag_on_hand_made_pairs_and_the_counts_per_group(tmp_path):
    t = _table(
        [
            ("ok", "The man is a doctor.", "gender"),
            ("ok", "The woman is a doctor.", "gender"),
            ("two", "He said he was tired.", "gender"),  # two spans, both gender terms
            ("two", "She said she was tired.", "gender"),
            ("off", "The man is a doctor.", "gender"),  # man/woman and doctor/nurse: two spans, one off the axis
            ("off", "The woman is a nurse.", "gender"),
            ("same", "They left early.", "gender"),
            ("same", "They left early.", "gender"),
            ("plural", "Mexicans are lazy.", "class"),  # the plural of a term, and "white people", are on the axis
            ("plural", "White people are lazy.", "class"),
            ("notgroup", "The poor are lazy.", "class"),
            ("notgroup", "The smart are lazy.", "class"),  # smart names no group of the axis
            ("lone", "A lone sentence.", "class"),
        ]
    )
    audit, counts = audit_pairs(t, ["gender", f"class={_axis_file(tmp_path)}"])
    rows = {r["pair_id"]: r for r in audit.to_pylist()}
    flags = {p: (r["n_spans"], r["multi_span"], r["off_axis"], r["no_difference"], r["flagged"]) for p, r in rows.items() if r["error"] is None}
    assert flags == {
        "ok": (1, False, False, False, False),
        "two": (2, True, False, False, True),
        "off": (2, True, True, False, True),
        "same": (0, False, False, True, True),
        "plural": (1, False, False, False, False),
        "notgroup": (1, False, True, False, True),
    }
    assert json.loads(rows["off"]["off_axis_terms"]) == ["doctor", "nurse"]
    assert json.loads(rows["notgroup"]["off_axis_terms"]) == ["smart"]
    assert json.loads(rows["two"]["spans"]) == [["He", "She"], ["he", "she"]]
    assert rows["lone"]["error"] == "pair has 1 row(s); the audit compares two" and rows["lone"]["flagged"] is None
    c = counts.set_index("bias_type")
    # gender: 4 pairs, flagged two/off/same (3), multi two/off (2), off-axis 1, no difference 1
    assert c.loc["gender", ["n_pairs", "n_flagged", "n_multi_span", "n_off_axis", "n_no_difference", "n_unpaired"]].tolist() == [4, 3, 2, 1, 1, 0]
    assert c.loc["class", ["n_pairs", "n_flagged", "n_off_axis", "n_unpaired"]].tolist() == [2, 1, 1, 1]
    assert c.loc["all", ["n_pairs", "n_flagged", "n_unpaired"]].tolist() == [6, 4, 1]
    assert c.loc["all", "share_flagged"] == pytest.approx(4 / 6)


def test_a_group_axis_applies_only_to_the_pairs_of_its_group(tmp_path):
    t = _table([("g", "The man is here.", "race"), ("g", "The woman is here.", "race")])
    audit, _ = audit_pairs(t, ["gender=gender"])  # declared for gender pairs only: a race pair's man/woman is off its axes
    assert audit.column("off_axis").to_pylist() == [True]
    audit, _ = audit_pairs(t, ["race=gender"])
    assert audit.column("off_axis").to_pylist() == [False]


def test_adjacent_swapped_words_are_one_span_on_the_axis_and_no_by_gives_only_the_all_row():
    t = _table([("w", "His wife is a nurse.", None), ("w", "Her husband is a nurse.", None)])
    audit, counts = audit_pairs(t, ["gender"], by=None)
    assert json.loads(audit.column("spans")[0].as_py()) == [["His wife", "Her husband"]]
    assert audit.column("off_axis").to_pylist() == [False] and audit.column("flagged").to_pylist() == [False]
    assert counts["group"].tolist() == ["all"] and counts["n_pairs"].tolist() == [1]


def test_no_axis_or_a_missing_by_column_is_a_coded_error():
    t = _table([("g", "The man is here.", "x"), ("g", "The woman is here.", "x")])
    with pytest.raises(BiaskitError) as ei:
        audit_pairs(t, [])
    assert ei.value.code == "E435"
    with pytest.raises(BiaskitError) as ei:
        audit_pairs(t, ["gender"], by="domain")
    assert ei.value.code == "E436"


def _docs_table() -> pd.DataFrame:
    """The CrowS-Pairs audit table of docs/templates.md (between its markers)."""
    text = (ROOT / "docs" / "templates.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- crows-audit -->\n(.*?)<!-- /crows-audit -->", text, re.S).group(1)
    lines = [ln.strip().strip("|").split("|") for ln in block.strip().splitlines() if ln.startswith("|")]
    head = [h.strip() for h in lines[0]]
    return pd.DataFrame([[c.strip() for c in ln] for ln in lines[2:]], columns=head)


def test_cli_audit_of_the_bundled_crows_pairs_gives_the_counts_in_the_docs(tmp_path):
    from biaskit.cli import app

    pairs = tmp_path / "crows.parquet"
    load_source(bundled_crows_pairs()).table.to_pandas().to_parquet(pairs)
    out, summary = tmp_path / "audit.parquet", tmp_path / "audit.csv"
    res = CliRunner().invoke(
        app, ["templates", "audit-pairs", str(pairs), "--axis", "crows-pairs", "--by", "bias_type", "--out", str(out), "--summary", str(summary)]
    )
    assert res.exit_code == 0, res.output
    got = pd.read_csv(summary)
    assert got["n_pairs"].tolist()[-1] == 1508 and got["bias_type"].tolist()[-1] == "all"
    doc = _docs_table()
    cols = ["bias_type", "n_pairs", "n_flagged", "n_multi_span", "n_off_axis", "n_no_difference"]
    assert doc[cols].astype(str).values.tolist() == got[cols].astype(str).values.tolist()
