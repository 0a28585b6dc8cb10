"""The human labels of an annotation round joined to the scored table, for prediction-powered inference.

``biaskit stats ppi`` takes the human label of each row either from a column of the scored table, or from a
round: the samples table (``annotate sample``) with its annotations (majority vote, ties and gold items left
out), or the labels table of ``annotate aggregate``. A sample is matched to its scored row by the ids biaskit
writes: ``sample_id`` when the scored table has one, else the output's key ``prompt_id`` (+ ``model``, ``kind``,
``sample_index`` where both tables have them), the same fields ``annotate sample`` derives the sample id from.
Every scored row without a human label is unlabelled.
"""

from __future__ import annotations

from typing import Any

from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError
from biaskit.evaluate.stats._common import to_frame
from biaskit.io import read_table
from biaskit.votes import labels_as_majority, majority_vote

#: the id columns a sample is matched on, in this order (those present in both tables)
KEY_COLUMNS = ("prompt_id", "model", "kind", "sample_index")
#: the column the joined human labels are written to
HUMAN_COLUMN = "human_label"


def human_labels(samples: Any, *, annotations: Any = None, labels: Any = None) -> dict[str, str]:
    """{sample_id: human label} of a round's non-gold items with a label (majority vote of ``annotations`` with
    ties dropped, or the ``labels`` table of ``annotate aggregate``)."""
    if (annotations is None) == (labels is None):
        raise BiaskitError(
            "E346",
            "give exactly one of --annotations and --labels with --samples",
            fix="--annotations ANNOTATIONS (majority vote) or --labels LABELS (annotate aggregate)",
        )
    if labels is not None:
        mv = labels_as_majority(labels)
    else:
        mv = majority_vote(annotations)
    s = to_arrow(samples)
    gold = set()
    if "is_gold" in s.column_names:
        gold = {sid for sid, g in zip(s.column("sample_id").to_pylist(), s.column("is_gold").to_pylist()) if g}
    return {
        sid: lab
        for sid, lab, kept in zip(mv.column("sample_id").to_pylist(), mv.column("label").to_pylist(), mv.column("kept").to_pylist())
        if kept and lab is not None and sid not in gold
    }


def join_round(scored: Any, samples: Any, *, annotations: Any = None, labels: Any = None):
    """The scored table (pandas) with a :data:`HUMAN_COLUMN` column: the round's human label where the row was
    sampled and labelled, null elsewhere. Returns ``(frame, info)``; ``info`` counts matched and unmatched samples.

    E345 when the samples carry none of the id columns, when a key is not unique in the scored table, or when no
    labelled sample matches a scored row."""
    df = to_frame(scored)
    sm = to_frame(samples)
    if "sample_id" not in sm.columns:
        raise BiaskitError(
            "E345", "the samples table has no sample_id column", value=sorted(sm.columns)[:20], fix="pass the samples table of `annotate sample`"
        )
    hum = human_labels(sm, annotations=annotations, labels=labels)
    if HUMAN_COLUMN in df.columns:
        raise BiaskitError(
            "E346", f"the scored table already has a {HUMAN_COLUMN!r} column", value=HUMAN_COLUMN, fix="use --human-column human_label, or rename it"
        )
    keys = ["sample_id"] if "sample_id" in df.columns else [c for c in KEY_COLUMNS if c in df.columns and c in sm.columns]
    if not keys or keys[0] not in ("sample_id", "prompt_id"):
        raise BiaskitError(
            "E345",
            "the scored table and the samples share no id column",
            value={"scored": sorted(df.columns)[:20], "samples": sorted(sm.columns)[:20]},
            fix="score the table biaskit's stages wrote (prompt_id, model, kind, sample_index) and sample from it",
        )
    key_of = lambda r: tuple(None if v != v else v for v in (r[k] for k in keys))  # noqa: E731 (NaN -> None)
    pos: dict[tuple, int] = {}
    for i, r in enumerate(df[keys].to_dict("records")):
        k = key_of(r)
        if k in pos:
            raise BiaskitError(
                "E345",
                f"the id {dict(zip(keys, k))} is not unique in the scored table",
                value=list(keys),
                fix="pass one model's scored outputs (one row per prompt, model, kind and sample)",
            )
        pos[k] = i
    lab: list[Any] = [None] * len(df)
    matched = unmatched = 0
    for r in sm[["sample_id", *[k for k in keys if k != "sample_id"]]].to_dict("records"):
        h = hum.get(r["sample_id"])
        if h is None:
            continue
        at = pos.get(key_of(r))
        if at is None:
            unmatched += 1
            continue
        lab[at] = h
        matched += 1
    if matched == 0:
        raise BiaskitError(
            "E345",
            "no labelled sample of the round matches a row of the scored table",
            value={"labelled_samples": len(hum), "keys": keys},
            fix="pass the scored table the round was sampled from",
        )
    df[HUMAN_COLUMN] = lab
    strat = "stratum" in sm.columns and sm["stratum"].notna().any() and sm["stratum"].nunique() > 1
    return df, {"matched": matched, "unmatched": unmatched, "keys": keys, "stratified": bool(strat)}


def join_round_files(scored: Any, samples: Any, *, annotations: Any = None, labels: Any = None):
    """:func:`join_round` with the round's tables read from their files: ``samples``, and ``annotations`` or
    ``labels`` (None: not given)."""
    return join_round(
        scored,
        read_table(samples, "samples"),
        annotations=read_table(annotations, "annotations") if annotations else None,
        labels=read_table(labels) if labels else None,
    )
