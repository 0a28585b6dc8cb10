"""`stats ztest` flags small groups with the caution column of the report and `stats family`:
one function, :func:`biaskit.evaluate.stats.families.add_caution`, makes it for all three."""

from __future__ import annotations

import pandas as pd
from typer.testing import CliRunner

from biaskit.cli import app


def _table(tmp_path):
    # group a: 40 texts, b: 29 (one under the report's 30), c: 30 (exactly 30: not small)
    rows = []
    for g, n in (("a", 40), ("b", 29), ("c", 30)):
        rows += [{"group": g, "vader_label": "positive" if i % 3 == 0 else "negative"} for i in range(n)]
    src = tmp_path / "s.csv"
    pd.DataFrame(rows).to_csv(src, index=False)
    return src


def test_ztest_has_the_small_group_caution_next_to_the_groups(tmp_path):
    src, out = _table(tmp_path), tmp_path / "z.csv"
    r = CliRunner().invoke(
        app, ["stats", "ztest", str(src), "--column", "vader_label", "--label", "positive", "--cluster", "none", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    z = pd.read_csv(out, keep_default_na=False)
    cols = list(z.columns)
    assert cols[cols.index("group_b") + 1] == "caution"
    got = {frozenset((row["group_a"], row["group_b"])): (row["n_a"], row["n_b"], row["caution"]) for _, row in z.iterrows()}
    # by hand: min(n_a, n_b) < 30 -> "n < 30"; a-b min 29, a-c min 30, b-c min 29
    assert {k: v[2] for k, v in got.items()} == {frozenset("ab"): "n < 30", frozenset("ac"): "", frozenset("bc"): "n < 30"}
    assert sorted(min(v[0], v[1]) for v in got.values()) == [29, 29, 30]
    r = CliRunner().invoke(app, ["stats", "ztest", str(src), "--cluster", "none"])  # printed as Markdown: the column is there too
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if "group_a" in line)
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells[cells.index("group_b") + 1] == "caution" and r.output.count("n < 30") == 2


def test_add_caution_is_the_one_family_tables_use():
    from biaskit.evaluate.stats.families import add_caution, correct_family

    t = pd.DataFrame(
        {
            "group_a": ["x", "x"],
            "group_b": ["y", "z"],
            "n_a": [30, 31],
            "n_b": [30, 5],
            "p_value": [0.01, 0.2],
            "p_adjusted": [0.02, 0.2],
            "significant": [True, False],
        }
    )
    assert list(add_caution(t.copy())["caution"]) == ["", "n < 30"]
    assert list(correct_family(t.copy(), [])["caution"]) == ["", "n < 30"]
    assert "caution" not in add_caution(t.drop(columns=["n_b"]))  # no group sizes: nothing to flag
