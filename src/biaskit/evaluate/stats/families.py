"""The test families of biaskit, defined once: which tests are corrected together for which kind of claim.

A family is the set of tests whose claims are read together; its p-values are Holm-corrected within it
(family-wise error at alpha), and every output shows the family's name and size next to each corrected p.
The report sections, the headline, ``biaskit stats family`` and ``annotate validate --by`` all take their
families from :data:`FAMILIES`, so the command line and the page show the same family and the same p.

========================  ======================================================================================
kind                      members of one family
========================  ======================================================================================
``group_gap``             every pair of groups of one domain and one text source (a model or the Wikipedia
                          baseline), for one measure (the share of one label of one metric)
``model_vs_wikipedia``    every group x model of one domain, for one measure: each model's share minus the
                          Wikipedia baseline's in each group of the domain
``metric_fairness``       two families per metric against the human labels (:func:`holm_metric_fairness`): the
                          primary one holds the accuracy of every pair of groups, the secondary one every pair x
                          every other rate (miss and false-alarm rate per class); a family per rate would let
                          about one A/A round in four into the headline
``counterfactual``        every variant x signed measure (mean score difference, share difference) of one model's
                          counterfactual pairs (:mod:`biaskit.evaluate.stats.counterfactual`)
========================  ======================================================================================

Every other test a page shows (chi-square tests, Mann-Whitney U of scores, class-share z-tests, Likelihood
Bias pairs) is **exploratory**: corrected within its own table at most, in no headline family, and labelled
so (:data:`EXPLORATORY`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from biaskit.errors import BiaskitError
from biaskit.evaluate.stats._common import to_frame
from biaskit.evaluate.stats.columns import FAMILY_SIZE, P_HOLM
from biaskit.evaluate.stats.significance import correct_pvalues, pairwise_proportion_tests
from biaskit.evaluate.stats.verdicts import exact_for_small_groups


@dataclass(frozen=True)
class FamilyKind:
    """One kind of claim: ``key`` (as in tables), ``title`` (how pages name it), ``members`` (what one family
    holds, in words) and ``by`` (the columns whose values make one family, where a table has them)."""

    key: str
    title: str
    members: str
    by: tuple[str, ...]


FAMILIES: dict[str, FamilyKind] = {
    f.key: f
    for f in (
        FamilyKind("group_gap", "group gap", "every pair of groups of one domain and text source, one measure", ("domain", "model")),
        FamilyKind("model_vs_wikipedia", "model vs Wikipedia", "every group x model of one domain, one measure", ("domain",)),
        FamilyKind(
            "metric_fairness",
            "metric fairness",
            "every pair of groups x accuracy (primary) or x every other rate (secondary) of one metric",
            ("metric", "group_by"),
        ),
        FamilyKind(
            "counterfactual", "counterfactual pairs", "every variant x signed measure (score or share difference) of one model's pairs", ("model",)
        ),
    )
}

#: the label of a test shown outside every headline family
EXPLORATORY = "exploratory (in no headline family)"


def family_kind(kind: str) -> FamilyKind:
    k = kind.replace("-", "_")
    if k not in FAMILIES:
        raise BiaskitError(
            "E333", "unknown test family kind", value=kind, options=[x.replace("_", "-") for x in FAMILIES], fix="name one of the kinds"
        )
    return FAMILIES[k]


def family_name(kind: str, key: dict, measure: str = "") -> str:
    """The name a row shows for its family, e.g. ``model vs Wikipedia: domain=gender; vader_label=positive``."""
    fk = family_kind(kind)
    parts = [f"{c}={key[c]}" for c in fk.by if c in key]
    return f"{fk.title}: " + "; ".join(parts + ([measure] if measure else []))


def holm_within(df, kind: str, *, p_col: str = "p_value", measure: str = "", out_col: str = P_HOLM):
    """``df`` with the Holm-corrected p of each row within its family of ``kind`` (``out_col``), ``family`` (its
    name) and ``family_size`` (its tests with a p; a NaN p stays NaN and is not counted). The family columns
    that ``df`` lacks are left out of the key (the whole table is then one family)."""
    fk = family_kind(kind)
    out = df.copy()
    cols = [c for c in fk.by if c in out.columns]
    out[out_col] = float("nan")
    out["family"] = ""
    out["family_size"] = 0
    groups = out.groupby(cols, sort=False, dropna=False) if cols else [((), out)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        ps = list(g[p_col])
        out.loc[g.index, out_col] = correct_pvalues(ps, "holm")
        out.loc[g.index, "family"] = family_name(kind, dict(zip(cols, key)), measure)
        out.loc[g.index, "family_size"] = sum(1 for v in ps if v == v)
    return out


def holm_list(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm over one family given as a list (None / NaN stay None and are not counted)."""
    adj = correct_pvalues([float("nan") if p is None else p for p in pvalues], "holm")
    return [None if a != a else float(a) for a in adj]


