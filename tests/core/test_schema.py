import pyarrow as pa
import pytest

from biaskit import schema
from biaskit.errors import BiaskitError


def test_missing_required_column_names_column_file_and_fix():
    t = pa.table({"prompt_id": ["a"], "text": ["x"], "source": ["bold"]})  # no 'language'
    with pytest.raises(BiaskitError) as ei:
        schema.validate(t, "prompts", where="in.parquet")
    msg = str(ei.value)
    assert ei.value.code == "E001"
    assert "language" in msg and "in.parquet" in msg and "biaskit schema prompts" in msg


def test_check_columns_names_the_missing_columns_in_order_and_the_columns_there_are():
    schema.check_columns(["text", "prompt_id"], ("prompt_id", "text"), "needs column(s)", fix="f")  # all there: no error
    with pytest.raises(BiaskitError) as ei:  # a mapping's keys are its columns (a metric's batch, a record)
        schema.check_columns({"z": [1], "a": [2]}, ("b", "a", "c"), "metric 'm' needs column(s)", fix="add them")
    assert (ei.value.code, ei.value.what, ei.value.value, ei.value.fix) == ("E001", "metric 'm' needs column(s) b, c", ["a", "z"], "add them")
    with pytest.raises(BiaskitError) as ei:  # a file format with its own code keeps it
        schema.check_columns(["template_id", ""], ("template_id", "source"), "s.csv: sheet lacks column(s)", fix="f", code="E041")
    assert (ei.value.code, ei.value.what, ei.value.value) == ("E041", "s.csv: sheet lacks column(s) source", ["", "template_id"])


def test_table_of_keeps_the_named_columns_in_order_typed_as_the_stage_declares():
    rows = [{"text": "a", "prompt_id": "p1", "source_row": 3, "extra": 1}, {"text": "b", "prompt_id": "p2", "source_row": None}]
    t = schema.PROMPTS.table_of(rows, ("prompt_id", "source_row", "text"))
    assert t.schema == pa.schema([("prompt_id", pa.string()), ("source_row", pa.int64()), ("text", pa.string())])
    assert t.to_pylist() == [{"prompt_id": "p1", "source_row": 3, "text": "a"}, {"prompt_id": "p2", "source_row": None, "text": "b"}]
    assert schema.PROMPTS.table_of([], ("source_row",)).schema == pa.schema([("source_row", pa.int64())])  # typed when empty too


def test_valid_table_passes_and_extra_columns_are_allowed():
    t = pa.table({"prompt_id": ["a"], "text": ["x"], "source": ["bold"], "language": ["en"], "my_col": [1]})
    schema.validate(t, "prompts")


def test_wrong_type_of_known_column_is_reported():
    t = pa.table({"prompt_id": ["a"], "text": ["x"], "source": ["bold"], "language": ["en"], "page_id": ["not-int"]})
    with pytest.raises(BiaskitError) as ei:
        schema.validate(t, "prompts")
    assert ei.value.code == "E004" and "page_id" in str(ei.value)


def test_unknown_stage_lists_valid_stages():
    with pytest.raises(BiaskitError) as ei:
        schema.get_stage("prompt")
    assert "prompts" in str(ei.value) and ei.value.code == "E008"


@pytest.mark.parametrize("stage", list(schema.STAGES))
def test_every_stage_has_features_and_example_with_required_columns(stage):
    st = schema.STAGES[stage]
    feats = st.features()
    assert set(st.required) <= set(feats)
    ex = st.example_row()
    assert set(st.required) <= set(ex)
    schema.validate(pa.Table.from_pylist([ex]), stage)


def test_datasets_dataset_is_validated_too():
    import datasets as hf_datasets

    ds = hf_datasets.Dataset.from_dict({"sample_id": ["s"], "round": ["r1"], "annotator": ["a"]})
    with pytest.raises(BiaskitError, match="label"):
        schema.validate(ds, "annotations")


def test_docs_schemas_md_matches_generated_markdown():
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "schemas.md"
    assert schema.markdown() in doc.read_text(encoding="utf-8"), (
        "regenerate docs/schemas.md with `biaskit schema > docs/schemas.md` (keep the header)"
    )
