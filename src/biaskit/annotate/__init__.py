"""Crowd annotation rounds (Label Studio or files) and metric-vs-human agreement.

Modules: :mod:`~biaskit.annotate.tasks` (task types, label configs, guidelines),
:mod:`~biaskit.annotate.masking` (XYZ masking), :mod:`~biaskit.annotate.sampling` (choosing a round),
:mod:`~biaskit.annotate.labelstudio` (push / pull against a Label Studio server),
:mod:`~biaskit.annotate.files` (task and result files for other platforms),
:mod:`~biaskit.annotate.results` (the shared validation path), :mod:`~biaskit.annotate.agreement`
(Fleiss, Krippendorff, Cohen, majority vote), :mod:`~biaskit.annotate.validation` (metric vs humans) and
:mod:`~biaskit.annotate.ledger` (round history), :mod:`~biaskit.annotate.labelmodels` (crowd-kit label models),
:mod:`~biaskit.annotate.groupvalidity` (is a metric equally valid per group) and
:mod:`~biaskit.annotate.planning` (planning the next round). See docs/annotate.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "TaskType": "tasks",
    "TASK_TYPES": "tasks",
    "get_task_type": "tasks",
    "custom_task_type": "tasks",
    "mask_text": "masking",
    "unmask": "masking",
    "sample_round": "sampling",
    "push": "labelstudio",
    "pull": "labelstudio",
    "LabelStudio": "labelstudio",
    "export_tasks": "files",
    "read_results": "files",
    "validate_records": "results",
    "agreement": "agreement",
    "majority_vote": "agreement",
    "fleiss_kappa": "agreement",
    "krippendorff_alpha": "agreement",
    "cohen_kappa": "agreement",
    "careless_annotators": "agreement",
    "validate_metric": "validation",
    "validate_metrics": "validation",
    "calibrate_thresholds": "validation",
    "spearman": "rankstats",
    "classify": "validation",
    "aggregate": "labelmodels",
    "group_rows": "groupvalidity",
    "plan_round": "planning",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"biaskit.annotate.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'biaskit.annotate' has no attribute {name!r}")