#: the two halves of a metric-fairness family: accuracy is the primary claim, the other rates a second family
PRIMARY, SECONDARY = "primary (accuracy)", "secondary (miss and false-alarm rates)"


def fairness_half(measure: str) -> str:
    """:data:`PRIMARY` for an accuracy test (``accuracy``, ``diff_accuracy``, ``ratio_accuracy``), else :data:`SECONDARY`."""
    return PRIMARY if measure == "accuracy" or str(measure).endswith("_accuracy") else SECONDARY


def holm_metric_fairness(measures: Sequence[str], pvalues: Sequence[float | None], key: dict) -> list[tuple[float | None, str, int]]:
    """Holm within the two metric-fairness families of one metric and grouping column (``key``: ``metric``,
    ``group_by``): the **primary** family holds the accuracy tests of every pair of groups, the **secondary** one
    every pair x every other rate (miss and false-alarm rate per class). One family over all of them (21 pairs x 7
    rates = 147 tests for 7 groups and 3 labels) found a planted 30-point accuracy gap at 40 items per group about
    half the time; the primary family alone finds it most of the time (tests/annotate/test_fairness_report.py).
    Returns, per test, (the corrected p, the family's name, its tests with a p); a None / NaN p stays None and is
    not counted. ``annotate validate --by`` and the report's "Is the metric fair?" section both call it."""
    halves = [fairness_half(m) for m in measures]
    out: list[tuple[float | None, str, int]] = [(None, "", 0)] * len(halves)
    for half in (PRIMARY, SECONDARY):
        idx = [i for i, h in enumerate(halves) if h == half]
        adj = holm_list([pvalues[i] for i in idx])
        name = family_name("metric_fairness", key).replace("metric fairness: ", f"metric fairness, {half}: ", 1)
        size = sum(1 for i in idx if pvalues[i] is not None and pvalues[i] == pvalues[i])
        for i, a in zip(idx, adj):
            out[i] = (a, name, size)
    return out


#: a group under this many texts gets a ``caution`` in test tables (the report's ``MIN_GROUP_N``)
MIN_GROUP_N = 30


def correct_family(tests, fam_cols: Sequence[str], *, kind: str | None = None, measure: str = ""):
    """A pairwise test table (``p_value``, ``p_adjusted``, ``significant``) corrected within families: ``p_holm``
    (Holm over the rows sharing the values of ``fam_cols``), ``p_bh`` (Benjamini-Hochberg, the same families),
    ``family_size`` (the family's tests with a p), ``caution`` (a group under :data:`MIN_GROUP_N` texts) and, with
    ``kind``, ``family`` (the family's name)."""
    holm = tests.rename(columns={"p_adjusted": "p_holm", "significant": "significant_holm"})
    cols = [c for c in fam_cols if c in holm.columns]
    holm["p_bh"] = float("nan")
    holm[FAMILY_SIZE] = 0
    if kind is not None:
        holm["family"] = ""
    fams = list(holm.groupby(cols, sort=False, dropna=False)) if cols else [((), holm)]
    for key, g in fams:
        idx = g.index
        ps = list(holm.loc[idx, "p_value"])
        holm.loc[idx, "p_holm"] = correct_pvalues(ps, "holm")
        holm.loc[idx, "p_bh"] = correct_pvalues(ps, "bh")
        holm.loc[idx, FAMILY_SIZE] = sum(1 for v in ps if v == v)
        if kind is not None:
            key = key if isinstance(key, tuple) else (key,)
            holm.loc[idx, "family"] = family_name(kind, dict(zip(cols, key)), measure)
    if "significant_holm" in holm.columns:
        # a test without a p is not "not significant": None, never False
        holm["significant_holm"] = (holm["p_holm"] < 0.05).astype(object).where(holm["p_holm"].notna(), None)
    return add_caution(holm)


