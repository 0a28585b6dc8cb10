"""`annotate push` / `annotate pull` without a server: the wrong-token hint shows
LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true ("true" is a switch, not a secret) while the token stays hidden, and each
command prints its summary once (the library logs it at debug level only; the CLI prints it)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from label_studio_sdk.core.api_error import ApiError
from typer.testing import CliRunner

from biaskit.annotate import labelstudio as lsmod
from biaskit.annotate.sampling import sample_round
from biaskit.cli import app
from biaskit.io import write_table
from biaskit.secrets import redact

from .conftest import make_scores

TOKEN = "ls-token-do-not-print-4d3c2b1a"


@pytest.fixture
def samples(tmp_path, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    s, _ = sample_round(make_scores(), round="r1", task="sentiment", n=4, seed=0)
    path = tmp_path / "samples.parquet"
    write_table(s, path, stage="samples")
    return path


class FakeLabelStudio:
    """The calls push and pull make, answered here: an empty project that takes every task."""

    def __init__(self, url=None, token=None, **_kw):
        self.url = url

    def ensure_project(self, title, task, *, annotators, description=""):
        return SimpleNamespace(id=7, title=title), True

    def existing_sample_ids(self, project_id):
        return {}

    def import_tasks(self, project_id, tasks):
        pass

    def get_project(self, title):
        return SimpleNamespace(id=7, title=title)

    def export(self, project_id):
        return []

    def users(self):
        return {}


def test_the_wrong_token_hint_shows_the_legacy_switch_and_hides_the_token(samples, tmp_path, monkeypatch):
    def refuse():
        raise ApiError(status_code=401, headers={}, body={"detail": f"invalid token {TOKEN}"})

    def rejected(self, *_a, **_k):
        return self.call("list projects", refuse)

    monkeypatch.setattr(lsmod.LabelStudio, "ensure_project", rejected)
    r = CliRunner().invoke(app, ["annotate", "push", str(samples), "--url", "http://127.0.0.1:9", "--ledger", str(tmp_path / "l.jsonl")])
    assert r.exit_code == 1 and "error[E090]" in r.output and "rejected the token" in r.output
    assert "need LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true on the server" in r.output and TOKEN not in r.output
    # the redaction keeps switches and still hides values of secret-named settings
    assert redact("LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true; API_KEY=false.") == "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true; API_KEY=false."
    assert redact("LABEL_STUDIO_API_TOKEN=truely-secret-1 token=no1") == "LABEL_STUDIO_API_TOKEN=*** token=***"


def test_push_and_pull_print_their_summary_once(samples, tmp_path, monkeypatch):
    monkeypatch.setattr(lsmod, "LabelStudio", FakeLabelStudio)
    led = tmp_path / "l.jsonl"
    r = CliRunner().invoke(app, ["annotate", "push", str(samples), "--url", "http://ls.test", "--ledger", str(led)])
    assert r.exit_code == 0, r.output
    assert r.output.count("imported 4 task(s) in 1 batch(es)") == 1, r.output
    out = tmp_path / "ann.parquet"
    r = CliRunner().invoke(app, ["annotate", "pull", str(samples), "--url", "http://ls.test", "--out", str(out), "--ledger", str(led)])
    assert r.exit_code == 0, r.output
    assert r.output.count("0 annotations kept of 0 received (0 items, 0 annotators); dropped: none") == 1, r.output
