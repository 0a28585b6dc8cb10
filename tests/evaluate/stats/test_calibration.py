"""The calibration suite (bench/calibration.py): the table in docs/statistics.md has the script's format, covers the
whole grid of designs and every row meets the criteria (false claims <= 0.07 and coverage >= 0.90, or "not enough data"
with the reason); and a small grid run through the same code meets them."""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "bench" / "calibration.py"


def _bench():
    spec = importlib.util.spec_from_file_location("calibration_bench", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _value(x: str):
    x = x.strip()
    if x == "n/a":
        return math.nan
    try:
        return float(x)
    except ValueError:
        return x


def _doc_tables(cal, text: str) -> tuple[str, dict[str, list[dict]]]:
    """(the header sentence, {part: rows}) of the calibration block of ``text``, as the script writes it."""
    assert cal.BEGIN in text and cal.END in text
    block = text.split(cal.BEGIN, 1)[1].split(cal.END, 1)[0].strip()
    header, *chunks = re.split(r"\n\n(?=[^|\n][^\n]*:\n\n\|)", block)
    parts: dict[str, list[dict]] = {}
    for chunk in chunks:
        title, table = chunk.split(":\n\n", 1)
        part = next(k for k, v in cal.TITLES.items() if v == title)
        lines = table.strip().splitlines()
        cols = [c.strip() for c in lines[0].strip("|").split("|")]
        assert tuple(cols) == cal.COLUMNS[part], (part, cols)
        assert set(lines[1].replace("|", "").replace(" ", "")) <= {"-", ":"}
        parts[part] = [dict(zip(cols, (_value(x) for x in line.strip().strip("|").split("|")))) for line in lines[2:]]
    return header, parts


def _violations(cal, parts: dict[str, list[dict]]) -> list[str]:
    """Every row that neither meets the criteria nor is "not enough data" with a reason."""
    bad = []
    for part in ("gap", "validity", "ppi"):
        for r in parts.get(part, []):
            fc, cov, ned = r["false_claims"], r["coverage"], r["not_enough_data"]
            if r["status"] == "not enough data":
                if ned != 1.0 or not str(r.get("reasons", "x")).strip() or "no reason given" in str(r.get("reasons", "")):
                    bad.append(f"{part} {r}: 'not enough data' without every set so, or without a reason")
            elif not str(r["status"]).startswith("ok") or fc > cal.MAX_FALSE_CLAIMS or cov < cal.MIN_COVERAGE:
                bad.append(f"{part} {r}")
    for r in parts.get("power", []):
        if not (r["power"] >= 0.70 and r["false_gaps"] <= 0.05):
            bad.append(f"power {r}")
    return bad


def test_docs_calibration_table_has_the_scripts_format_covers_the_grid_and_every_row_meets_the_criteria():
    cal = _bench()
    header, parts = _doc_tables(cal, (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8"))
    m = re.match(r"Written by `python bench/calibration\.py ([^`]*)` on (\d{4}-\d\d-\d\d): (\d+) sets per cell", header)
    assert m and "--quick" not in m.group(1), header
    reps = int(m.group(3))
    assert reps >= 500  # Monte-Carlo sd of a rate near 0.05: sqrt(0.05 * 0.95 / 500) = 0.0097
    assert set(parts) == {"gap", "validity", "ppi", "power"}
    # the whole grid of the script, spanning texts 5-200, pages 2-50, ICC 0-0.3, base rate 0.01-0.5
    got = {(int(r["texts"]), int(r["pages"]), r["icc"], r["base"]) for r in parts["gap"]}
    assert got == set(cal.gap_designs(cal.GAP_GRID))
    assert {5, 200} <= {t for t, _, _, _ in got} and {2, 50} <= {p for _, p, _, _ in got}
    assert {0.0, 0.3} <= {i for _, _, i, _ in got} and {0.01, 0.5} <= {b for _, _, _, b in got}
    assert {int(r["labelled"]) for r in parts["ppi"]} == {10, 50, 500}
    assert {r["validity"] for r in parts["validity"]} == {"good", "bad"}
    for r in parts["gap"] + parts["validity"] + parts["ppi"]:
        # every set of the cell, or the pilot's when all were "not enough data", or a rerun's (bench.recheck) with fresh sets
        rerun = r["reps"] == reps * cal.RECHECK_FACTOR and str(r["status"]).startswith("ok on a rerun")
        assert r["reps"] == reps or rerun or (r["reps"] < reps and r["not_enough_data"] == 1.0), r
    assert _violations(cal, parts) == []


def test_the_doc_check_finds_a_row_over_the_criteria_and_a_not_enough_data_row_without_reason():
    cal = _bench()
    ok = {"false_claims": 0.05, "coverage": 0.95, "not_enough_data": 0.0, "status": "ok", "reasons": ""}
    assert _violations(cal, {"gap": [ok]}) == []
    assert len(_violations(cal, {"gap": [ok | {"false_claims": 0.08}]})) == 1
    assert len(_violations(cal, {"gap": [ok | {"coverage": 0.89}]})) == 1
    assert len(_violations(cal, {"ppi": [ok | {"status": "not enough data", "not_enough_data": 1.0, "reasons": ""}]})) == 1
    assert len(_violations(cal, {"power": [{"power": 0.69, "false_gaps": 0.01}]})) == 1
    # the script's own status: a rate over 0.07 fails, "not enough data" needs every set so and a reason
    cell = {"not_enough_data": 0.0, "reasons": "", "false_claims": 0.072, "coverage": 0.95}
    assert cal.status(cell) == "FAIL"
    assert cal.status(cell | {"false_claims": 0.05}) == "ok"
    assert cal.status(cell | {"not_enough_data": 1.0, "reasons": "no reason given (1.00)"}) == "FAIL (no reason)"
    assert cal.reason_of("not enough data: a vs b: a group's rows lie in fewer than 3 clusters (2 and 2): ...") == (
        "a group's rows lie in fewer than 3 clusters"
    )


def test_small_calibration_grid_through_the_reports_code_meets_the_criteria_or_says_not_enough_data():
    cal = _bench()
    rng = np.random.default_rng(0)
    cells = [
        cal.gap_cell(rng, texts, pages, icc, base, 200)
        for texts, pages, icc, base in ((20, 4, 0.1, 0.5), (200, 50, 0.3, 0.05), (50, 10, 0.0, 0.2), (50, 50, 0.0, 0.05))
    ]
    print(cells)
    # the last: a 5% label on 50 one-text pages per group, where CR1 over-rejected (0.070) and the layer now uses CR2-BM
    for c in cells:
        assert c["status"] == "ok" and c["not_enough_data"] < 0.1 and c["false_claims"] <= 0.07 and c["coverage"] >= 0.90, c
    # two pages per group: never a claim, always "not enough data" with the cluster methods' reason
    two = cal.gap_cell(rng, 20, 2, 0.3, 0.2, 200)
    assert two["status"] == "not enough data" and two["false_claims"] == 0 and two["reps"] == 50
    assert "a group's rows lie in fewer than 3 clusters" in two["reasons"]
    # a metric that failed its validation: no evidence verdict even with a true 30-point gap; valid: found
    bad = cal.gap_cell(rng, 50, 10, 0.1, 0.2, 100, gap=0.3, validity=False)
    good = cal.gap_cell(rng, 50, 10, 0.1, 0.2, 100, gap=0.3, validity=True)
    assert bad["false_claims"] == 0 and good["power"] > 0.5, (bad, good)
    ppi = [cal.ppi_cell(rng, base, n, 200) for base, n in ((0.05, 10), (0.2, 500))]
    print(ppi)
    assert ppi[0]["status"] == "not enough data" and "too few labelled rows" in ppi[0]["reasons"]  # [0, 0] came before
    assert ppi[1]["status"] == "ok" and ppi[1]["not_enough_data"] == 0.0