def name_by_correction(tests, correction: str):
    """A pairwise test table's ``p_adjusted`` and ``significant`` named by their correction, as every table of the
    report and ``stats family`` names them (docs/schemas.md, "Statistics tables"): ``p_holm`` and
    ``significant_holm`` for holm, ``p_bh`` and ``significant_bh`` for bh; for none ``p_adjusted`` is dropped (it
    equals ``p_value``) and ``significant`` stays (at the raw p)."""
    suffix = {"holm": "holm", "bh": "bh", "fdr_bh": "bh", "benjamini-hochberg": "bh"}.get(str(correction).lower())
    if suffix is None:
        return tests.drop(columns=[c for c in ("p_adjusted",) if c in tests.columns])
    return tests.rename(columns={"p_adjusted": f"p_{suffix}", "significant": f"significant_{suffix}"})


def add_caution(tests):
    """A pairwise test table with a ``caution`` column next to ``group_b``: ``n < 30`` where either group has fewer
    than :data:`MIN_GROUP_N` texts, else empty (the tables of the report, ``stats family`` and ``stats ztest``).
    A table without ``n_a``/``n_b`` or rows, or that has the column already, is returned as it is."""
    if not len(tests) or not {"n_a", "n_b"} <= set(tests.columns) or "caution" in tests.columns:
        return tests
    small = tests[["n_a", "n_b"]].min(axis=1) < MIN_GROUP_N
    at = list(tests.columns).index("group_b") + 1 if "group_b" in tests.columns else len(tests.columns)
    tests.insert(at, "caution", [f"n < {MIN_GROUP_N}" if x else "" for x in small])
    return tests


def proportion_family_tests(table, kind: str, column: str, label: str, cluster: str | None = "auto"):
    """The z-tests of the share of ``label`` in ``column`` that make the families of ``kind``, corrected within
    them: exactly the tables the report shows and its headline reads (``biaskit stats family`` prints them).

    ``group_gap``: every pair of ``group`` values within each domain and ``model`` (text source);
    ``model_vs_wikipedia``: each model against the ``wikipedia`` rows within each domain and group, corrected over
    every group x model of the domain. Columns: those of :func:`~biaskit.evaluate.stats.significance.pairwise_proportion_tests`
    with ``p_holm``, ``p_bh``, ``family_size`` (the family's tests with a p), ``caution`` and ``family``."""
    fk = family_kind(kind)
    df = to_frame(table)
    measure = f"{column}={label}"
    if fk.key == "group_gap":
        within = [c for c in ("domain", "model") if c in df.columns]
        tests = pairwise_proportion_tests(df, "group", column, label, within=within, correction="holm", cluster=cluster)
        return correct_family(exact_for_small_groups(tests), within, kind=fk.key, measure=measure)
    if fk.key == "model_vs_wikipedia":
        if "model" not in df.columns or not (df["model"] == "wikipedia").any():
            raise BiaskitError(
                "E333",
                "a model-vs-Wikipedia family needs rows with model == 'wikipedia' (the baseline)",
                value=sorted(map(str, set(df["model"].dropna()))) if "model" in df.columns else "no model column",
                fix="score the Wikipedia baseline rows too (biaskit demo writes them), or use --kind group-gap",
            )
        models = sorted({str(m) for m in df["model"].dropna()})
        within = [c for c in ("domain", "group") if c in df.columns]
        tests = pairwise_proportion_tests(
            df, "model", column, label, within=within, pairs=[(m, "wikipedia") for m in models if m != "wikipedia"], correction="holm"
        )
        return correct_family(exact_for_small_groups(tests), [c for c in ("domain",) if c in df.columns], kind=fk.key, measure=measure)
    raise BiaskitError(
        "E333",
        "this family kind is not a family of share tests",
        value=kind,
        options=["group-gap", "model-vs-wikipedia"],
        fix="use group-gap or model-vs-wikipedia",
    )
