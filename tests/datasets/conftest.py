"""A local fake of the Hugging Face Hub HTTP API (the endpoints huggingface_hub uses to create a dataset
repo, list its tree and commit files through the LFS "basic" transfer), recording every request.

Faults can be injected: ``hub.faults.append(Fault("PUT", "/upload/<oid>", times=1))`` makes the server read
half of the request body and then drop the connection, ``times`` times.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest


@dataclass
class Fault:
    method: str
    path_contains: str
    times: int = 1
    action: str = "drop"  # drop (close the connection mid-body) or 503 / 429
    hits: int = 0


@dataclass
class Request:
    method: str
    path: str
    headers: dict
    body: bytes
    dropped: bool = False


@dataclass
class FakeHub:
    base: str = ""
    requests: list[Request] = field(default_factory=list)
    repos: dict = field(default_factory=dict)  # repo_id -> {"private": bool, "branches": {rev: {path: bytes}}, "commits": [...]}
    blobs: dict = field(default_factory=dict)  # sha256 -> bytes (LFS storage)
    faults: list[Fault] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def files(self, repo_id: str, rev: str = "main") -> dict[str, bytes]:
        return self.repos[repo_id]["branches"][rev]

    def puts(self) -> list[str]:
        return [r.path.rsplit("/", 1)[-1] for r in self.requests if r.method == "PUT"]

    def commits(self) -> list[dict]:
        return [r for r in self.requests if r.method == "POST" and "/commit/" in r.path and not r.dropped]


def _git_oid(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()


def _make_handler(hub: FakeHub):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):  # quiet
            pass

        def _send(self, code: int, obj=None, headers: dict | None = None):
            body = b"" if obj is None else json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _handle(self):
            url = urlparse(self.path)
            path, query = url.path, parse_qs(url.query)
            n = int(self.headers.get("Content-Length") or 0)
            fault = None
            with hub.lock:
                for f in hub.faults:
                    if f.method == self.command and f.path_contains in path and f.hits < f.times:
                        f.hits += 1
                        fault = f
                        break
            if fault is not None and fault.action == "drop":
                self.rfile.read(n // 2)
                hub.requests.append(Request(self.command, path, dict(self.headers), b"", dropped=True))
                self.close_connection = True
                import socket

                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            body = self.rfile.read(n) if n else b""
            hub.requests.append(Request(self.command, path, dict(self.headers), body))
            if fault is not None:
                return self._send(int(fault.action), {"error": "injected"}, {"Retry-After": "0"} if fault.action == "429" else None)
            if path.startswith("/api/") and path != "/api/validate-yaml" and "authorization" not in {k.lower() for k in self.headers}:
                return self._send(401, {"error": "no token"})
            return self._route(path, query, body)

        do_GET = do_POST = do_PUT = _handle

        def _repo(self, ns, name):
            return hub.repos.get(f"{ns}/{name}")

        def _route(self, path, query, body):
            parts = path.strip("/").split("/")
            if path == "/api/repos/create":
                p = json.loads(body)
                rid = f"{p['organization']}/{p['name']}" if p.get("organization") else p["name"]
                url = f"{hub.base}/datasets/{rid}"
                if rid in hub.repos:
                    return self._send(409, {"error": "You already created this dataset repo", "url": url})
                hub.repos[rid] = {"private": p.get("visibility") == "private" or bool(p.get("private")), "branches": {"main": {}}, "commits": []}
                return self._send(200, {"url": url, "name": rid})
            if path == "/api/validate-yaml":
                return self._send(200, {"errors": [], "warnings": []})
            if parts[:2] == ["api", "datasets"] and len(parts) >= 6:
                ns, name, op, rev = parts[2], parts[3], parts[4], "/".join(parts[5:])
                repo = self._repo(ns, name)
                if repo is None:
                    return self._send(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
                if op == "branch":
                    if rev in repo["branches"]:
                        return self._send(409, {"error": "branch exists"})
                    repo["branches"][rev] = dict(repo["branches"]["main"])
                    return self._send(200, {})
                tree = repo["branches"].get(rev.split("/")[0])
                if tree is None:
                    return self._send(404, {"error": "Revision not found"}, {"X-Error-Code": "RevisionNotFound"})
                if op == "tree":
                    out = []
                    for p_, data in sorted(tree.items()):
                        e = {"type": "file", "oid": _git_oid(data), "size": len(data), "path": p_}
                        if p_.endswith(".parquet"):
                            e["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
                        out.append(e)
                    return self._send(200, out)
                if op == "preupload":
                    files = []
                    for f in json.loads(body)["files"]:
                        lfs = f["path"].endswith(".parquet")
                        d = {"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False}
                        if f["path"] in tree:
                            data = tree[f["path"]]
                            d["oid"] = hashlib.sha256(data).hexdigest() if lfs else _git_oid(data)
                        files.append(d)
                    return self._send(200, {"files": files})
                if op == "commit":
                    lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
                    new = dict(tree)
                    for item in lines:
                        v = item["value"]
                        if item["key"] == "file":
                            new[v["path"]] = base64.b64decode(v["content"])
                        elif item["key"] == "lfsFile":
                            if v["oid"] not in hub.blobs:
                                return self._send(422, {"error": f"LFS object {v['oid']} not uploaded"})
                            new[v["path"]] = hub.blobs[v["oid"]]
                    repo["branches"][rev] = new
                    oid = hashlib.sha1(body).hexdigest()
                    repo["commits"].append({"oid": oid, "summary": lines[0]["value"]["summary"], "files": [x["value"]["path"] for x in lines[1:]]})
                    return self._send(200, {"commitUrl": f"{hub.base}/datasets/{ns}/{name}/commit/{oid}", "commitOid": oid, "pullRequestUrl": None})
                if op == "revision":
                    return self._send(
                        200,
                        {
                            "id": f"{ns}/{name}",
                            "sha": repo["commits"][-1]["oid"] if repo["commits"] else "0" * 40,
                            "siblings": [{"rfilename": p_} for p_ in tree],
                        },
                    )
            if path.endswith(".git/info/lfs/objects/batch"):
                req = json.loads(body)
                objs = []
                for o in req["objects"]:
                    d = {"oid": o["oid"], "size": o["size"], "authenticated": True}
                    if o["oid"] not in hub.blobs:
                        d["actions"] = {"upload": {"href": f"{hub.base}/upload/{o['oid']}"}, "verify": {"href": f"{hub.base}/verify/{o['oid']}"}}
                    objs.append(d)
                return self._send(200, {"transfer": "basic", "objects": objs})
            if parts[0] == "upload" and self.command == "PUT":
                oid = parts[1]
                if hashlib.sha256(body).hexdigest() != oid:
                    return self._send(400, {"error": "sha256 mismatch"})
                hub.blobs[oid] = body
                return self._send(200, {})
            if parts[0] == "verify":
                return self._send(200 if parts[1] in hub.blobs else 404, {})
            return self._send(404, {"error": f"no route {self.command} {path}"})

    return H


@pytest.fixture
def fake_hub(monkeypatch):
    """A running fake Hub on 127.0.0.1; huggingface_hub is switched online and off Xet for the test."""
    import huggingface_hub.constants as hc

    hub = FakeHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(hub))
    server.daemon_threads = True
    hub.base = f"http://127.0.0.1:{server.server_address[1]}"
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hc, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(hc, "ENDPOINT", hub.base)
    monkeypatch.setenv("HF_ENDPOINT", hub.base)
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
