"""Property tests of the external formats biaskit reads, each declared once in the input layer (``biaskit.formats``):
valid instances generated from the declaration are read as they are, and broken ones (a key missing, a value of the
wrong type, a negative count, a non-finite number, an unknown key, a path leaving the folder, deep nesting, a damaged
cache entry) are a coded error, a row's coded error, "not biaskit's" or a cache miss, never another exception.

Declarations: folder markers (``formats.markers``: ``ownership.read_marker``), round plans (``formats.plans``:
``read_plan``), cache entries (``formats.cache_entries``: ``ResponseCache.get_many``, typed by the generations table or
the metric's columns), label columns (a vocabulary: ``labels.check_values``), server replies (``formats.responses``:
completions, ``/v1/models``, any body; chat replies in tests/evaluate/runners/test_server_responses.py), run state
files (``formats.run_state``) and Label Studio exports (``formats.labelstudio``)."""

from __future__ import annotations

import json
import math
import sqlite3
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import examples

from biaskit.annotate.planning import read_plan
from biaskit.errors import BiaskitError
from biaskit.evaluate.cache import ResponseCache, cache_key
from biaskit.formats.cache_entries import ROW_TYPES, columns_entry, columns_shape, rows_entry
from biaskit.formats.labelstudio import read_export
from biaskit.formats.markers import MARKER_FIELDS
from biaskit.formats.plans import PLAN_FIELDS, PLAN_GROUP_FIELDS
from biaskit.formats.responses import BadResponse, completion_reply, decode_reply, model_list
from biaskit.formats.run_state import read_run_state
from biaskit.inputs import Field, check_record
from biaskit.ownership import read_marker

SETTINGS = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
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


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


# ------------------------------------------------------------------------------------- server replies (completions)

LOGPROB = st.floats(-1e6, 0.0, allow_nan=False, allow_infinity=False)
COUNT = st.integers(0, 10**9)
TOKENS = st.lists(TEXT, min_size=1, max_size=5)


@st.composite
def completion_replies(draw) -> dict:
    """A valid /v1/completions reply (echo: legacy logprobs with a null first token), with usage."""
    tokens = draw(TOKENS)
    lps = [None] + [draw(LOGPROB) for _ in tokens[1:]]
    offsets = sorted(draw(st.lists(COUNT, min_size=len(tokens), max_size=len(tokens))))
    usage = draw(st.fixed_dictionaries({}, optional={"prompt_tokens": COUNT, "completion_tokens": COUNT, "total_tokens": COUNT}))
    choice = {"text": "".join(tokens), "logprobs": {"tokens": tokens, "token_logprobs": lps, "text_offset": offsets}}
    return {"choices": [choice], "usage": usage, **draw(st.dictionaries(st.sampled_from(["id", "model", "created"]), TEXT, max_size=2))}


#: ways to break a completions reply: a non-finite or positive log-probability, a bool or a string for one, a
#: negative or fractional count, a text that is not a string, no choices
COMPLETION_BREAKS = [
    lambda r: r["choices"][0]["logprobs"]["token_logprobs"].append(math.inf),
    lambda r: r["choices"][0]["logprobs"]["token_logprobs"].append(math.nan),
    lambda r: r["choices"][0]["logprobs"]["token_logprobs"].append(0.5),
    lambda r: r["choices"][0]["logprobs"]["token_logprobs"].append(True),
    lambda r: r["choices"][0]["logprobs"]["token_logprobs"].append("-1.0"),
    lambda r: r["choices"][0]["logprobs"]["text_offset"].append(-1),
    lambda r: r.update(usage={"completion_tokens": 2.5}),
    lambda r: r.update(usage={"prompt_tokens": -3}),
    lambda r: r.update(usage={"total_tokens": "12"}),
    lambda r: r["choices"][0].update(text=42),
    lambda r: r.update(choices=[]),
    lambda r: r.update(choices="none"),
]


@SETTINGS
@given(reply=completion_replies())
def test_a_generated_completion_reply_is_read_as_sent(reply):
    parsed = completion_reply(reply)
    assert parsed.choices[0].text == reply["choices"][0]["text"]
    assert parsed.choices[0].logprobs.token_logprobs == reply["choices"][0]["logprobs"]["token_logprobs"]
    assert parsed.usage.model_dump(exclude_none=True) == reply["usage"]


