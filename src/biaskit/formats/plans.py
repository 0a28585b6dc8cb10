"""Round plan files (what ``biaskit annotate plan`` writes and ``annotate sample --plan`` reads): the declared keys
of the plan and of each group entry. The reader is :func:`biaskit.annotate.planning.read_plan` (JSON through the input
layer, NaN refused, then :func:`biaskit.inputs.check_record` with these declarations)."""

from __future__ import annotations

from biaskit.inputs import Field

#: the declared keys of a plan file (what :func:`plan_round` writes): type, and for counts a lower bound of 0
PLAN_FIX = "pass the file `biaskit annotate plan` wrote, or correct the key (docs/annotation.md)"
PLAN_FIELDS = {
    "version": Field("int", minimum=1, fix=PLAN_FIX),
    "method": Field("str", fix=PLAN_FIX),
    "view": Field("str", fix=PLAN_FIX),  # "ppi" for the PPI view (annotate/ppiplan.py)
    "validation": Field("str", fix=PLAN_FIX),  # the validation table the plan was made from (cli annotate plan)
    "scored": Field("str", fix=PLAN_FIX),  # the scored table of the PPI view (cli annotate plan --ppi)
    "metric": Field("str", fix=PLAN_FIX),
    "rate": Field("str", fix=PLAN_FIX),
    "group_by": Field("str", required=True, nullable=False, fix='name the samples column the plan groups by, e.g. "group_by": "group"'),
    "target_half_width": Field("number", minimum=0, fix=PLAN_FIX),
    "z": Field("number", minimum=0, fix=PLAN_FIX),
    "groups": Field("object", required=True, nullable=False, fix='give groups as {"GROUP": {"n_more": 10}, ...}'),
    "total_more": Field("int", minimum=0, fix=PLAN_FIX),
}
_COUNT = "a whole number of items >= 0 (or null: nothing to draw)"
PLAN_GROUP_FIELDS = {
    "n_more": Field("int", minimum=0, fix=f'give n_more as {_COUNT}, e.g. "n_more": 10'),
    "n_now": Field("int", minimum=0, fix=f"give n_now as {_COUNT}"),
    "n_needed": Field("int", minimum=0, fix=f"give n_needed as {_COUNT}"),
    "rate_items_now": Field("int", minimum=0, fix=f"give rate_items_now as {_COUNT}"),
    "rate_items_needed": Field("int", minimum=0, fix=f"give rate_items_needed as {_COUNT}"),
    "rate": Field("number", minimum=0, fix=PLAN_FIX),
    "rate_used": Field("number", minimum=0, fix=PLAN_FIX),
    "share": Field("number", minimum=0, fix=PLAN_FIX),
    "half_width_now": Field("number", minimum=0, fix=PLAN_FIX),
    "half_width_planned": Field("number", minimum=0, fix=PLAN_FIX),
    "error": Field("str", fix=PLAN_FIX),
    "note": Field("str", fix=PLAN_FIX),
    # the PPI view's keys (annotate/ppiplan.py)
    "n_unlabelled": Field("int", minimum=0, fix=f"give n_unlabelled as {_COUNT}"),
    "share_ppi": Field("number", fix=PLAN_FIX),
    "lam_now": Field("number", minimum=0, fix=PLAN_FIX),
    "lam_planned": Field("number", minimum=0, fix=PLAN_FIX),
}
