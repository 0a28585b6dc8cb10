import json
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from biaskit import io
from biaskit.errors import BiaskitError
from biaskit.manifest import new_manifest

ROWS = [
    {"prompt_id": "p1", "text": "A nurse is ", "source": "bold", "language": "en", "page_id": 3, "reference": None},
    {"prompt_id": "p2", "text": "Ein Arzt ", "source": "bold", "language": "de", "page_id": None, "reference": "Ein Arzt hilft."},
]


@pytest.mark.parametrize("name", ["t.parquet", "t.jsonl", "t.csv", "tdir"])
def test_round_trip_by_suffix_keeps_values_and_nulls(tmp_path, name):
    path = tmp_path / name
    io.write_table(ROWS, path, stage="prompts")
    back = io.read_table(path, "prompts")
    assert back.column("prompt_id").to_pylist() == ["p1", "p2"]
    assert back.column("page_id").to_pylist() == [3, None]
    assert back.column("reference").to_pylist() == [None, "Ein Arzt hilft."]
    assert back.column("text").to_pylist() == ["A nurse is ", "Ein Arzt "]  # trailing spaces kept


def test_csv_ids_that_look_like_numbers_are_read_as_the_stage_strings(tmp_path):
    # a hand-made annotations CSV with round "1" and annotators "1", "2" was rejected with E004 (int64)
    p = tmp_path / "ann.csv"
    p.write_text("sample_id,round,annotator,label\n7,1,1,positive\n7,1,2,negative\n")
    t = io.read_table(p, "annotations")
    assert t.column("round").to_pylist() == ["1", "1"]
    assert t.column("annotator").to_pylist() == ["1", "2"] and t.column("sample_id").to_pylist() == ["7", "7"]


def test_manifest_keeps_settings_whose_names_merely_contain_token_or_auth(tmp_path):
    # scrub dropped every key containing "token"/"auth": generate manifests lost max_new_tokens
    m = new_manifest(
        "biaskit generate",
        config={
            "generation_config": {"max_new_tokens": 20, "eos_token_id": 2},
            "tokenizer": "gpt2",
            "author": "me",
            "hf_token": "x" * 10,
            "headers": {"Authorization": "Bearer abc", "X-Api-Key": "k", "accessToken": "t"},
        },
    )
    assert m["config"]["generation_config"] == {"max_new_tokens": 20, "eos_token_id": 2}
    assert m["config"]["tokenizer"] == "gpt2" and m["config"]["author"] == "me"
    assert "hf_token" not in m["config"] and m["config"]["headers"] == {}


def test_unsupported_suffix_is_a_clear_error(tmp_path):
    with pytest.raises(BiaskitError) as ei:
        io.write_table(ROWS, tmp_path / "t.xlsx")
    assert ei.value.code == "E002" and ".parquet" in str(ei.value)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(BiaskitError, match="E003"):
        io.read_table(tmp_path / "nope.parquet")


