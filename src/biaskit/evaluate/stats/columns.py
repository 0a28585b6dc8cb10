"""The one column vocabulary of biaskit's statistics tables, defined once.

Every table of the inference layer names the same quantity the same way: ``stats ztest``, ``stats family``,
``stats aggregate``, ``stats ppi``, the report's test tables, ``headline.csv`` and the tables of
``annotate validate`` (with ``--by``). docs/schemas.md ("Statistics tables: one column vocabulary") describes each
name; :data:`RETIRED` maps the names used before to the one that replaced them (the vocabulary test refuses them).

The agreement/validation stage schema (:data:`biaskit.schema.AGREEMENT`) sits below this package and spells the
same names as literals; ``tests/evaluate/stats/test_column_vocabulary.py`` checks that they agree.
"""

from __future__ import annotations

from dataclasses import dataclass

#: the groups of a per-group row, and the two of a pairwise row
GROUP = "group"
GROUP_A = "group_a"
GROUP_B = "group_b"
#: share (or mean, or rate) of ``group_a`` minus that of ``group_b``
DIFF = "diff"
#: the figure of a per-group (or one-figure) row
ESTIMATE = "estimate"
#: its interval, and the method that made the interval (or the test)
CI_LOW = "ci_low"
CI_HIGH = "ci_high"
METHOD = "method"
#: an estimate and its interval, in the order every table gives them
INTERVAL = (ESTIMATE, CI_LOW, CI_HIGH)
#: why a figure is null (a failed condition of the method); a coded row-level failure stays in ``error``
REASON = "reason"
#: the test's p before any correction, and after Holm / Benjamini-Hochberg within its family
P_VALUE = "p_value"
P_HOLM = "p_holm"
P_BH = "p_bh"
SIGNIFICANT_HOLM = "significant_holm"
SIGNIFICANT_BH = "significant_bh"
#: the family a corrected p is corrected in (its name) and its tests with a p
FAMILY = "family"
FAMILY_SIZE = "family_size"
#: the clusters used and the column they come from
N_CLUSTERS = "n_clusters"
CLUSTER = "cluster"
#: the label whose share a row of ``stats aggregate`` gives (``mean`` for a mean row)
LABEL = "label"


@dataclass(frozen=True)
class HolisticColumns:
    """The columns that place a HolisticBias row: its ``axis``, its ``descriptor`` and its ``template`` (the
    analyses by descriptor and template read them: generation bias, Likelihood Bias, the paired analysis)."""

    axis: str = "axis"
    descriptor: str = "descriptor"
    template: str = "template"


@dataclass(frozen=True)
class GroupPair:
    """Two groups compared, ``a`` minus ``b``: two values of the grouping column ``by`` (a result names them in
    ``group_a`` and ``group_b``)."""

    a: str
    b: str
    by: str = GROUP


#: the corrected p column of each correction (``none`` writes none)
P_CORRECTED = {"holm": P_HOLM, "bh": P_BH, "fdr_bh": P_BH, "benjamini-hochberg": P_BH}
SIGNIFICANT = {"holm": SIGNIFICANT_HOLM, "bh": SIGNIFICANT_BH, "fdr_bh": SIGNIFICANT_BH, "benjamini-hochberg": SIGNIFICANT_BH}


def corrected_p(correction: str) -> str | None:
    """The column a p corrected by ``correction`` is written in (``p_holm``, ``p_bh``); None for ``none``."""
    return P_CORRECTED.get(str(correction).lower())


#: names retired from the statistics tables -> the name that replaced them
RETIRED: dict[str, str] = {
    "diff_a_minus_b": DIFF,
    "value": ESTIMATE,
    "ci_method": METHOD,
    "p_value_raw": P_VALUE,
    "p_corrected": P_HOLM,
    "p_adjusted": P_HOLM,
    "holm_over": FAMILY_SIZE,
}


def upgrade_agreement_table(df):
    """An agreement / validation table (pandas) written before this vocabulary, under its names: ``value`` ->
    ``estimate``, ``ci_method`` -> ``method``, ``error`` -> ``reason``; a pairwise row's ``group`` -> ``group_a``,
    and where ``p_value_raw`` exists, a pairwise row's Holm p (then in ``p_value``) -> ``p_holm`` and its raw p ->
    ``p_value``. Any other table (or one already in the vocabulary) is returned as it is. The report reads every
    table through it, so a run folder validated before the rename still gets its agreement and fairness sections."""
    cols = set(df.columns)
    if not {"round", "measure", "value"} <= cols or ESTIMATE in cols:
        return df
    out = df.rename(columns={"value": ESTIMATE, "ci_method": METHOD, "error": REASON})
    pair = out[GROUP_B].notna() if GROUP_B in cols else None
    if "p_value_raw" in cols:
        out[P_HOLM] = out[P_VALUE].where(pair, None) if pair is not None else None
        if pair is not None:
            out[P_VALUE] = out[P_VALUE].where(~pair, out["p_value_raw"])
        out = out.drop(columns=["p_value_raw"])
    if pair is not None and GROUP_A not in cols:
        out.insert(list(out.columns).index(GROUP_B), GROUP_A, out[GROUP].where(pair, None))
        out[GROUP] = out[GROUP].where(~pair, None)
    return out
