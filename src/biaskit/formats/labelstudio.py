"""Label Studio JSON exports (``annotate pull``: ``/api/projects/ID/export?exportType=JSON``): a list of tasks, each
with its ``data`` (the sample biaskit pushed) and its ``annotations``, each annotation with its ``result`` items.

:func:`read_export` is the one reader: the body goes through the one JSON reader (:func:`biaskit.jsonread.loads_json`:
depth and size limits, NaN refused) and :func:`check_export`, which checks the structure biaskit reads (the
containers, and the strings it matches on: a result's ``type``, ``from_name`` and its ``value.choices``) against the
declarations below. A value that breaks them is E381 naming the project, the path of the field
(``tasks[3].annotations[0].result[1].value.choices[0]``) and the fix, never an ``AttributeError``. The values of an
annotation (``lead_time``, timestamps, who completed it) are checked record by record afterwards, as for a results
file (:mod:`biaskit.annotate.results`): a bad one rejects that annotation, not the export.
"""

from __future__ import annotations

from typing import Any

from biaskit.errors import BiaskitError
from biaskit.inputs import Field, check_record
from biaskit.jsonread import loads_json

EXPORT_FIX = "export the project again (Label Studio's JSON export); a changed export format is a bug to report"
TASK_FIELDS = {
    "id": Field("int", fix=EXPORT_FIX),
    "data": Field("object", fix=EXPORT_FIX),
    "annotations": Field("list", fix=EXPORT_FIX),
}
ANNOTATION_FIELDS = {
    "id": Field("int", fix=EXPORT_FIX),
    "completed_by": Field("any"),
    "result": Field("list", fix=EXPORT_FIX),
    "lead_time": Field("any"),
    "was_cancelled": Field("bool", fix=EXPORT_FIX),
    "ground_truth": Field("bool", fix=EXPORT_FIX),
}
RESULT_FIELDS = {
    "type": Field("str", fix=EXPORT_FIX),
    "from_name": Field("str", fix=EXPORT_FIX),
    "value": Field("object", fix=EXPORT_FIX),
}
VALUE_FIELDS = {"choices": Field("list", fix=EXPORT_FIX)}


def _choices(value: dict[str, Any], source: str, where: str) -> None:
    rec = check_record(value, VALUE_FIELDS, source=source, where=where, unknown="keep", fix=EXPORT_FIX)
    for i, c in enumerate(rec.get("choices") or []):
        if not isinstance(c, str):
            raise BiaskitError("E381", f"{source}: {where}.choices[{i}] must be a string", value=c, fix=EXPORT_FIX)


def check_export(raw: Any, *, source: str) -> list[dict[str, Any]]:
    """``raw`` (a decoded export) checked against the declarations; returns the tasks as they are."""
    if not isinstance(raw, list):
        raise BiaskitError("E381", f"{source}: the export must be a JSON list of tasks", value=type(raw).__name__, fix=EXPORT_FIX)
    for i, task in enumerate(raw):
        t = check_record(task, TASK_FIELDS, source=source, where=f"tasks[{i}]", unknown="keep", fix=EXPORT_FIX)
        for j, ann in enumerate(t.get("annotations") or []):
            at = f"tasks[{i}].annotations[{j}]"
            a = check_record(ann, ANNOTATION_FIELDS, source=source, where=at, unknown="keep", fix=EXPORT_FIX)
            for k, item in enumerate(a.get("result") or []):
                it = f"{at}.result[{k}]"
                r = check_record(item, RESULT_FIELDS, source=source, where=it, unknown="keep", fix=EXPORT_FIX)
                if r.get("value") is not None:
                    _choices(r["value"], source, f"{it}.value")
    return raw


def read_export(body: bytes | str, *, source: str) -> list[dict[str, Any]]:
    """An export's body (bytes as downloaded) decoded and checked (see the module docs)."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
    except UnicodeDecodeError:
        raise BiaskitError("E381", f"{source}: the export is not UTF-8 text", value=source, fix=EXPORT_FIX) from None
    return check_export(loads_json(text, source=source, fix=EXPORT_FIX), source=source)
