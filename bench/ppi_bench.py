"""Benchmark: coverage and width of the metric-only, human-only and PPI++ intervals, and of CR1 vs iid intervals.

PPI part. Per scenario, ``--sims`` simulated groups of ``--rows`` texts with a true share p of the label; the metric
finds a positive with probability ``recall`` and raises a false alarm with probability 0.05; ``--labelled`` texts
per group are labelled by humans (a uniform sample). For each interval: coverage of the true p and mean width.
The PPI++ rows use biaskit's :func:`~biaskit.evaluate.stats.ppi.ppi_mean_batch` (equal to ``ppi_py`` 0.2.3; tests).
The gap rows pair a fair group (recall 0.9) with an unfair one (recall ``recall``), same true share, true gap 0.

Cluster part. Pages with their own rate from Beta(2, 6), 40 sentences per page, 60 pages per group, no true gap:
coverage of 0 by the CR1 and the iid 95% intervals of the difference, and the ratio of their half-widths.

Usage: python bench/ppi_bench.py [--sims 2000] [--rows 2000] [--labelled 300] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np

Z = 1.959963984540054


def _group(rng, sims, rows, p, recall):
    truth = rng.random((sims, rows)) < p
    pred = np.where(truth, rng.random((sims, rows)) < recall, rng.random((sims, rows)) < 0.05)
    return truth.astype(float), pred.astype(float)


def _wilson(k, n):
    p = k / n
    den = 1 + Z * Z / n
    c = (p + Z * Z / (2 * n)) / den
    h = Z / den * np.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return c - h, c + h


def ppi_rows(rng, sims, rows, n_lab):
    from biaskit.evaluate.stats.ppi import ppi_mean_batch

    out = []
    for p, recall in ((0.3, 0.9), (0.3, 0.6), (0.2, 0.5), (0.1, 0.8)):
        y, yh = _group(rng, sims, rows, p, recall)
        r = ppi_mean_batch(y[:, :n_lab], yh[:, :n_lab], yh[:, n_lab:])
        hl, hh = _wilson(y[:, :n_lab].sum(axis=1), n_lab)
        ml, mh = _wilson(yh.sum(axis=1), rows)
        for name, lo, hi in (("metric only (Wilson)", ml, mh), ("human only (Wilson)", hl, hh), ("PPI++", r["ci_low"], r["ci_high"])):
            out.append((f"share p={p} recall={recall}", name, float(np.mean((lo <= p) & (p <= hi))), float(np.mean(hi - lo))))
    for recall in (0.9, 0.5):
        ya, pa = _group(rng, sims, rows, 0.3, 0.9)
        yb, pb = _group(rng, sims, rows, 0.3, recall)
        ra = ppi_mean_batch(ya[:, :n_lab], pa[:, :n_lab], pa[:, n_lab:])
        rb = ppi_mean_batch(yb[:, :n_lab], pb[:, :n_lab], pb[:, n_lab:])
        d, half = ra["estimate"] - rb["estimate"], Z * np.hypot(ra["se"], rb["se"])
        md = pa.mean(axis=1) - pb.mean(axis=1)
        mhalf = Z * np.sqrt(pa.mean(1) * (1 - pa.mean(1)) / rows + pb.mean(1) * (1 - pb.mean(1)) / rows)
        hd = ya[:, :n_lab].mean(1) - yb[:, :n_lab].mean(1)
        hy = Z * np.sqrt(ya[:, :n_lab].mean(1) * (1 - ya[:, :n_lab].mean(1)) / n_lab + yb[:, :n_lab].mean(1) * (1 - yb[:, :n_lab].mean(1)) / n_lab)
        for name, est, h in (("metric only (Wald)", md, mhalf), ("human only (Wald)", hd, hy), ("PPI++", d, half)):
            out.append((f"gap, metric recall 0.9 vs {recall}", name, float(np.mean(np.abs(est) <= h)), float(np.mean(2 * h))))
    return out


def cluster_rows(rng, sims):
    from biaskit.evaluate.stats.cluster import cr1_diff_batch

    pages, per = 60, 40
    rates = rng.beta(2, 6, size=(sims, 2 * pages))
    y = (rng.random((sims, 2 * pages, per)) < rates[:, :, None]).astype(float).reshape(sims, -1)
    page = np.repeat(np.arange(2 * pages), per)
    a = page < pages
    r = cr1_diff_batch(y, a, page)
    pa, pb, n = y[:, a].mean(1), y[:, ~a].mean(1), pages * per
    se = np.sqrt(pa * (1 - pa) / n + pb * (1 - pb) / n)
    return float(np.mean((r["ci_low"] <= 0) & (0 <= r["ci_high"]))), float(np.mean(np.abs(pa - pb) <= Z * se)), float(np.mean(r["se"] / se))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--labelled", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"PPI: {args.sims} simulated groups of {args.rows} texts, {args.labelled} labelled; nominal 95%")
    print(f"| {'scenario':<34} | {'interval':<22} | coverage | mean width |")
    print(f"|{'-' * 36}|{'-' * 24}|----------|------------|")
    for sc, name, cov, w in ppi_rows(rng, args.sims, args.rows, args.labelled):
        print(f"| {sc:<34} | {name:<22} | {cov:8.3f} | {w:10.4f} |")
    c, i, ratio = cluster_rows(rng, 1000)
    print("\nClustered texts: Beta(2, 6) page rates, 40 sentences/page, 60 pages/group, no true gap, 1000 sets")
    print(f"  coverage of 0: CR1 {c:.3f}, iid {i:.3f}; CR1 half-width / iid half-width {ratio:.2f}")


if __name__ == "__main__":
    main()
