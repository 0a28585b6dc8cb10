"""Property tests of the formats biaskit reads back, each declared once in the input layer: valid instances generated
from the declaration are read as they are, and broken ones (a key missing, a value of the wrong type, a negative
count, a non-finite number, an unknown key, a path leaving the folder, a damaged cache entry) are a coded error or
"not biaskit's", never another exception.

Declarations: folder markers (``inputs.MARKER_FIELDS``, ``MARKER_FILE_FIELDS``: ``ownership.read_marker``), round
plans (``annotate.planning.PLAN_FIELDS``, ``PLAN_GROUP_FIELDS``: ``read_plan``), cache entries (``cache.columns_entry``,
``cache.rows_entry``: ``ResponseCache.get_many``), label columns (a vocabulary: ``labels.check_values``)."""

from __future__ import annotations

import json
import math
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biaskit.annotate.planning import PLAN_FIELDS, PLAN_GROUP_FIELDS, read_plan
from biaskit.errors import BiaskitError
from biaskit.evaluate.cache import ResponseCache, cache_key, columns_entry, rows_entry
from biaskit.inputs import MARKER_FIELDS, Field, check_record
from biaskit.ownership import read_marker

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


def valid_value(spec: Field) -> st.SearchStrategy:
    """Values ``spec`` accepts (null where it may be null)."""
    lo = spec.minimum if spec.minimum is not None else -(10**6)
    base = {
        "int": st.integers(int(math.ceil(lo)), 10**6),
        "number": st.floats(lo, 1e6, allow_nan=False, allow_infinity=False),
        "str": TEXT,
        "bool": st.booleans(),
        "object": st.dictionaries(TEXT, JSON, max_size=3),
        "list": st.lists(JSON, max_size=3),
        "any": JSON,
    }[spec.kind]
    return (base | st.none()) if spec.nullable else base


def broken_value(spec: Field) -> st.SearchStrategy:
    """Values ``spec`` refuses: another type, a non-finite or below-minimum number, null where it may not be null."""
    wrong = {
        "int": st.sampled_from(["ten", [3], {"n": 1}, True, 2.5]),
        "number": st.sampled_from(["x", [1.0], True, {"v": 0}]),
        "str": st.sampled_from([1, 2.5, [], {}, True]),
        "bool": st.sampled_from(["yes", 1, [], 0.5]),
        "object": st.sampled_from([[], "x", 3, True]),
        "list": st.sampled_from([{}, "x", 3, False]),
    }[spec.kind]
    extra = []
    if spec.kind in ("int", "number") and spec.minimum is not None:
        extra.append(st.just(spec.minimum - 5))
    if spec.kind in ("int", "number"):
        extra.append(st.sampled_from([math.nan, math.inf, -math.inf]))
    if not spec.nullable:
        extra.append(st.none())
    return st.one_of(wrong, *extra)


def valid_record(fields: dict[str, Field]) -> st.SearchStrategy:
    required = {k: valid_value(f) for k, f in fields.items() if f.required}
    optional = {k: valid_value(f) for k, f in fields.items() if not f.required}
    return st.fixed_dictionaries(required, optional=optional)


def broken_record(fields: dict[str, Field]) -> st.SearchStrategy:
    """A valid record with one thing broken: a required key dropped, a key's value broken, or an unknown key."""
    checked = [k for k, f in fields.items() if f.kind != "any"]

    def breaking(rec: dict) -> st.SearchStrategy:
        ways = [st.sampled_from(checked).flatmap(lambda k: broken_value(fields[k]).map(lambda v: {**rec, k: v}))]
        ways.append(st.just({**rec, "an_unknown_key": 1}))
        req = [k for k, f in fields.items() if f.required]
        if req:
            ways.append(st.sampled_from(req).map(lambda k: {kk: vv for kk, vv in rec.items() if kk != k}))
        return st.one_of(*ways)

    return valid_record(fields).flatmap(breaking)


@pytest.mark.parametrize("fields", [PLAN_FIELDS, PLAN_GROUP_FIELDS, MARKER_FIELDS], ids=["plan", "plan group", "marker"])
@SETTINGS
@given(data=st.data())
def test_a_declared_record_accepts_what_its_declaration_generates(fields, data):
    rec = data.draw(valid_record(fields))
    assert check_record(rec, fields, source="gen.json") == rec


@pytest.mark.parametrize("fields", [PLAN_FIELDS, PLAN_GROUP_FIELDS, MARKER_FIELDS], ids=["plan", "plan group", "marker"])
@SETTINGS
@given(data=st.data())
def test_a_broken_record_is_e381_or_e382(fields, data):
    rec = data.draw(broken_record(fields))
    with pytest.raises(BiaskitError) as e:
        check_record(rec, fields, source="gen.json")
    assert e.value.code in ("E381", "E382")


# ------------------------------------------------------------------------------------------------------- plans

GROUP = st.fixed_dictionaries({}, optional={k: valid_value(f) for k, f in PLAN_GROUP_FIELDS.items()})
PLAN = st.fixed_dictionaries(
    {"group_by": TEXT, "groups": st.dictionaries(TEXT, GROUP, max_size=3)},
    optional={k: valid_value(f) for k, f in PLAN_FIELDS.items() if k not in ("group_by", "groups", "rate")},
)


