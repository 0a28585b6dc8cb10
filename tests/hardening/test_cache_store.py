"""The response cache (``--cache DIR``, ``biaskit cache info|clear``) touches only a store biaskit made, keeps no
secret and no caller text in clear, treats a damaged entry as a miss, and never takes ``''`` for the current folder."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.evaluate.cache import ResponseCache, cache_key
from biaskit.evaluate.metrics.cached import score_cached

CANARY = "hf_cacheCanaryHF0123456789abcdefXYZ"


def _foreign_db(path: Path) -> None:
    """Another application's SQLite database, with one table and two rows."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE users (name TEXT, email TEXT)")
    con.executemany("INSERT INTO users VALUES (?, ?)", [("ada", "ada@example.org"), ("bob", "bob@example.org")])
    con.commit()
    con.close()


def _tables_and_rows(path: Path) -> tuple[set[str], int]:
    con = sqlite3.connect(path)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return tables, con.execute("SELECT COUNT(*) FROM users").fetchone()[0]
    finally:
        con.close()


@pytest.mark.parametrize("command", ["clear", "info"])
def test_cache_commands_leave_a_foreign_cache_sqlite_untouched(tmp_path, command):
    folder = tmp_path / "c"
    folder.mkdir()
    _foreign_db(folder / "cache.sqlite")
    before = (folder / "cache.sqlite").read_bytes()
    r = CliRunner().invoke(app, ["cache", command, str(folder)])
    assert r.exit_code == 1 and r.output.strip().startswith("error[E311]") and "users" in r.output, r.output
    assert _tables_and_rows(folder / "cache.sqlite") == ({"users"}, 2)
    assert (folder / "cache.sqlite").read_bytes() == before


def test_a_run_with_cache_at_a_foreign_database_adds_no_table_to_it(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    _foreign_db(folder / "cache.sqlite")
    with pytest.raises(BiaskitError) as e:
        ResponseCache(folder)
    assert e.value.code == "E311"
    assert _tables_and_rows(folder / "cache.sqlite") == ({"users"}, 2)


def test_a_symlinked_cache_sqlite_is_refused_and_its_target_kept(tmp_path):
    real = ResponseCache(tmp_path / "real")
    real.put_many({cache_key({"x": 1}): {"a": 1}}, kind="k")
    real.close()
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "cache.sqlite").symlink_to(tmp_path / "real" / "cache.sqlite")
    r = CliRunner().invoke(app, ["cache", "clear", str(folder)])
    assert r.exit_code == 1 and r.output.strip().startswith("error[E311]") and "symbolic link" in r.output, r.output
    assert ResponseCache(tmp_path / "real").info()["entries"] == 1


def test_a_cache_biaskit_made_is_cleared(tmp_path):
    c = ResponseCache(tmp_path / "c")
    c.put_many({cache_key({"x": 1}): {"a": 1}, cache_key({"x": 2}): {"a": 2}}, kind="k")
    c.close()
    r = CliRunner().invoke(app, ["cache", "clear", str(tmp_path / "c")])
    assert r.exit_code == 0 and "cleared 2" in r.output, r.output


def test_an_empty_cache_name_is_refused_not_taken_for_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BiaskitError) as e:
        ResponseCache("")
    assert e.value.code == "E310" and "empty" in e.value.what
    (tmp_path / "x.csv").write_text("prompt_id,continuation\nq1,a kind word\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["score", "x.csv", "-m", "vader", "--cache", "", "--out", "s.parquet"])
    assert r.exit_code == 1 and r.output.strip().startswith("error[E310]"), r.output
    for argv in (["cache", "info", ""], ["cache", "clear", " "]):
        r = CliRunner().invoke(app, argv)
        assert r.exit_code == 1 and r.output.strip().startswith("error[E310]"), r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]  # no cache.sqlite in the working directory


def _raw_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.glob("cache.sqlite*")))


def test_the_cache_stores_no_secret_and_no_plain_key(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", CANARY)
    c = ResponseCache(tmp_path / "c")
    prompt_key = "Rate this text: my token is " + CANARY
    c.put_many({prompt_key: [{"prompt": f"echo {CANARY}", "answer": f"the key was {CANARY}"}]}, kind="judge")
    c.close()
    raw = _raw_bytes(tmp_path / "c")
    assert CANARY.encode() not in raw and CANARY[:8].encode() not in raw
    assert b"Rate this text" not in raw
    back = ResponseCache(tmp_path / "c").get_many([prompt_key])
    assert list(back) == [prompt_key] and CANARY not in str(back[prompt_key])


class _Upper:
    """A cached metric scoring a text as its length (the cache layer's contract, without a model)."""

    name, text_column, input_columns, error_column = "upper", "text", ["text"], "upper_error"
    token_columns: tuple = ()

    def __init__(self) -> None:
        self.scored: list[str] = []

    def output_columns(self):
        return ["upper_len", "upper_error"]

    def score(self, batch):
        self.scored += list(batch["text"])
        return {"upper_len": [len(t) for t in batch["text"]], "upper_error": [None] * len(batch["text"])}


@pytest.mark.parametrize("damage", ["not json {", "42", "[1, 2]", '"text"', "[" * 5000 + "]" * 5000])
def test_a_damaged_entry_is_a_miss_recomputed_and_counted(tmp_path, damage, caplog):
    texts = ["abc", "hello world"]
    ident = {"metric": "upper"}
    first = ResponseCache(tmp_path / "c")
    score_cached(_Upper(), {"text": texts}, first, ident)
    first.close()
    con = sqlite3.connect(tmp_path / "c" / "cache.sqlite")
    con.execute("UPDATE entries SET value=? WHERE rowid=(SELECT MIN(rowid) FROM entries)", (damage,))
    con.commit()
    con.close()
    again, m = ResponseCache(tmp_path / "c"), _Upper()
    with caplog.at_level(logging.WARNING):
        out = score_cached(m, {"text": texts}, again, ident)
    assert out["upper_len"] == [3, 11]  # len("abc"), len("hello world")
    assert len(m.scored) == 1 and again.stats()["damaged"] == 1 and (again.stats()["hits"], again.stats()["misses"]) == (1, 1)
    assert any("E311" in r.getMessage() for r in caplog.records)
    third = ResponseCache(tmp_path / "c")
    score_cached(_Upper(), {"text": texts}, third, ident)
    assert third.stats()["hits"] == 2 and third.stats()["damaged"] == 0  # stored again


def test_a_damaged_model_call_entry_is_a_miss(tmp_path):
    from biaskit.formats.cache_entries import rows_entry

    c = ResponseCache(tmp_path / "c")
    k = cache_key({"u": 1})
    c.put_many({k: 42}, kind="generate")
    assert c.get_many([k], shape=rows_entry) == {} and c.stats()["damaged"] == 1
    assert c.info()["entries"] == 0
