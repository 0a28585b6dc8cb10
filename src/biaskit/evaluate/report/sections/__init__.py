"""The report's sections, one module each. Importing this package registers them on
:data:`biaskit.evaluate.report.model.SECTIONS`; the import order below is the page order.

A new section: a module here that builds a :class:`~biaskit.evaluate.report.model.Section` and calls
``register_section(label, fn)``, and one import line below (see docs/architecture.md).
"""

from __future__ import annotations

# isort: off
# the order of these imports is the order of the sections on the page (ruff's isort must not sort them)
from biaskit.evaluate.report.sections import labels  # noqa: F401  Sentiment, Toxicity, Regard
from biaskit.evaluate.report.sections import gender  # noqa: F401
from biaskit.evaluate.report.sections import norms  # noqa: F401
from biaskit.evaluate.report.sections import likelihood  # noqa: F401
from biaskit.evaluate.report.sections import genbias  # noqa: F401
from biaskit.evaluate.report.sections import counterfactual  # noqa: F401  Counterfactual pairs
from biaskit.evaluate.report.sections import honest  # noqa: F401
from biaskit.evaluate.report.sections import validity  # noqa: F401
from biaskit.evaluate.report.sections import bbq  # noqa: F401  BBQ accuracy and bias score
from biaskit.evaluate.report.sections import agreement  # noqa: F401
from biaskit.evaluate.report.sections import judge  # noqa: F401  Can this judge be trusted?
from biaskit.evaluate.report.sections import fairness  # noqa: F401
from biaskit.evaluate.report.sections import formats  # noqa: F401  prompt format (raw vs chat)
from biaskit.evaluate.report.sections import ppi  # noqa: F401  The metric corrected by human labels

# isort: on
