"""What every registered metric's label columns mean, read from the metrics themselves.

Each metric class declares its label columns once (:attr:`~biaskit.evaluate.metrics.base.Metric.label_outputs`,
a tuple of :class:`~biaskit.evaluate.metrics.base.LabelOutput`); annotation, statistics, the report and the
plots ask this module instead of keeping their own lists. Importing a metric class is cheap (its heavy
libraries load in ``setup()``), so reading the declarations loads no model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from biaskit.errors import BiaskitError, check_choice
from biaskit.evaluate.metrics.base import LabelOutput
from biaskit.labels import check_values
from biaskit.registry import metrics as reg


def label_outputs() -> dict[str, LabelOutput]:
    """Every registered metric's label outputs by key, in registration order (built-ins, then plugins of the
    ``biaskit.metrics`` entry-point group). Two metrics declaring the same key is error E240; a registered
    metric whose module cannot be imported is error E241 (naming it)."""
    import biaskit.evaluate.metrics.builtin  # noqa: F401  (registers the built-ins and the plugins)

    out: dict[str, LabelOutput] = {}
    for name in reg.in_order():
        try:
            cls = reg.get(name)
        except (ImportError, AttributeError) as exc:
            raise BiaskitError(
                "E241",
                f"the registered metric {name!r} cannot be imported: {exc}",
                value=reg.target(name),
                fix="install what it needs, or uninstall the package that registers it",
            ) from exc
        for lo in getattr(cls, "label_outputs", ()):
            if lo.key in out:
                raise BiaskitError(
                    "E240",
                    f"two metrics declare the label output {lo.key!r}",
                    value=f"{name}: {lo.column}",
                    options=list(out),
                    fix="give the metric's LabelOutput its own key",
                )
            out[lo.key] = lo
    return out


def label_output(key: str) -> LabelOutput:
    """The label output ``key`` (E020-style lookup error naming the declared keys when unknown)."""
    outs = label_outputs()
    check_choice(
        "E241", "no metric declares this label output", key, outs, fix="score with a metric that declares it, or register one (docs/architecture.md)"
    )
    return outs[key]


def labels_of(key: str) -> tuple[str, ...]:
    """The ordered label vocabulary of label output ``key`` (e.g. ``labels_of("vader")``)."""
    return label_output(key).labels


def for_task(task: str) -> LabelOutput | None:
    """The first label output judged in annotation task type ``task`` (None when no metric declares it)."""
    return next((lo for lo in label_outputs().values() if lo.task == task), None)


def label_colours() -> dict[str, str]:
    """Label -> plot colour from every declaration (a label shared by metrics keeps the first colour)."""
    out: dict[str, str] = {}
    for lo in label_outputs().values():
        for lab, colour in lo.colours.items():
            out.setdefault(lab, colour)
    return out


def vocabulary(column: str) -> tuple[str, ...] | None:
    """The labels of the label column ``column`` as its metric declares them (its :class:`LabelOutput`'s
    ``column``, or a ``column_pattern`` it matches); None for a column no registered metric declares."""
    outs = list(label_outputs().values())
    for lo in outs:
        if lo.column == column:
            return lo.labels or None  # (no closed vocabulary declared: the labels come with the data, e.g. a task file)
    for lo in outs:
        if lo.column_pattern and re.fullmatch(lo.column_pattern, column):
            return lo.labels or None
    return None


def check_column(values: Iterable[object], column: str, *, what: str = "the table", fix: str | None = None) -> None:
    """E151 when ``column`` is a metric's label column and holds values outside the metric's labels (the one check:
    :func:`biaskit.labels.check_values`)."""
    labs = vocabulary(column)
    if labs is not None:
        check_values(values, labs, what=what, column=column, code="E151", fix=fix)
