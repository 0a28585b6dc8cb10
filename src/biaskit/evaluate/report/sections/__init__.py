"""The report's sections, one module each. Importing this package registers them on
:data:`biaskit.evaluate.report.model.SECTIONS`; the import order below is the page order.

A new section: a module here that builds a :class:`~biaskit.evaluate.report.model.Section` and calls
``register_section(label, fn)``, and one import line below (see docs/architecture.md).
"""

from __future__ import annotations

from biaskit.evaluate.report.sections import (
    agreement,  # noqa: F401
    fairness,  # noqa: F401
    genbias,  # noqa: F401
    gender,  # noqa: F401
    honest,  # noqa: F401
    labels,  # noqa: F401  Sentiment, Toxicity, Regard
    likelihood,  # noqa: F401
    norms,  # noqa: F401
    validity,  # noqa: F401
)
