"""Time Likelihood Bias on a HolisticBias-sized synthetic table.

Usage: python bench/report_likelihood_bias.py [n_descriptors_per_axis] [n_templates] [n_nouns]
"""

import sys
import time

import numpy as np
import pandas as pd

from biaskit.evaluate.stats import likelihood_bias


def main(n_desc=40, n_tpl=10, n_nouns=12, n_axes=3):
    rng = np.random.default_rng(0)
    rows = {"axis": [], "template": [], "descriptor": [], "perplexity": []}
    for a in range(n_axes):
        for t in range(n_tpl):
            for d in range(n_desc):
                rows["axis"] += [f"axis{a}"] * n_nouns
                rows["template"] += [f"tpl{t}"] * n_nouns
                rows["descriptor"] += [f"d{d}"] * n_nouns
                rows["perplexity"] += list(np.exp(rng.normal(3 + 0.02 * d, 0.3, n_nouns)))
    df = pd.DataFrame(rows)
    t0 = time.perf_counter()
    res = likelihood_bias(df)
    dt = time.perf_counter() - t0
    n_pairs = len(res.pairs)
    print(f"{len(df)} rows, {n_pairs} pair tests in {dt:.2f}s ({1e6 * dt / max(n_pairs, 1):.0f} us per pair)")
    print(res.by_axis.to_string(index=False))


if __name__ == "__main__":
    main(*[int(x) for x in sys.argv[1:]])
