"""Pushing a staged folder against a local fake Hub (tests/datasets/conftest.py) that records requests."""

from __future__ import annotations

import hashlib
import time

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.datasets.push import push_folder
from biaskit.datasets.stage import TableSpec, stage_tables
from biaskit.errors import BiaskitError

TOKEN = "hf_FAKEtokenNeverShown0123456789"


@pytest.fixture
def folder(tmp_path):
    t = pa.table(
        {
            "prompt_id": [f"p{i}" for i in range(40)],
            "text": [f"Prompt number {i} is " for i in range(40)],
            "source": ["bold"] * 40,
            "language": ["en"] * 40,
        }
    )
    stage_tables([TableSpec("prompts_bold", t, "prompts")], tmp_path / "hub", max_shard_rows=10)  # 4 shards
    return tmp_path / "hub"


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    return TOKEN


def _shards(folder):
    return sorted(str(p.relative_to(folder)) for p in (folder / "data").rglob("*.parquet"))


def test_push_uploads_every_file_with_identical_bytes(fake_hub, folder, token):
    res = push_folder(folder, "org/bias", endpoint=fake_hub.base, private=True, message="first release", max_commit_files=2)
    files = fake_hub.files("org/bias")
    assert sorted(files) == sorted([*_shards(folder), "README.md", "biaskit_manifest.json"])
    for path, data in files.items():
        assert data == (folder / path).read_bytes()
    assert fake_hub.repos["org/bias"]["private"] is True
    commits = fake_hub.repos["org/bias"]["commits"]
    # 4 shards in batches of 2, then the card + manifest last (after the data they describe)
    assert [c["summary"] for c in commits] == [f"first release [part {i}/3]" for i in (1, 2, 3)]
    assert sorted(commits[-1]["files"]) == ["README.md", "biaskit_manifest.json"]
    assert res.uploaded == [*_shards(folder), "biaskit_manifest.json", "README.md"] and res.skipped == []
    # the token travels only in the Authorization header of Hub API calls
    api_calls = [r for r in fake_hub.requests if r.path.startswith("/api/repos")]
    assert api_calls and all(
        r.headers.get("authorization") == f"Bearer {TOKEN}" or r.headers.get("Authorization") == f"Bearer {TOKEN}" for r in api_calls
    )
    assert not any(TOKEN.encode() in r.body for r in fake_hub.requests)


def test_rerun_of_a_finished_push_uploads_nothing(fake_hub, folder, token):
    push_folder(folder, "org/bias", endpoint=fake_hub.base)
    n_puts = len(fake_hub.puts())
    res = push_folder(folder, "org/bias", endpoint=fake_hub.base)
    assert res.uploaded == [] and len(res.skipped) == 6 and res.commits == []
    assert len(fake_hub.puts()) == n_puts


def _fault(fake_hub, method, contains, times, action="drop"):
    import importlib

    mod = importlib.import_module(type(fake_hub).__module__)
    fake_hub.faults.append(mod.Fault(method, contains, times, action))


def test_dropped_connection_mid_upload_then_resume(fake_hub, folder, token, monkeypatch):
    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", lambda s: sleeps.append(s))
    shards = _shards(folder)
    oid = hashlib.sha256((folder / shards[1]).read_bytes()).hexdigest()
    _fault(fake_hub, "PUT", f"/upload/{oid}", times=1)
    res = push_folder(folder, "org/bias", endpoint=fake_hub.base, max_commit_files=2)
    dropped = [r for r in fake_hub.requests if r.dropped]
    assert len(dropped) == 1 and dropped[0].path == f"/upload/{oid}"
    # the dropped blob was sent again, every other blob exactly once
    puts = fake_hub.puts()
    assert puts.count(oid) == 2 and all(puts.count(o) == 1 for o in set(puts) - {oid})
    assert sorted(fake_hub.files("org/bias")) == sorted([*shards, "README.md", "biaskit_manifest.json"])
    assert fake_hub.files("org/bias")[shards[1]] == (folder / shards[1]).read_bytes()
    assert len(res.uploaded) == 6


