"""The calibration suite (bench/calibration.py) on a small grid: the layer's own code keeps its false-claim rate
under the null at most 0.07 and covers at least 0.90, or says "not enough data"."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[3] / "bench" / "calibration.py"


def _bench():
    spec = importlib.util.spec_from_file_location("calibration_bench", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_small_calibration_grid_keeps_false_claims_and_coverage_or_says_not_enough_data():
    cal = _bench()
    rng = np.random.default_rng(0)
    cells = [cal.gap_cell(rng, texts, 4, 0.1, 0.5, 200) for texts in (20, 200)]
    print(cells)
    for c in cells:
        assert c["method"] == "cr2-bm-t" and c["false_claims"] <= 0.07 and c["coverage"] >= 0.90
    # one page per group: never a claim, always "not enough data"
    one = cal.gap_cell(rng, 20, 1, 0.1, 0.5, 20)
    assert one["false_claims"] == 0 and one["not_enough_data"] == 1.0 and one["method"] == "none"
    ppi = [cal.ppi_cell(rng, base, n, 200) for base, n in ((0.03, 20), (0.3, 200))]
    print(ppi)
    assert ppi[0]["not_enough_data"] == 1.0  # a 3% label with 20 labelled rows: no interval, where [0, 0] came before
    assert ppi[1]["coverage"] >= 0.90 and ppi[1]["not_enough_data"] == 0.0
