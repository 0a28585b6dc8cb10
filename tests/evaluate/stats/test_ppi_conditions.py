"""PPI's interval only where its conditions hold: a rare label or few human labels give nan and the reason, never
the zero-width interval that ppi_py itself returns there; where the conditions hold PPI++ covers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biaskit.evaluate.stats.ppi import PPIShare, ppi_condition_failed, ppi_gap_rows, ppi_mean_batch, ppi_table


def _rare_table(rng, groups=10, rows=300, labelled=20, rate=0.03):
    out = []
    for g in range(groups):
        truth = rng.random(rows) < rate
        pred = np.where(truth, rng.random(rows) < 0.7, rng.random(rows) < 0.01)
        lab = np.zeros(rows, bool)
        lab[rng.choice(rows, labelled, replace=False)] = True
        out += [
            {"group": f"g{g:02d}", "vader_label": "negative" if p else "positive", "human": ("negative" if t else "positive") if k else None}
            for t, p, k in zip(truth, pred, lab)
        ]
    return pd.DataFrame(out)


def test_a_rare_label_with_20_labelled_rows_gets_nan_and_the_reason_never_a_zero_width_interval():
    t = ppi_table(_rare_table(np.random.default_rng(42)), PPIShare(metric_column="vader_label", human_column="human", label="negative", by="group"))
    share = t[t["measure"] == "share_ppi"]
    # before: [0.000, 0.000] with se 0 wherever the 20 labelled rows held no negative (ppi_py gives the same)
    assert not ((share["ci_high"] - share["ci_low"]) == 0).any()
    assert share["estimate"].isna().all() and (share["method"] == "none").all()
    assert share["reason"].str.contains("too few labelled rows for PPI's interval: 20 \\(needs 30\\)").all()
    gaps = ppi_gap_rows(t)
    assert gaps["estimate"].isna().all() and gaps["reason"].str.contains("g00: too few labelled rows").any()
    # the human share keeps its (Wilson) interval: 0 of 20 is [0, 0.161], not a point
    human = t[(t["measure"] == "share_human") & (t["estimate"] == 0)]
    assert len(human) and (human["ci_high"] > 0.16).all()


def test_the_conditions_name_what_fails():
    assert "20 (needs 30)" in ppi_condition_failed(np.zeros(20), 0.2)
    # 100 labelled rows at a metric share of 0.05: about 5 expected with the label, under 10
    assert "about 5.0 expected" in ppi_condition_failed(np.r_[np.ones(5), np.zeros(95)], 0.05)
    assert "1 and 99" in ppi_condition_failed(np.r_[np.ones(1), np.zeros(99)], 0.2)
    assert ppi_condition_failed(np.r_[np.ones(20), np.zeros(80)], 0.2) is None


def test_ppi_covers_at_least_90_percent_wherever_its_conditions_hold():
    rng = np.random.default_rng(7)
    sims, big_n = 1500, 1000
    cells = []
    for rate in (0.01, 0.03, 0.1, 0.3, 0.5):
        for n in (20, 50, 100, 200, 500):

            def draw(k):  # truth ~ Bernoulli(rate); the metric finds 70% of the label, false alarms 5%
                y = (rng.random((sims, k)) < rate).astype(float)
                return y, np.where(rng.random((sims, k)) < np.where(y == 1, 0.3, 0.05), 1 - y, y)

            y, yh = draw(n)
            yu = draw(big_n)[1]
            r = ppi_mean_batch(y, yh, yu)
            share = np.concatenate([yh, yu], axis=1).mean(axis=1)
            ok = np.array([ppi_condition_failed(y[i], share[i]) is None for i in range(sims)]) & (r["se"] > 0)
            cover = (r["ci_low"] <= rate) & (rate <= r["ci_high"])
            if ok.sum() >= 100:
                cells.append((rate, n, float(cover[ok].mean())))
    print(cells)
    assert len(cells) >= 12 and min(c for _, _, c in cells) >= 0.90
