"""Which comparisons of a family can be tested at all, and the test tiny groups get: what the headline's verdicts
need from the inference layer beyond its intervals and corrections.

* :func:`untestable_reason`: the true reason a pair of groups cannot be compared ("all texts of islam from one page",
  "no variation: no text of either group labelled positive", "atheism has 1 text"), or "" when it can. A group whose
  texts all come from one page (one cluster) cannot be told apart from that page: its difference to another group is
  the page's as much as the group's, and a cluster-robust test has no variance to estimate from one cluster.
* :func:`exact_for_small_groups`: a pair whose texts are treated as independent (no cluster column) and where a group
  has fewer than :data:`MIN_EXACT_N` texts gets the two-sided Fisher exact p (``scipy.stats.fisher_exact``) instead of
  the pooled z-test's normal approximation; ``test`` names the test each row's p comes from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: a group under this many texts gets an exact test (the report's small-group caution, ``families.MIN_GROUP_N``)
MIN_EXACT_N = 30
#: the ``test`` column's names
FISHER, POOLED_Z = "fisher-exact", "pooled-z"


def pages_per_group(df, keys: Sequence[str], cluster: str) -> dict[tuple, tuple[int, Any]]:
    """(number of distinct ``cluster`` values, one of them) per value of ``keys`` over the rows with a cluster value."""
    sub = df[df[cluster].notna()]
    out: dict[tuple, tuple[int, Any]] = {}
    for key, g in sub.groupby(list(keys), sort=False, dropna=False):
        vals = g[cluster].unique()
        out[key if isinstance(key, tuple) else (key,)] = (len(vals), vals[0])
    return out


def untestable_reason(a: str, b: str, counts: tuple[int, int, int, int], label: str, pages: Sequence[tuple[str, tuple[int, Any] | None]] = ()) -> str:
    """Why groups ``a`` and ``b`` (``counts`` = count_a, n_a, count_b, n_b of ``label``) cannot be compared, or "".

    ``pages``: (name, (number of pages, a page)) of each group whose pages are known (:func:`pages_per_group`); a group
    with one page is untestable. Order of the reasons: a group too small, one page, no variation."""
    ca, na, cb, nb = (int(x) for x in counts)
    small = [f"{g} has {n} text{'' if n == 1 else 's'}" for g, n in ((a, na), (b, nb)) if n < 2]
    if small:
        return "; ".join(small)
    one = [f"all texts of {g} from one page ({p[1]})" for g, p in pages if p is not None and p[0] == 1]
    if one:
        return "; ".join(dict.fromkeys(one))
    if ca + cb == 0:
        return f"no variation: no text of {a} or {b} labelled {label}"
    if ca == na and cb == nb:
        return f"no variation: every text of {a} and {b} labelled {label}"
    return ""


def fisher_p(count_a: int, n_a: int, count_b: int, n_b: int) -> float:
    """Two-sided Fisher exact p of the 2x2 table (label / not label) x (a / b): ``scipy.stats.fisher_exact``."""
    from scipy.stats import fisher_exact

    return float(fisher_exact([[count_a, n_a - count_a], [count_b, n_b - count_b]], alternative="two-sided").pvalue)


def exact_for_small_groups(tests, min_n: int = MIN_EXACT_N):
    """A pairwise share-test table with ``p_value`` the Fisher exact p where no cluster column is used and a group
    has fewer than ``min_n`` texts, and ``test`` naming each row's test (``fisher-exact``, ``pooled-z`` or the
    clustered ``method``). Rows that already name an exact test keep theirs. The family correction runs after."""
    need = {"count_a", "n_a", "count_b", "n_b", "p_value"}
    if not len(tests) or not need <= set(tests.columns):
        return tests
    out = tests.copy()
    method = out["method"].astype(str) if "method" in out.columns else None
    names = []
    for i, (idx, r) in enumerate(out.iterrows()):
        m = method.iloc[i] if method is not None else "newcombe"
        if m not in ("newcombe", "nan", "None"):
            names.append(m)  # a clustered test (cr1-wald, ...) or one that is exact already: its own p
        elif r["n_a"] and r["n_b"] and min(r["n_a"], r["n_b"]) < min_n and r["p_value"] == r["p_value"]:
            out.at[idx, "p_value"] = fisher_p(r["count_a"], r["n_a"], r["count_b"], r["n_b"])
            names.append(FISHER)
        else:
            names.append(POOLED_Z)
    at = list(out.columns).index("p_value") + 1
    if "test" in out.columns:
        out["test"] = names
    else:
        out.insert(at, "test", names)
    return out