@SETTINGS
@given(reply=completion_replies(), k=st.integers(0, len(COMPLETION_BREAKS) - 1))
def test_a_broken_completion_reply_is_a_coded_row_error_never_another_exception(reply, k):
    COMPLETION_BREAKS[k](reply)
    with pytest.raises(BadResponse) as e:
        completion_reply(reply)
    assert e.value.row_error().startswith("E317: bad response from the server (completion): ")


@SETTINGS
@given(data=st.lists(st.fixed_dictionaries({"id": TEXT}, optional={"root": TEXT, "max_model_len": COUNT}), max_size=3))
def test_a_generated_model_list_is_read_as_sent_and_an_entry_without_a_string_id_is_refused(data):
    assert [m.model_dump() for m in model_list({"object": "list", "data": data}).data] == data
    for bad in ({"data": [{"id": 3}]}, {"data": [{"root": "x"}]}, {"data": "all"}, {}):
        with pytest.raises(BadResponse):
            model_list(bad)


@settings(max_examples=examples(40), deadline=None)
@given(raw=st.binary(max_size=80) | JSON.map(lambda v: json.dumps(v).encode()) | st.integers(201, 3000).map(lambda n: b"[" * n + b"]" * n))
def test_a_reply_body_is_json_or_a_bad_response_never_another_exception(raw):
    try:
        decode_reply(raw, "reply")
    except BadResponse as exc:
        assert exc.row_error().startswith("E317")


# ----------------------------------------------------------------------------- cache entries: typed rows and columns

ROW_VALUES = {int: st.integers(-(10**6), 10**6), float: st.floats(allow_nan=False, allow_infinity=False), str: TEXT, bool: st.booleans()}
ROW = st.fixed_dictionaries(
    {}, optional={c: st.one_of(*(ROW_VALUES[t] for t in kinds)) | st.none() for c, kinds in ROW_TYPES.items() if c != "error"}
)
WRONG = {int: [2.5, "3", True, [1]], float: ["1.0", True, {"v": 1}], str: [3, 1.5, False, ["x"]], bool: ["true", 1, 0.0]}


@SETTINGS
@given(rows=st.lists(ROW, min_size=1, max_size=3))
def test_model_call_rows_of_the_generations_types_are_a_valid_entry(rows):
    assert rows_entry(rows)


@SETTINGS
@given(rows=st.lists(ROW, min_size=1, max_size=3), col=st.sampled_from(sorted(c for c in ROW_TYPES if c != "error")), data=st.data())
def test_a_model_call_row_with_a_value_of_another_type_or_an_error_is_a_damaged_entry(rows, col, data):
    want = ROW_TYPES[col]
    bad = data.draw(st.sampled_from([v for t in want for v in WRONG[t] if not (isinstance(v, want) and not isinstance(v, bool))]))
    assert not rows_entry([*rows, {col: bad}])
    assert not rows_entry([*rows, {"error": "E317: bad response"}])
    assert not rows_entry([])


METRIC_COLUMNS = {"m_score": pa.float64(), "m_label": pa.string(), "m_n": pa.int64(), "m_flag": pa.bool_(), "m_error": pa.string()}
COLUMNS = st.fixed_dictionaries(
    {},
    optional={
        "m_score": ROW_VALUES[float] | st.none(),
        "m_label": TEXT | st.none(),
        "m_n": ROW_VALUES[int] | st.none(),
        "m_flag": st.booleans() | st.none(),
        "m_error": st.none(),
    },
)


@SETTINGS
@given(entry=COLUMNS, col=st.sampled_from(["m_score", "m_label", "m_n", "m_flag"]), data=st.data())
def test_a_metric_entry_holds_its_column_types_and_another_type_or_an_error_is_damaged(entry, col, data):
    shape = columns_shape(METRIC_COLUMNS)
    assert shape(entry)
    kind = {"m_score": float, "m_label": str, "m_n": int, "m_flag": bool}[col]
    assert not shape({**entry, col: data.draw(st.sampled_from(WRONG[kind]))})
    assert not shape({**entry, "m_error": "failed"})
    assert not shape({**entry, "m_label": {"nested": 1}})


# ------------------------------------------------------------------------------------------------- run state files

