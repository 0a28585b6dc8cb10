"""The LLM judge (``judge`` metric) as a baseline of ``biaskit train classifier`` (``--baselines ...,judge``).

The judge labels the test texts of each run's split with the data's own label words (default task
``stance:<the labels>``; ``--judge-param task=FILE.yaml`` for a task file with the same labels) and is scored
like the other baselines. A text the judge could not label (its ``judge_error``) counts as wrong, and the
count is reported (``n_errors``): a failure never becomes a right answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import make_metric

if TYPE_CHECKING:
    from biaskit.evaluate.metrics.judge import JudgeMetric


def judge_params(labels: Sequence[str], params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The judge's parameters: the data's labels as a stance task unless a task is given."""
    p = dict(params or {})
    p.setdefault("task", "stance:" + ",".join(labels))
    return p


def judge_predict(texts: Sequence[str], labels: Sequence[str], params: Mapping[str, Any] | None) -> tuple[list[int], int]:
    """(class index per text, -1 for a text the judge could not label; the number of such texts)."""
    m = cast("JudgeMetric", make_metric("judge", "text", judge_params(labels, params)))  # the registry's judge metric
    if set(m.task.labels) != set(labels):
        raise BiaskitError(
            "E324",
            "the judge task's labels are not the classes of the labelled data",
            value=list(m.task.labels),
            options=list(labels),
            fix="leave judge.task out (the data's labels are used) or give a task file with the same labels",
        )
    out = m.score({"text": list(texts)})
    idx = {lab: i for i, lab in enumerate(labels)}
    pred = [idx.get(lab, -1) if lab is not None else -1 for lab in out["judge_label"]]
    return pred, sum(p < 0 for p in pred)