def test_manifest_written_next_to_output_with_checksums_and_no_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_FAKE_secret_token_123")
    inp = tmp_path / "in.csv"
    inp.write_text("a\n1\n")
    m = new_manifest(
        "biaskit test",
        config={"x": 1, "hf_token": "hf_FAKE_secret_token_123", "note": "uses hf_FAKE_secret_token_123"},
        seed=7,
        inputs=[inp],
        stage="prompts",
    )
    out = io.write_table(ROWS, tmp_path / "out.parquet", stage="prompts", manifest=m)
    man_file = tmp_path / "out.parquet.manifest.json"
    text = man_file.read_text()
    assert "hf_FAKE_secret_token_123" not in text
    man = json.loads(text)
    import hashlib

    assert man["inputs"][0]["sha256"] == hashlib.sha256(b"a\n1\n").hexdigest()
    assert man["output"]["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert man["output"]["rows"] == 2 and man["seed"] == 7 and man["config"]["x"] == 1
    assert "hf_token" not in man["config"] and man["config"]["note"] == "uses ***"
    assert "pyarrow" in man["libraries"] and man["biaskit_version"]


def test_killed_writer_leaves_no_file_under_final_name(tmp_path):
    """A process killed in the middle of a write must not leave `out.parquet` behind."""
    out = tmp_path / "out.parquet"
    script = textwrap.dedent(f"""
        import os, pyarrow.parquet as pq, pyarrow as pa
        from biaskit import io
        real = pq.write_table
        def dying(t, where, **kw):
            real(t.slice(0, 1), where)      # half the data reaches the temp file ...
            os._exit(9)                      # ... then the process dies
        pq.write_table = dying
        io.write_table(pa.table({{"a": [1, 2, 3]}}), {str(out)!r})
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert r.returncode == 9
    assert not out.exists()
    # the previous complete output survives a crashed overwrite
    io.write_table(pa.table({"a": [1, 2, 3]}), out)
    subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert io.read_table(out).column("a").to_pylist() == [1, 2, 3]


def test_kill_between_table_and_manifest_leaves_no_stale_manifest(tmp_path):
    """A run killed after the new table but before its manifest must not leave the previous run's manifest,
    which the runners read as 'this output is complete for those settings'."""
    out = tmp_path / "out.parquet"
    io.write_table(pa.table({"a": [1]}), out, manifest=new_manifest("first", config={"fingerprint": "A"}))
    assert io.read_manifest(out)["config"]["fingerprint"] == "A"
    script = textwrap.dedent(f"""
        import os, pyarrow as pa
        from biaskit import io, manifest
        def dying(*a, **kw):
            os._exit(9)                      # the table is in place, the manifest is not
        manifest.finish_manifest = dying
        io.write_table(pa.table({{"a": [2, 3]}}), {str(out)!r}, manifest=manifest.new_manifest("second", config={{"fingerprint": "B"}}))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert r.returncode == 9, r.stderr
    assert io.read_table(out).column("a").to_pylist() == [2, 3]
    assert io.read_manifest(out) is None


def test_sharded_writer_resumes_without_duplicates_or_losses(tmp_path):
    out = tmp_path / "gen.parquet"
    w = io.ShardedWriter(out, key=["prompt_id"])
    w.write([{"prompt_id": "a", "v": 1}, {"prompt_id": "b", "v": 2}])
    # "kill": a new writer over the same output sees what is done
    w2 = io.ShardedWriter(out, key=["prompt_id"])
    assert w2.done_keys() == {("a",), ("b",)}
    todo = [r for r in [{"prompt_id": k, "v": i} for i, k in enumerate("abcd", 1)] if (r["prompt_id"],) not in w2.done_keys()]
    w2.write(todo)
    w2.write([{"prompt_id": "b", "v": 99}])  # a duplicate that slipped through is dropped on finalize
    w2.finalize()
    t = io.read_table(out)
    assert t.column("prompt_id").to_pylist() == ["a", "b", "c", "d"]
    assert t.column("v").to_pylist() == [1, 2, 3, 4]
    assert not (tmp_path / "gen.parquet.parts").exists()


def test_folder_output_never_replaces_a_foreign_folder_or_file(tmp_path):
    """A suffix-less path is a save_to_disk folder: biaskit replaces its own such folders, nothing else."""
    staged = tmp_path / "hub_folder"
    staged.mkdir()
    (staged / "README.md").write_text("a dataset card")
    with pytest.raises(BiaskitError) as ei:
        io.write_table(ROWS, staged)
    assert ei.value.code == "E006" and (staged / "README.md").read_text() == "a dataset card"
    afile = tmp_path / "notes"
    afile.write_text("x")
    with pytest.raises(BiaskitError, match="E006"):
        io.write_table(ROWS, afile)
    # its own folder is replaced atomically
    own = tmp_path / "tbl"
    io.write_table(ROWS, own)
    io.write_table(ROWS[:1], own)
    assert io.read_table(own).num_rows == 1


def test_utf8_readers_name_the_file_line_and_byte_under_the_callers_code(tmp_path):
    p = tmp_path / "lex.tsv"
    p.write_bytes(b"\xef\xbb\xbfword\tv\ncaf\xe9\t1\n")  # BOM, then a Latin-1 byte on line 2
    with pytest.raises(BiaskitError) as e:
        io.read_text_utf8(p, "lexicon")
    assert (e.value.code, e.value.what) == ("E150", f"lexicon {p} is not UTF-8 text: byte 0xE9 on line 2")
    with pytest.raises(BiaskitError) as e:  # a format with its own code keeps it
        io.read_text_utf8(p, "lexicon", code="E071")
    assert (e.value.code, e.value.value) == ("E071", str(p))
    assert io.decode_utf8(b"\xef\xbb\xbfa,b\n", p) == "a,b\n"  # the BOM is dropped by default
    assert io.decode_utf8(b"\xef\xbb\xbfa,b\n", p, bom=False) == "\ufeffa,b\n"  # and kept with bom=False
    with pytest.raises(BiaskitError) as e:
        io.decode_utf8(b"\xff\xfe", p, "table", bom=False, code="E054")
    assert (e.value.code, e.value.what) == ("E054", f"table {p} is not UTF-8 text: byte 0xFF on line 1")
