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


@pytest.fixture
def tcp_not_ray():
    """Plain TCP servers on 127.0.0.1 that are not Ray: ``start(mode)`` -> port; ``silent`` accepts and says nothing,
    ``junk`` answers with a line of text (as an HTTP/1 or SSH server would), ``close`` hangs up at once."""
    import socket
    import threading

    socks, stop = [], threading.Event()

    def start(mode: str) -> int:
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        srv.settimeout(0.2)
        socks.append(srv)

        def serve():
            held = []
            while not stop.is_set():
                try:
                    conn, _ = srv.accept()
                except OSError:
                    continue
                if mode == "junk":
                    conn.sendall(b"SSH-2.0-OpenSSH_9.6 not ray\r\n")
                if mode == "close":
                    conn.close()
                else:
                    held.append(conn)  # keep it open, answering nothing more
            for c in held:
                c.close()

        threading.Thread(target=serve, daemon=True).start()
        return srv.getsockname()[1]

    yield start
    stop.set()
    for s in socks:
        s.close()