STATE = st.fixed_dictionaries(
    {"fingerprint": TEXT},
    optional={
        "run": st.dictionaries(TEXT, JSON, max_size=3),
        "retry_of_finished": st.lists(st.tuples(TEXT, st.integers(0, 99)).map(list), max_size=4),
    },
)
BROKEN_STATE = st.one_of(
    STATE.map(lambda s: {k: v for k, v in s.items() if k != "fingerprint"}),
    STATE.map(lambda s: {**s, "fingerprint": None}),
    STATE.flatmap(lambda s: st.sampled_from([3, [], {}, True]).map(lambda v: {**s, "fingerprint": v})),
    STATE.flatmap(lambda s: st.sampled_from(["x", 3, [1]]).map(lambda v: {**s, "run": v})),
    STATE.flatmap(
        lambda s: st.sampled_from([[[1, 2]], [["p", -1]], [["p"]], [["p", True]], [["p", 1.5]], "p"]).map(lambda v: {**s, "retry_of_finished": v})
    ),
    JSON.filter(lambda v: not isinstance(v, dict)),
)


@SETTINGS
@given(state=STATE)
def test_a_generated_run_state_file_is_read_as_written(state):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "run.json"
        p.write_text(json.dumps(state), encoding="utf-8")
        back = read_run_state(p)
    assert back["fingerprint"] == state["fingerprint"] and back["run"] == (state.get("run") or {})
    assert back["retry_of_finished"] == {tuple(u) for u in state.get("retry_of_finished") or []}


@SETTINGS
@given(state=BROKEN_STATE)
def test_a_broken_run_state_file_is_e381_naming_it(state):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "run.json"
        p.write_text(json.dumps(state), encoding="utf-8")
        with pytest.raises(BiaskitError) as e:
            read_run_state(p)
    assert e.value.code == "E381" and str(p) in str(e.value) and "--overwrite" in (e.value.fix or "")


# ------------------------------------------------------------------------------------------- Label Studio exports

RESULT = st.fixed_dictionaries(
    {},
    optional={
        "type": st.just("choices") | TEXT,
        "from_name": TEXT,
        "value": st.fixed_dictionaries({}, optional={"choices": st.lists(TEXT, max_size=3)}),
    },
)
ANNOTATION = st.fixed_dictionaries(
    {},
    optional={
        "id": st.integers(0, 10**6),
        "completed_by": st.integers(0, 99) | st.fixed_dictionaries({"id": st.integers(0, 99), "email": TEXT}) | st.none(),
        "result": st.lists(RESULT, max_size=3),
        "lead_time": JSON,
        "was_cancelled": st.booleans(),
        "ground_truth": st.booleans(),
    },
)
TASK = st.fixed_dictionaries(
    {}, optional={"id": st.integers(0, 10**6), "data": st.dictionaries(TEXT, JSON, max_size=3), "annotations": st.lists(ANNOTATION, max_size=3)}
)
EXPORT = st.lists(TASK, max_size=4)


def _break_export(export: list, how: int) -> list | dict:
    task = {"id": 1, "data": {}, "annotations": [{"id": 2, "result": [{"type": "choices", "from_name": "label", "value": {"choices": ["a"]}}]}]}
    broken = [
        lambda t: t.update(id="one"),
        lambda t: t.update(data=["x"]),
        lambda t: t.update(annotations={"a": 1}),
        lambda t: t["annotations"].append("an annotation"),
        lambda t: t["annotations"][0].update(result="positive"),
        lambda t: t["annotations"][0].update(was_cancelled="no"),
        lambda t: t["annotations"][0]["result"][0].update(type=3),
        lambda t: t["annotations"][0]["result"][0].update(value=[]),
        lambda t: t["annotations"][0]["result"][0]["value"].update(choices=[1]),
        lambda t: t["annotations"][0]["result"][0]["value"].update(choices="a"),
    ]
    if how == len(broken):
        return {"tasks": export}
    broken[how](task)
    return [*export, task]


@SETTINGS
@given(export=EXPORT)
def test_a_generated_label_studio_export_is_read_as_sent(export):
    assert read_export(json.dumps(export).encode(), source="gen export") == export


@SETTINGS
@given(export=EXPORT, how=st.integers(0, 10))
def test_a_broken_label_studio_export_is_e381_never_another_exception(export, how):
    with pytest.raises(BiaskitError) as e:
        read_export(json.dumps(_break_export(export, how)).encode(), source="gen export")
    assert e.value.code == "E381" and "gen export" in str(e.value)


@settings(max_examples=examples(40), deadline=None)
@given(raw=st.binary(max_size=80))
def test_label_studio_export_bytes_are_an_export_or_a_coded_error(raw):
    try:
        read_export(raw, source="gen export")
    except BiaskitError as exc:
        assert exc.code in ("E380", "E381", "E387")