def test_interrupted_push_rerun_uploads_only_what_is_missing(fake_hub, folder, token, monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda s: None)
    shards = _shards(folder)
    oids = [hashlib.sha256((folder / s).read_bytes()).hexdigest() for s in shards]
    # the connection to the storage drops on every attempt to send shard 3 (batch 2): the first run fails
    _fault(fake_hub, "PUT", f"/upload/{oids[2]}", times=10_000)
    with pytest.raises(BiaskitError) as ei:
        push_folder(folder, "org/bias", endpoint=fake_hub.base, max_commit_files=2, retries=1, backoff=0.01)
    msg = str(ei.value)
    assert ei.value.code == "E052" and "2 of 6 files are on the Hub" in msg and "rerun the same command" in msg
    assert TOKEN not in msg
    assert sorted(fake_hub.files("org/bias")) == shards[:2]  # batch 1 committed
    first_run_puts = set(fake_hub.puts())
    assert oids[3] in fake_hub.blobs  # shard 4 reached storage before the commit failed
    fake_hub.faults.clear()
    n_before = len(fake_hub.requests)
    res = push_folder(folder, "org/bias", endpoint=fake_hub.base, max_commit_files=2)
    assert res.skipped == shards[:2]
    assert res.uploaded == [*shards[2:], "biaskit_manifest.json", "README.md"]
    rerun_puts = [r.path.rsplit("/", 1)[-1] for r in fake_hub.requests[n_before:] if r.method == "PUT"]
    assert rerun_puts == [oids[2]]  # only the blob that never arrived; shard 4's blob is not sent again
    assert oids[0] in first_run_puts and oids[0] not in rerun_puts
    assert {p: fake_hub.files("org/bias")[p] for p in shards} == {p: (folder / p).read_bytes() for p in shards}


def test_rate_limited_commit_is_retried_with_backoff(fake_hub, folder, token, monkeypatch):
    waits: list[float] = []
    _fault(fake_hub, "POST", "/commit/main", times=2, action="429")
    res = push_folder(folder, "org/bias", endpoint=fake_hub.base, sleep=waits.append, backoff=0.5)
    assert waits == [0.0, 0.0]  # Retry-After: 0 from the server wins over the 0.5 s backoff
    assert len(res.commits) == 2 and sorted(fake_hub.files("org/bias")) == sorted([*_shards(folder), "README.md", "biaskit_manifest.json"])


def test_server_errors_back_off_exponentially(fake_hub, folder, token):
    waits: list[float] = []
    _fault(fake_hub, "POST", "/api/repos/create", times=3, action="503")
    push_folder(folder, "org/bias", endpoint=fake_hub.base, sleep=waits.append, backoff=0.5)
    assert waits == [0.5, 1.0, 2.0]


def test_revision_pushes_to_a_branch(fake_hub, folder, token):
    push_folder(folder, "org/bias", endpoint=fake_hub.base, revision="v1")
    assert fake_hub.files("org/bias", "main") == {}
    assert "README.md" in fake_hub.files("org/bias", "v1")


def test_missing_token_is_a_coded_error(fake_hub, folder, monkeypatch, tmp_path):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))  # no login file
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_TOKEN_PATH", str(tmp_path / "hf_home" / "token"))
    monkeypatch.setattr(hc, "HF_STORED_TOKENS_PATH", str(tmp_path / "hf_home" / "stored_tokens"))
    with pytest.raises(BiaskitError) as ei:
        push_folder(folder, "org/bias", endpoint=fake_hub.base)
    assert ei.value.code == "E051" and "HF_TOKEN" in str(ei.value)
    assert fake_hub.requests == []


@pytest.mark.parametrize("repo_id", ["bias", "org/", "org/na me", "../x", "org/name/extra", "-org/x"])
def test_invalid_repo_id(repo_id, folder):
    with pytest.raises(BiaskitError) as ei:
        push_folder(folder, repo_id, dry_run=True)
    assert ei.value.code == "E053" and repr(repo_id) in str(ei.value)


def test_cli_push_dry_run_lists_files_and_sizes_without_contacting_the_hub(fake_hub, folder, monkeypatch):
    from biaskit.cli import app

    monkeypatch.delenv("HF_TOKEN", raising=False)
    r = CliRunner().invoke(app, ["hub", "push", str(folder), "--repo-id", "org/bias", "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "would upload 6 files" in r.output
    size = (folder / "README.md").stat().st_size
    assert f"{size / 1024:.1f} KB  README.md" in r.output
    assert fake_hub.requests == []


def test_token_never_appears_in_cli_output_logs_or_files(fake_hub, folder, token, caplog, tmp_path, monkeypatch):
    from biaskit.cli import app

    monkeypatch.setattr(time, "sleep", lambda s: None)
    runner = CliRunner()
    ok = runner.invoke(app, ["-v", "hub", "push", str(folder), "--repo-id", "org/bias", "--message", "m"])
    assert ok.exit_code == 0, ok.output
    assert "pushed 6 file(s) in 2 commit(s)" in ok.output
    # a failing push (every commit dropped) must not leak the token in its error either
    _fault(fake_hub, "POST", "/commit/", times=10_000, action="503")
    (folder / "README.md").write_text((folder / "README.md").read_text() + "\n")  # force a new commit
    bad = runner.invoke(app, ["hub", "push", str(folder), "--repo-id", "org/bias"])
    assert bad.exit_code == 1 and "error[E052]" in bad.output
    texts = [ok.output, bad.output, caplog.text]
    texts += [p.read_text(errors="ignore") for p in tmp_path.rglob("*") if p.is_file()]
    assert all(TOKEN not in t for t in texts)