@SETTINGS
@given(plan=PLAN)
def test_a_generated_plan_file_is_read_as_written(plan):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "plan.json"
        p.write_text(json.dumps(plan), encoding="utf-8")
        back = read_plan(p)
    assert back["groups"] == plan["groups"] and back["group_by"] == plan["group_by"]


@SETTINGS
@given(plan=PLAN, group=broken_record(PLAN_GROUP_FIELDS))
def test_a_plan_file_with_a_broken_group_is_a_coded_error(plan, group):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "plan.json"
        p.write_text(json.dumps({**plan, "groups": {"g": group}}, allow_nan=True), encoding="utf-8")
        with pytest.raises(BiaskitError) as e:
            read_plan(p)
    assert e.value.code in ("E381", "E382", "E256")


# ----------------------------------------------------------------------------------------------------- markers

SHA = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)
NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=8).filter(lambda s: s not in (".", ".."))
REL = st.lists(NAME, min_size=1, max_size=3).map("/".join)
FILES = st.dictionaries(REL, SHA | st.builds(lambda b, s: {"bytes": b, "sha256": s}, st.integers(0, 10**9), SHA), min_size=1, max_size=4)
MARKER = st.fixed_dictionaries({"written_by": st.just("biaskit"), "kind": st.just("k"), "files": FILES}, optional={"command": TEXT, "layout": TEXT})


def _expected(files: dict) -> dict:
    return {rel: (v["sha256"] if isinstance(v, dict) else v) for rel, v in files.items()}


@SETTINGS
@given(marker=MARKER)
def test_a_generated_marker_is_read_as_written(marker):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.json"
        p.write_text(json.dumps(marker), encoding="utf-8")
        assert read_marker(p, "k") == _expected(marker["files"])


BROKEN_MARKER = st.one_of(
    MARKER.map(lambda m: {**m, "written_by": "someone else"}),
    MARKER.map(lambda m: {**m, "kind": "another kind"}),
    MARKER.map(lambda m: {k: v for k, v in m.items() if k != "files"}),
    MARKER.map(lambda m: {**m, "files": {}}),
    st.tuples(MARKER, st.sampled_from(["../x", "/etc/passwd", "a/../../b"]), SHA).map(lambda t: {**t[0], "files": {t[1]: t[2]}}),
    st.tuples(MARKER, REL, st.sampled_from(["xyz", "A" * 64, 42, None, {"sha256": 1}, {"bytes": -1, "sha256": "0" * 64}])).map(
        lambda t: {**t[0], "files": {t[1]: t[2]}}
    ),
    JSON,
)


@SETTINGS
@given(marker=BROKEN_MARKER)
def test_a_broken_marker_is_not_biaskits_and_never_an_exception(marker):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.json"
        p.write_text(json.dumps(marker), encoding="utf-8")
        assert read_marker(p, "k") is None


@SETTINGS
@given(raw=st.binary(max_size=60))
def test_marker_bytes_that_are_not_json_are_not_biaskits(raw):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.json"
        p.write_bytes(raw)
        assert read_marker(p, "k") is None


# ----------------------------------------------------------------------------------------------- cache entries


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON, raw=st.one_of(JSON.map(json.dumps), st.text(max_size=30)), shape=st.sampled_from([columns_entry, rows_entry]))
def test_a_cache_entry_is_returned_only_in_its_shape_and_a_damaged_one_is_a_miss(value, raw, shape):
    with tempfile.TemporaryDirectory() as d:
        c = ResponseCache(d)
        k1, k2 = cache_key({"a": 1}), cache_key({"a": 2})
        c.put_many({k1: value}, kind="k")
        con = sqlite3.connect(Path(d) / "cache.sqlite")
        con.execute("INSERT INTO entries VALUES (?, 'k', ?, 0)", (k2, raw))
        con.commit()
        con.close()
        found = c.get_many([k1, k2], shape=shape)
        assert all(shape(v) for v in found.values())
        assert (k1 in found) == shape(value)
        assert c.stats()["damaged"] == 2 - len(found)
        c.close()


# ------------------------------------------------------------------------------------------------ label columns

LABEL = st.text(alphabet=st.characters(categories=("Ll", "Lo", "Nd")), min_size=1, max_size=10)


@SETTINGS
@given(vocab=st.lists(LABEL, min_size=1, max_size=5, unique=True), data=st.data())
def test_label_values_inside_the_vocabulary_pass_and_one_outside_is_named(vocab, data):
    from biaskit.labels import check_values

    inside = data.draw(st.lists(st.sampled_from(vocab) | st.none() | st.just(math.nan), max_size=8))
    check_values(inside, vocab, what="gen.csv")  # nulls are rows without a label
    bad = data.draw((LABEL.filter(lambda s: s not in vocab)) | st.sampled_from([1, 2.5, True, "POSITIVE ", ""]).filter(lambda v: v not in vocab))
    with pytest.raises(BiaskitError) as e:
        check_values([*inside, bad], vocab, what="gen.csv")
    assert e.value.code == "E151" and e.value.options == vocab and repr(bad) in e.value.value
