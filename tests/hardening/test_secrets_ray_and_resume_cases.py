"""Secrets, data loss, Ray connection, resume, CSV types and card cases, each a test that fails when the case
regresses. Secrets (redact first, cut after; known secrets in every text column; one list of
secret-bearing names), data loss (bold export / hub stage never replace user files), Ray connection
(fail fast, ``auto`` made safe), resume against another endpoint (E063), CSV read with the schema's types,
card injection and case-insensitive config names."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hardening_util import biaskit_cmd, cli_env, run_biaskit

KEY = "zq9-ROUND2-SECRET-7f3a1c5e"  # named by --api-key-env (a variable biaskit does not know by name)


def _all_bytes(root: Path, skip: set[Path] = frozenset()) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file() and p not in skip]


def _assert_no_secret(root: Path, secrets: list[str], skip: set[Path] = frozenset(), outputs=()) -> None:
    """No secret, and no run of its first 8 characters, in any byte written under root or printed."""
    needles = {s for s in secrets} | {s[:8] for s in secrets if len(s) >= 8}
    written = _all_bytes(root, skip)
    for path, data in written:
        for n in needles:
            assert n.encode() not in data, f"{n!r} in {path}"
    for r in outputs:
        for n in needles:
            assert n not in r.stdout + r.stderr, f"{n!r} printed"


# ------------------------------------------------------------------------------------------- secrets


def test_a_key_straddling_the_error_body_cut_leaves_no_prefix(fake_server, write_prompts, tmp_path):
    # the old client cut the body at 300 bytes and redacted after: the key started at byte 285, so its first
    # 15 characters survived in the error column (and from there in score output and staged shards)
    head = '{"error": {"message": "'
    pad = "x" * (285 - len(head))

    def respond(h, path, body):
        if "DENY" not in (body.get("prompt") or ""):
            return None
        return 401, {}, (head + pad + KEY + ' is not a valid key"}}').encode()

    fake_server.respond = respond
    prompts = write_prompts(["The doctor said", "DENY this one"])
    gens, scores, staged = tmp_path / "g.parquet", tmp_path / "s.parquet", tmp_path / "hub"
    outs = [
        run_biaskit(
            "generate",
            prompts,
            "--backend",
            "openai",
            "--base-url",
            fake_server.url,
            "--api-key-env",
            "MY_KEY",
            "--model",
            "m",
            "--out",
            gens,
            "--max-retries",
            "0",
            env=cli_env(MY_KEY=KEY),
        )
    ]
    assert outs[0].returncode == 0, outs[0].stderr
    err = pq.read_table(gens).column("error").to_pylist()[1]
    assert err.startswith("endpoint error: HTTP 401 from /completions: ") and "*** is not a valid key" in err
    outs.append(run_biaskit("score", gens, "--metrics", "vader", "--out", scores))
    outs.append(run_biaskit("hub", "stage", f"generations={gens}", f"scores={scores}", "--out", staged))
    assert all(r.returncode == 0 for r in outs), [r.stderr for r in outs]
    _assert_no_secret(tmp_path, [KEY], skip={prompts}, outputs=outs)


def test_a_key_in_a_normal_answer_never_reaches_a_text_column(fake_server, write_prompts, tmp_path):
    # HTTP 200 whose completion text quotes the key: it used to land in continuation/full_text
    def respond(h, path, body):
        text = f" my key is {KEY} and half of it {KEY[:12]}"
        return 200, {}, json.dumps({"choices": [{"index": 0, "text": text}]}).encode()

    fake_server.respond = respond
    prompts = write_prompts(["The doctor said", "A nurse is"])
    gens, staged = tmp_path / "g.jsonl", tmp_path / "hub"
    outs = [
        run_biaskit(
            "generate",
            prompts,
            "--backend",
            "openai",
            "--base-url",
            fake_server.url,
            "--api-key-env",
            "MY_KEY",
            "--model",
            "m",
            "--out",
            gens,
            env=cli_env(MY_KEY=KEY),
        ),
        run_biaskit("hub", "stage", f"generations={gens}", "--out", staged),
    ]
    assert all(r.returncode == 0 for r in outs), [r.stderr for r in outs]
    rows = [json.loads(x) for x in gens.read_text().splitlines()]
    assert [r["continuation"] for r in rows] == [" my key is *** and half of it ***"] * 2
    assert [r["error"] for r in rows] == [None, None]
    _assert_no_secret(tmp_path, [KEY], skip={prompts}, outputs=outs)


def test_data_columns_keep_credential_shaped_text_that_is_no_known_secret(tmp_path):
    from biaskit.io import read_table, write_table

    t = pa.table({"prompt_id": ["a"], "text": ["token=3 and api_key=abc in a story"], "error": ["token=abcdef1"]})
    write_table(t, tmp_path / "t.parquet")
    back = read_table(tmp_path / "t.parquet").to_pylist()[0]
    assert back["text"] == "token=3 and api_key=abc in a story"  # data stays data
    assert back["error"] == "token=***"  # an error text gets the full redaction


def test_one_list_of_secret_names_for_urls_and_text():
    from biaskit.secrets import SECRET_NAME_SUFFIXES, SECRET_QUERY_NAMES, is_secret_name, public_url, redact

    for name in (*SECRET_NAME_SUFFIXES, *SECRET_QUERY_NAMES):
        url = f"http://h.example/v1?a=1&{name}=Val-0123456789&b=2"
        assert is_secret_name(name), name
        assert public_url(url, register=False) == f"http://h.example/v1?a=1&{name}=***&b=2", name
        assert redact(f"endpoint {url} failed") == f"endpoint http://h.example/v1?a=1&{name}=***&b=2 failed", name
    # the generic names are credentials in a query only; prose keeps them
    assert redact("exit code=1; the key=value form") == "exit code=1; the key=value form"


def test_an_old_manifest_endpoint_with_key_never_reaches_the_card(tmp_path):
    # a generations table whose (older, unredacted) manifest records ?key=... : staged in a process that never
    # saw the key, it used to reach the dataset card and the staging manifest
    from biaskit.io import manifest_path

    gens = tmp_path / "g.parquet"
    pq.write_table(
        pa.table(
            {
                "prompt_id": ["a"],
                "text": ["x"],
                "source": ["s"],
                "language": ["en"],
                "sample_index": [0],
                "model": ["m"],
                "kind": ["generate"],
                "continuation": ["y"],
            }
        ),
        gens,
    )
    manifest_path(gens).write_text(
        json.dumps(
            {
                "command": "biaskit generate",
                "stage": "generations",
                "model": {"base_url": "https://h.example/v1?key=OLDSECRETVALUE42&code=OAUTHCODE9876"},
                "config": {"endpoint": "https://h.example/v1?api-version=2&key=OLDSECRETVALUE42"},
            }
        )
    )
    r = run_biaskit("hub", "stage", f"generations={gens}", "--out", tmp_path / "hub")
    assert r.returncode == 0, r.stderr
    card = (tmp_path / "hub" / "README.md").read_text()
    assert "key=***" in card and "code=***" in card
    _assert_no_secret(tmp_path / "hub", ["OLDSECRETVALUE42", "OAUTHCODE9876"], outputs=[r])


def test_a_ray_address_with_a_key_is_not_echoed_in_e161(write_prompts, tmp_path):
    prompts = write_prompts(["The doctor said"])
    r = run_biaskit(
        "generate",
        prompts,
        "--backend",
        "openai",
        "--base-url",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--engine",
        "ray",
        "--ray-address",
        "ray://user:RAYPASSWORD77@127.0.0.1:1/?a=1&key=RAYQUERYKEY99",
        "--out",
        tmp_path / "g.parquet",
        timeout=120,
    )
    assert r.returncode == 1 and "error[E161]" in r.stderr, r.stderr
    assert "ray://127.0.0.1:1" in r.stderr
    _assert_no_secret(tmp_path, ["RAYPASSWORD77", "RAYQUERYKEY99"], skip={prompts}, outputs=[r])


# ------------------------------------------------------------------------------------------- Ray


def test_a_dead_ray_address_fails_fast_with_e161(write_prompts, tmp_path):
    # Ray itself retries a dead GCS address for ever (only its own warnings): biaskit probes it first
    prompts = write_prompts(["The doctor said"])
    t0 = time.monotonic()
    r = run_biaskit(
        "generate",
        prompts,
        "--backend",
        "openai",
        "--base-url",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--engine",
        "ray",
        "--ray-address",
        "127.0.0.1:1",
        "--out",
        tmp_path / "g.parquet",
        timeout=120,
        env=cli_env(BIASKIT_RAY_CONNECT_TIMEOUT="5"),
    )
    assert r.returncode == 1, r.stderr
    assert "error[E161] could not connect to Ray at 127.0.0.1:1: Connection refused" in r.stderr
    assert time.monotonic() - t0 < 60
    assert not (tmp_path / "g.parquet").exists()


def test_ray_address_auto_joins_only_a_cluster_of_this_user(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    import os

    from biaskit.errors import BiaskitError
    from biaskit.pool import _resolve_address

    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    with pytest.raises(BiaskitError, match=r"\[E161\] --ray-address auto found no Ray cluster"):
        _resolve_address("auto")
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text("127.0.0.1:6390\n")
    assert _resolve_address("auto") == "127.0.0.1:6390"
    assert _resolve_address("10.0.0.5:6379") == "10.0.0.5:6379"
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)  # as if another user had run `ray start`
    with pytest.raises(BiaskitError, match=r"\[E161\] --ray-address auto would join a Ray cluster started by another user"):
        _resolve_address("auto")


def test_the_ray_extra_installs_ray_client():
    import tomllib

    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("ray[") and "client" in r.split("[")[1].split("]")[0] for r in extras["ray"]), extras["ray"]
    pytest.importorskip("ray")
    import grpc  # noqa: F401 - what `ray://` (Ray Client) needs


# ------------------------------------------------------------------------------------------- resume


def test_a_killed_openai_run_resumed_against_another_server_is_refused(fake_server, fake_server2, write_prompts, tmp_path):
    def respond(h, path, body):
        if "HANG" in (body.get("prompt") or ""):
            time.sleep(30)
        return None

    fake_server.respond = respond
    prompts = write_prompts(["a one", "b two", "c three", "HANG d", "e five"])
    out = tmp_path / "g.parquet"
    parts = tmp_path / "g.parquet.parts"
    args = ["generate", prompts, "--backend", "openai", "--model", "m", "--out", out, "--batch-size", "1", "--max-retries", "0"]
    proc = subprocess.Popen(biaskit_cmd(*args, "--base-url", fake_server.url), env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while len(list(parts.glob("part-*.parquet"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(list(parts.glob("part-*.parquet"))) == 3
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not out.exists()
    r = run_biaskit(*args, "--base-url", fake_server2.url)
    assert r.returncode == 1 and "error[E063]" in r.stderr and "endpoint" in r.stderr, r.stderr
    assert fake_server.url in r.stderr  # names the endpoint of the partial run
    assert not out.exists() and fake_server2.requests == []
    fake_server.respond = lambda h, path, body: None
    r = run_biaskit(*args, "--base-url", fake_server.url)
    assert r.returncode == 0, r.stderr
    t = pq.read_table(out)
    assert t.column("continuation").to_pylist() == [" a one-done", " b two-done", " c three-done", " HANG d-done", " e five-done"]
    assert json.loads((tmp_path / "g.parquet.manifest.json").read_text())["model"]["base_url"] == fake_server.url


# ------------------------------------------------------------------------------------------- data loss


def _prompts_table(path: Path, domains=("gender",)) -> Path:
    rows = [
        {
            "prompt_id": f"{d}-{i}",
            "text": f"Jane Doe {i} was ",
            "source": "bold",
            "language": "en",
            "domain": d,
            "group": "American_actresses",
            "bold_name": f"Jane_Doe_{i}",
        }
        for d in domains
        for i in range(2)
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_bold_export_never_replaces_files_it_did_not_write(tmp_path):
    table = _prompts_table(tmp_path / "p.parquet")
    out = tmp_path / "bold"
    (out / "prompts").mkdir(parents=True)
    theirs = out / "prompts" / "gender_prompt.json"
    theirs.write_text('{"American_actors": {"Jack_Doe": ["original BOLD prompt "]}}')
    notes = out / "notes.txt"
    notes.write_text("my notes")
    before = {p: p.read_bytes() for p in (theirs, notes)}
    r = run_biaskit("bold", "export", table, "--out", out)
    assert r.returncode == 1 and "error[E006]" in r.stderr and "--overwrite" in r.stderr, r.stderr
    assert {p: p.read_bytes() for p in (theirs, notes)} == before
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == ["notes.txt", "prompts/gender_prompt.json"]
    r = run_biaskit("bold", "export", table, "--out", out, "--overwrite")
    assert r.returncode == 0, r.stderr
    assert json.loads(theirs.read_text()) == {"American_actresses": {"Jane_Doe_0": ["Jane Doe 0 was "], "Jane_Doe_1": ["Jane Doe 1 was "]}}
    assert notes.read_bytes() == before[notes]


def test_bold_export_replaces_its_own_export_and_nothing_else(tmp_path):
    out = tmp_path / "bold"
    r = run_biaskit("bold", "export", _prompts_table(tmp_path / "p.parquet", ("gender", "race")), "--out", out)
    assert r.returncode == 0, r.stderr
    notes = out / "notes.txt"
    notes.write_text("mine")
    r = run_biaskit("bold", "export", _prompts_table(tmp_path / "p2.parquet", ("gender",)), "--out", out)
    assert r.returncode == 0, r.stderr  # an earlier export: replaced; the race file it wrote is gone, the notes stay
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "biaskit_bold_export.manifest",
        "notes.txt",
        "prompts/gender_prompt.json",
    ]
    assert notes.read_text() == "mine"
    (out / "prompts" / "gender_prompt.json").write_text('{"edited": {"by": ["hand "]}}')
    r = run_biaskit("bold", "export", tmp_path / "p2.parquet", "--out", out)
    assert r.returncode == 1 and "error[E006]" in r.stderr and "prompts/gender_prompt.json" in r.stderr, r.stderr
    assert (out / "prompts" / "gender_prompt.json").read_text() == '{"edited": {"by": ["hand "]}}'


def test_hub_restage_never_deletes_user_files_and_checks_the_marker(tmp_path):
    table = _prompts_table(tmp_path / "p.parquet")
    out = tmp_path / "hub"
    assert run_biaskit("hub", "stage", table, "--out", out).returncode == 0
    thesis = out / "thesis.tex"
    thesis.write_text("chapter 1")
    r = run_biaskit("hub", "stage", table, "--out", out)
    assert r.returncode == 1 and "error[E006]" in r.stderr and "thesis.tex" in r.stderr, r.stderr
    assert thesis.read_text() == "chapter 1"
    thesis.unlink()
    (out / "README.md").write_text("my own card")
    r = run_biaskit("hub", "stage", table, "--out", out)
    assert r.returncode == 1 and "were changed since: README.md" in r.stderr, r.stderr
    assert (out / "README.md").read_text() == "my own card"
    # a fake marker: a folder with `{}` as biaskit_manifest.json and a user's file
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "biaskit_manifest.json").write_text("{}")
    (fake / "thesis.tex").write_text("chapter 2")
    r = run_biaskit("hub", "stage", table, "--out", fake)
    assert r.returncode == 1 and "error[E006]" in r.stderr, r.stderr
    assert (fake / "thesis.tex").read_text() == "chapter 2"
    # an untouched staged folder is restaged
    (out / "README.md").unlink()
    import shutil

    shutil.rmtree(out)
    assert run_biaskit("hub", "stage", table, "--out", out).returncode == 0
    assert run_biaskit("hub", "stage", table, "--out", out).returncode == 0


# ------------------------------------------------------------------------------------------- CSV


def test_biaskit_reads_its_own_csv_output(fake_server, tmp_path):
    prompts = tmp_path / "p.parquet"
    pq.write_table(
        pa.table(
            {
                "prompt_id": ["a", "b"],
                "text": ["The doctor", "A nurse"],
                "source": ["wiki", "wiki"],
                "language": ["en", "en"],
                "retrieved_at": ["2026-11-30T05:00:00Z", "2026-11-30T05:00:00Z"],
                "page_id": [1, 2],
            }
        ),
        prompts,
    )
    gens, scores, again = tmp_path / "g.csv", tmp_path / "s.csv", tmp_path / "g2.csv"
    for argv in (
        ["generate", prompts, "--out", gens],
        ["schema", "generations", "--check", gens],
        ["score", gens, "-m", "vader", "--text-column", "continuation", "--out", scores],
        ["schema", "scores", "--check", scores],
        ["generate", gens, "--out", again],
    ):
        if argv[0] == "generate":
            argv = [*argv, "--backend", "openai", "--base-url", fake_server.url, "--model", "m"]
        r = run_biaskit(*argv)
        assert r.returncode == 0, (argv, r.stderr)
    from biaskit.io import read_table

    s = read_table(scores, "scores")
    assert s.schema.field("retrieved_at").type == pa.string()
    assert s.column("retrieved_at").to_pylist() == ["2026-11-30T05:00:00Z"] * 2
    assert s.column("vader_error").to_pylist() == [None, None]


def test_a_bom_crlf_csv_with_iso_dates_is_accepted(fake_server, tmp_path):
    p = tmp_path / "p.csv"
    p.write_bytes(
        b"\xef\xbb\xbfprompt_id,text,source,language,retrieved_at,when\r\n"
        b"a,The doctor,wiki,en,2026-11-30T05:00:00Z,2026-11-30\r\nb,A nurse,wiki,en,2026-11-30T05:00:00Z,2026-12-01\r\n"
    )
    out = tmp_path / "g.parquet"
    r = run_biaskit("generate", p, "--backend", "openai", "--base-url", fake_server.url, "--model", "m", "--out", out)
    assert r.returncode == 0, r.stderr
    t = pq.read_table(out)
    assert t.column("prompt_id").to_pylist() == ["a", "b"]
    assert t.column("retrieved_at").to_pylist() == ["2026-11-30T05:00:00Z"] * 2
    assert t.column("when").to_pylist() == ["2026-11-30", "2026-12-01"]  # a column no stage knows: still its text


def test_score_refuses_a_mistyped_table_before_scoring(tmp_path):
    p = tmp_path / "g.csv"
    p.write_text("prompt_id,text,source,language,page_id,continuation\na,x,wiki,en,abc,fine\nb,y,wiki,en,def,ok\n")
    out = tmp_path / "s.parquet"
    r = run_biaskit("score", p, "-m", "vader", "--text-column", "continuation", "--out", out)
    assert r.returncode == 1, r.stderr
    # the input is named (the old code scored every row, then refused the output s.parquet)
    assert f"error[E004] column 'page_id' in {p} (the table to score) has type string; the scores table needs int64" in r.stderr
    assert not out.exists() and "scored" not in r.stdout


def test_hub_stage_cuts_and_hashes_a_300_character_config_name(tmp_path):
    import hashlib

    table = _prompts_table(tmp_path / "p.parquet")
    name = "c" * 300
    r = run_biaskit("hub", "stage", f"{name}={table}", "--out", tmp_path / "hub")
    assert r.returncode == 0, r.stderr
    # MAX_NAME_LEN 64: 55 characters, "-", the first 8 hex digits of sha1 of the value
    want = "c" * 55 + "-" + hashlib.sha1(name.encode()).hexdigest()[:8]
    assert [p.name for p in (tmp_path / "hub" / "data").iterdir()] == [want]


# ------------------------------------------------------------------------------------------- card


def test_pretty_name_with_line_breaks_is_refused(tmp_path):
    table = _prompts_table(tmp_path / "p.parquet")
    r = run_biaskit("hub", "stage", table, "--out", tmp_path / "hub", "--pretty-name", "Title\nlicense: mit\n---\n## Fake")
    assert r.returncode == 1 and "error[E050] --pretty-name must be one line" in r.stderr, r.stderr
    assert not (tmp_path / "hub").exists()


def test_group_values_cannot_inject_card_sections(tmp_path):
    from biaskit.datasets.card import parse_card

    rows = [
        {"prompt_id": f"p{i}", "text": "x ", "source": "bold", "language": "en", "domain": "d`|x", "group": g}
        for i, g in enumerate(["## Fake section", "a\n## Injected\n- [x](http://evil)", "``tick`` | pipe"])
    ]
    table = tmp_path / "p.parquet"
    pq.write_table(pa.Table.from_pylist(rows), table)
    r = run_biaskit("hub", "stage", f"prompts={table}", "--out", tmp_path / "hub")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "hub" / "README.md").read_text()
    meta, body = parse_card(text)
    heads = [ln for ln in body.splitlines() if ln.startswith("#")]
    assert heads == ["# biaskit: prompts", "## How the data was built", "### `prompts`", "## Licence", "## Citations", "## Known limitations"]
    groups = next(ln for ln in body.splitlines() if ln.startswith("- Groups:"))
    # (sorted by value; a fence longer than the value's own backtick runs, the pipe escaped, line breaks as spaces)
    assert groups == "- Groups: 3 (`## Fake section` 1, ``` ``tick`` \\| pipe ``` 1, `a ## Injected - [x](http://evil)` 1)"


def test_configs_that_differ_only_in_case_get_distinct_folders(tmp_path):
    import hashlib

    rows = [{"prompt_id": f"p{i}", "text": "x ", "source": "bold", "language": "en", "gender": g} for i, g in enumerate(["Female", "female", "male"])]
    table = tmp_path / "p.parquet"
    pq.write_table(pa.Table.from_pylist(rows), table)
    r = run_biaskit("hub", "stage", f"p={table}", "--config-by", "gender", "--out", tmp_path / "hub")
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in (tmp_path / "hub" / "data").iterdir())
    assert names == sorted(["p-Female", f"p-female-{hashlib.sha1(b'female').hexdigest()[:8]}", "p-male"])
    assert len({n.lower() for n in names}) == 3
