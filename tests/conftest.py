"""Session-wide test settings: never reach a hub, never write outside tmp dirs."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under scripts/test.sh (BIASKIT_STRICT_SKIPS=1, as in CI) a skipped test is a failure.

    The set-up script installs every service the suite needs (MediaWiki, Label Studio, Chromium), so a
    skip there means a missing install step, which must not pass as green.
    """
    outcome = yield
    rep = outcome.get_result()
    if rep.skipped and os.environ.get("BIASKIT_STRICT_SKIPS") == "1" and not hasattr(rep, "wasxfail"):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        rep.outcome = "failed"
        rep.longrepr = f"skipped under BIASKIT_STRICT_SKIPS=1 (scripts/test.sh installs every service): {reason}"


@pytest.fixture(scope="session")
def quick_demo(tmp_path_factory):
    """One quick `biaskit demo` run through the CLI, shared by every test that checks the whole run.

    Returns (run_dir, ctx) where ctx is a DemoContext rebuilt from the run's manifest.json.
    """
    import json

    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.demo import DemoContext

    out = tmp_path_factory.mktemp("demo") / "run"
    r = CliRunner().invoke(app, ["--quiet", "demo", "--out", str(out), "--quick", "--seed", "3"])
    assert r.exit_code == 0, r.output
    man = json.loads((out / "manifest.json").read_text())
    ctx = DemoContext(run_dir=out, seed=3, quick=True)
    for name, rel in man["tables"].items():
        ctx.add(name, out / rel)
    ctx.summary = [tuple(s) for s in man["summary"]]
    ctx.info = man["info"]
    ctx.info["cli_output"] = r.output
    return out, ctx
