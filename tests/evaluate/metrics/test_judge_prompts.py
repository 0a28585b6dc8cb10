"""Judge prompts: the label orders asked (drawn lazily, never all n! of them) and the instruction's placeholders
filled in one pass (a label or a text holding ``{text}`` is never read again)."""

from __future__ import annotations

import tracemalloc

import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics.judge_tasks import load_task, orders


def _peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_label_orders_of_a_many_label_task_are_drawn_without_building_every_permutation():
    # 9 labels have 362,880 orders (tens of MB as tuples); 12 labels 479,001,600 (MemoryError when listed)
    for n in (9, 12):
        labels = tuple(f"l{i}" for i in range(n))
        assert _peak_bytes(lambda: orders(labels, 1)) < 200_000
        assert _peak_bytes(lambda: orders(labels, n + 3)) < 200_000
    labels = tuple("abcdefghijkl")
    got = orders(labels, 15)
    # own order, its reverse, the 11 other cyclic shifts, then the first permutations (lexicographic in
    # positions) that are not among those: (0..9, 11, 10) and (0..8, 10, 9, 11)
    assert got[0] == labels and got[1] == labels[::-1]
    assert got[2:13] == [labels[i:] + labels[:i] for i in range(1, 12)]
    assert got[13] == tuple("abcdefghijlk") and got[14] == tuple("abcdefghikjl")
    assert len(set(got)) == 15


def test_orders_beyond_the_number_of_permutations_are_refused_with_the_count():
    with pytest.raises(BiaskitError) as e:
        orders(("a", "b", "c"), 7)
    assert e.value.code == "E321" and "between 1 and 6" in str(e.value)


def test_a_label_holding_the_text_placeholder_is_not_replaced_by_the_text():
    task = load_task("stance:{text},no")
    msg = task.messages("THE ROW", ("{text}", "no"))[-1]["content"]
    assert "{text}, no" in msg  # the label list as written
    assert msg.count("THE ROW") == 1  # the row's text only where the instruction's {text} is
    # and a text holding a placeholder stays as it is
    msg = load_task("sentiment").messages("say {labels} or {text}", ("positive", "neutral", "negative"))[-1]["content"]
    assert "say {labels} or {text}" in msg and msg.count("positive, neutral, negative") == 1


def test_a_twelve_label_judge_task_is_configured_in_bounded_memory():
    from biaskit.evaluate.metrics import make_metric

    make_metric("judge", "continuation", {"task": "stance:a,b"})  # imports and registrations outside the measure
    task = "stance:" + ",".join(f"label{i}" for i in range(12))
    for k in (1, 3):
        m = None

        def build(k=k):
            nonlocal m
            m = make_metric("judge", "continuation", {"task": task, "orders": k})

        assert _peak_bytes(build) < 2_000_000
        assert len(m.orders) == k and len(m.task.labels) == 12
