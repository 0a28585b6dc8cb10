"""Shared pieces of the hardening tests: a scriptable fake OpenAI-compatible server on 127.0.0.1
and a way to run the real ``biaskit`` command in a separate process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SRC = os.environ.get("BIASKIT_TEST_SRC") or str(Path(__file__).resolve().parents[2] / "src")  # (override: run against another checkout)


class FakeServer:
    """A completions endpoint whose answer per request comes from ``self.respond(handler, path, body)``.

    ``respond`` returns (status, headers, body bytes) or None to send the default answer: 200 with text
    ``" <prompt>-done"``. Every request is recorded in ``self.requests`` as
    ``{"path", "query", "auth", "body"}``.
    """

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.respond = lambda h, path, body: None
        self.lock = threading.Lock()
        server = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                path, _, query = self.path.partition("?")
                with server.lock:
                    server.requests.append({"path": path, "query": query, "auth": self.headers.get("Authorization"), "body": body})
                res = server.respond(self, path, body)
                if res is None:
                    prompt = body.get("prompt") or (body.get("messages") or [{}])[-1].get("content", "")
                    res = (200, {}, json.dumps({"choices": [{"index": 0, "text": f" {prompt.strip()}-done"}]}).encode())
                if res == "handled":
                    return
                status, headers, data = res
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(len(data)))
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                try:
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                if "Content-Length" in headers:  # a lying Content-Length: end the connection early
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.url = self.origin + "/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def prompts_seen(self) -> list[str]:
        return [r["body"].get("prompt") for r in self.requests if r["path"].endswith("/completions")]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def cli_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(
        {
            "PYTHONPATH": SRC + os.pathsep + env.get("PYTHONPATH", ""),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "MPLBACKEND": "Agg",
        }
    )
    env.update(extra)
    return env


def biaskit_cmd(*args: str) -> list[str]:
    return [sys.executable, "-c", "from biaskit.cli import main; main()", *map(str, args)]


def run_biaskit(*args: str, env: dict | None = None, cwd: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    """The real command line in a new process (so no secret or lock is shared with the test process)."""
    return subprocess.run(biaskit_cmd(*args), env=env or cli_env(), cwd=cwd, capture_output=True, text=True, timeout=timeout)
