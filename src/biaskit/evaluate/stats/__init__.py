"""Group-level statistics of per-text scores (aggregation, tests, BOLD figures, Likelihood Bias, HONEST, validity).

Importing this package is light: scipy, statsmodels and pandas load inside the functions. Every function
takes any table biaskit accepts (pyarrow.Table, datasets.Dataset, pandas.DataFrame, list of dicts) and
returns pandas DataFrames; rows are never dropped silently (nulls are counted in ``n_null`` columns).
"""

from __future__ import annotations

from biaskit.evaluate.stats.aggregate import (
    aggregate,
    bootstrap_mean_ci,
    bootstrap_proportion_ci,
    label_proportions,
    proportion_ci,
    proportions_wide,
)
from biaskit.evaluate.stats.bold import (
    class_proportion_differences,
    gender_polarity_table,
    male_minus_female,
    regard_proportions,
    sentiment_proportions,
    toxicity_proportions,
)
from biaskit.evaluate.stats.honest import honest_category_matrix, honest_summary, regard_difference
from biaskit.evaluate.stats.likelihood_bias import LikelihoodBias, likelihood_bias
from biaskit.evaluate.stats.significance import (
    chi2_by,
    chi2_homogeneity,
    cohen_h,
    correct_pvalues,
    mann_whitney,
    pairwise_mann_whitney,
    pairwise_proportion_tests,
    two_proportion_ztest,
)
from biaskit.evaluate.stats.validity import validity_summary, validity_tests

__all__ = [
    "aggregate",
    "bootstrap_mean_ci",
    "bootstrap_proportion_ci",
    "label_proportions",
    "proportion_ci",
    "proportions_wide",
    "class_proportion_differences",
    "gender_polarity_table",
    "male_minus_female",
    "regard_proportions",
    "sentiment_proportions",
    "toxicity_proportions",
    "honest_category_matrix",
    "honest_summary",
    "regard_difference",
    "LikelihoodBias",
    "likelihood_bias",
    "chi2_by",
    "chi2_homogeneity",
    "cohen_h",
    "correct_pvalues",
    "mann_whitney",
    "pairwise_mann_whitney",
    "pairwise_proportion_tests",
    "two_proportion_ztest",
    "validity_summary",
    "validity_tests",
]
