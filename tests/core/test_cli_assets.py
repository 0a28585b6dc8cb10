import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit import assets
from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.io import write_table

runner = CliRunner()


def test_help_lists_command_groups():
    r = runner.invoke(app, ["--help"])
    assert r.exit_code == 0
    for cmd in ("demo", "schema", "assets"):
        assert cmd in r.output


def test_user_error_is_one_line_and_exit_1(tmp_path):
    bad = tmp_path / "p.parquet"
    write_table(pa.table({"prompt_id": ["a"]}), bad)
    r = runner.invoke(app, ["schema", "prompts", "--check", str(bad)])
    assert r.exit_code == 1
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error[E001]") and "text" in lines[0]
    assert "Traceback" not in r.output


def test_demo_out_that_is_a_file_is_one_line_error(tmp_path):
    # `biaskit demo --out notes.txt` (an existing file) ended in a FileExistsError traceback
    f = tmp_path / "notes.txt"
    f.write_text("keep me\n")
    r = runner.invoke(app, ["demo", "--out", str(f), "--quick"])
    assert r.exit_code == 1
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error[E006]") and "notes.txt" in lines[0] and "fix:" in lines[0]
    assert f.read_text() == "keep me\n"


def test_schema_check_ok(tmp_path):
    good = tmp_path / "p.jsonl"
    write_table([{"prompt_id": "a", "text": "t", "source": "s", "language": "en"}], good)
    r = runner.invoke(app, ["schema", "prompts", "--check", str(good)])
    assert r.exit_code == 0 and "valid prompts table (1 rows" in r.output


def test_asset_resolution_order_path_then_package_then_error(tmp_path, monkeypatch):
    # 1. explicit path wins
    f = tmp_path / "model.gguf"
    f.write_bytes(b"x")
    assert assets.resolve("smollm2-135m", f).origin == "path"
    # env var counts as an explicit path
    monkeypatch.setenv("BIASKIT_SMOLLM2_PATH", str(f))
    assert assets.resolve("smollm2-135m").path == f
    monkeypatch.delenv("BIASKIT_SMOLLM2_PATH")
    # 2. an installed offline package
    pkg = tmp_path / "site" / "fakepkg_biaskit"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "w.bin").write_bytes(b"v")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    a = assets.Asset(
        "fake-asset", "embeddings", "test", packages=(assets.OfflinePackage("fakepkg-biaskit", "fakepkg_biaskit", "w.bin"),), hub_id="org/fake"
    )
    monkeypatch.setitem(assets.ASSETS, "fake-asset", a)
    r = assets.resolve("fake-asset")
    assert r.origin == "package" and r.path == pkg / "w.bin"
    # 3. offline and no package -> one error naming all three options
    b = assets.Asset(
        "fake-missing",
        "model",
        "test",
        env_var="FAKE_PATH",
        packages=(assets.OfflinePackage("nothere-pkg", "nothere_pkg_xyz"),),
        hub_id="org/missing",
    )
    monkeypatch.setitem(assets.ASSETS, "fake-missing", b)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(BiaskitError) as ei:
        assets.resolve("fake-missing")
    msg = str(ei.value)
    assert ei.value.code == "E010" and "FAKE_PATH" in msg and "pip install nothere-pkg" in msg and "org/missing" in msg
    # online: falls through to the hub id for the library to download
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    monkeypatch.delenv("BIASKIT_OFFLINE", raising=False)
    monkeypatch.setattr(assets, "_NET", {"reachable": True})  # online = the Hub answers the one probe
    assert assets.resolve("fake-missing").origin == "hub"


def test_download_checks_sha256(tmp_path, monkeypatch):
    import hashlib
    import http.server
    import threading

    payload = b"lemma\tcategory\n"
    (tmp_path / "lex.tsv").write_bytes(payload)
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **k)  # noqa: E731
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))
        url = f"http://127.0.0.1:{srv.server_port}/lex.tsv"
        good = assets.Asset("lex-good", "lexicon", "t", url=url, sha256=hashlib.sha256(payload).hexdigest())
        assert assets.download(good).read_bytes() == payload
        bad = assets.Asset("lex-bad", "lexicon", "t", url=url, sha256="0" * 64)
        with pytest.raises(BiaskitError, match="E012"):
            assets.download(bad)
        assert not any((tmp_path / "cache" / "downloads" / "lex-bad").glob("lex.tsv"))
    finally:
        srv.shutdown()


def test_english_spacy_pipeline_loads_offline():
    nlp = assets.load_spacy("en")
    doc = nlp("She is a nurse. He is a doctor.")
    assert [s.text for s in doc.sents] == ["She is a nurse.", "He is a doctor."]
