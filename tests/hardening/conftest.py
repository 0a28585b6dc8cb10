"""Fixtures of the hardening tests (helpers live in hardening_util.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # --import-mode=importlib: make hardening_util importable

from hardening_util import FakeServer  # noqa: E402


@pytest.fixture
def fake_server():
    s = FakeServer()
    yield s
    s.close()


@pytest.fixture
def fake_server2():
    s = FakeServer()
    yield s
    s.close()


@pytest.fixture
def write_prompts(tmp_path):
    def make(texts, name="prompts.jsonl") -> Path:
        p = tmp_path / name
        p.write_text("".join(json.dumps({"prompt_id": f"p{i:03d}", "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
        return p

    return make
