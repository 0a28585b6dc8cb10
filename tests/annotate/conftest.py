"""One real Label Studio 1.23.2 server per test session (own venv .venv-ls, 127.0.0.1, temp SQLite dir).

The server venv is installed by scripts/services/label-studio.sh when missing. The first session also
keeps a migrated, empty data dir in .venv-ls/biaskit-template-<token hash> so later sessions start in a few seconds
instead of ~25 s of migrations. Annotators are real users of that server.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-ls"
TOKEN = "lsTestAdminToken0123456789abcdef"  # fixed admin token of the throw-away test server (random-looking: a
# registered secret masks its 8-character prefixes everywhere, and "biaskit-" would mask "biaskit-gendered-starter")
# the migrated template holds the admin user with TOKEN: a changed token gets a new template
TEMPLATE = VENV / f"biaskit-template-{hashlib.sha1(TOKEN.encode()).hexdigest()[:8]}"
ANNOTATORS = ("ann1@example.com", "ann2@example.com", "ann3@example.com")


@dataclass
class Server:
    url: str
    token: str
    data_dir: Path
    proc: subprocess.Popen


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LABEL_STUDIO", "DJANGO"))}
    env.update(
        {
            "LABEL_STUDIO_BASE_DATA_DIR": str(data_dir),
            "LABEL_STUDIO_USERNAME": "admin@example.com",
            "LABEL_STUDIO_PASSWORD": "admin-password-123",
            "LABEL_STUDIO_USER_TOKEN": TOKEN,
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
            "LATEST_VERSION_CHECK": "false",
            "COLLECT_ANALYTICS": "false",
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
        }
    )
    return env


def _start(data_dir: Path, wait=None) -> tuple[subprocess.Popen, str]:
    """Start Label Studio and wait for /health. ``wait``: the session's (deadline, message) helpers: the
    deadline grows with the machine's load (it took over 240 s at load 10-18 on 2 cores)."""
    port = _free_port()
    log = open(data_dir / "server.log", "wb")
    proc = subprocess.Popen(
        [
            str(VENV / "bin" / "label-studio"),
            "start",
            "--no-browser",
            "--internal-host",
            "127.0.0.1",
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
        ],
        env=_env(data_dir),
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=str(data_dir),
    )
    url = f"http://127.0.0.1:{port}"
    deadline_of, message = wait if wait is not None else (lambda b: (b, f"{b:.0f} s"), None)
    start = time.time()
    limit, why = deadline_of(240)
    while time.time() - start < limit:
        if proc.poll() is not None:
            raise RuntimeError(f"Label Studio exited ({proc.returncode}):\n" + (data_dir / "server.log").read_text()[-3000:])
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if b"UP" in r.read():
                    return proc, url
        except Exception:
            time.sleep(0.5)
        later = deadline_of(240)  # the load may rise while we wait: the deadline follows it up, never down
        if later[0] > limit:
            limit, why = later
    proc.terminate()
    what = message("Label Studio", time.time() - start, why) if message else f"Label Studio did not come up in {limit:.0f} s"
    raise RuntimeError(what + ":\n" + (data_dir / "server.log").read_text()[-3000:])


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture(scope="session")
def ls_server(service_wait):
    if os.environ.get("BIASKIT_SKIP_LABEL_STUDIO") == "1":
        pytest.skip("BIASKIT_SKIP_LABEL_STUDIO=1")
    if not (VENV / "bin" / "label-studio").exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "services" / "label-studio.sh")], check=True)
    if not (TEMPLATE / "label_studio.sqlite3").exists():
        tmp = Path(tempfile.mkdtemp(prefix="biaskit-ls-template-"))
        proc, _ = _start(tmp, service_wait)
        _stop(proc)
        TEMPLATE.mkdir(parents=True, exist_ok=True)
        for f in ("label_studio.sqlite3", ".env"):
            if (tmp / f).exists():
                shutil.copy2(tmp / f, TEMPLATE / f)
        shutil.rmtree(tmp, ignore_errors=True)
    data = Path(tempfile.mkdtemp(prefix="biaskit-ls-"))
    for f in ("label_studio.sqlite3", ".env"):
        if (TEMPLATE / f).exists():
            shutil.copy2(TEMPLATE / f, data / f)
    proc, url = _start(data, service_wait)
    try:
        yield Server(url, TOKEN, data, proc)
    finally:
        _stop(proc)
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def ls_client(ls_server):
    from biaskit.annotate.labelstudio import LabelStudio

    return LabelStudio(ls_server.url, ls_server.token)


@pytest.fixture(scope="session")
def annotator_ids(ls_client):
    return ls_client.ensure_annotators(list(ANNOTATORS))


_TOKENS_PY = """
import json
from rest_framework.authtoken.models import Token
from users.models import User
emails = json.loads(%r)
print("BIASKIT_TOKENS=" + json.dumps({u.email: Token.objects.get_or_create(user=u)[0].key for u in User.objects.filter(email__in=emails)}))
"""


@pytest.fixture(scope="session")
def annotator_clients(ls_server, annotator_ids):
    """email -> a client holding that annotator's OWN token, so annotations are made as that user.

    The community edition has no API for an admin to read another user's token; it is read once from the
    server's database with ``label-studio shell`` (the server's own venv and data dir).
    """
    import json

    from biaskit.annotate.labelstudio import LabelStudio

    code = _TOKENS_PY % json.dumps(list(annotator_ids))
    out = subprocess.run(
        [str(VENV / "bin" / "label-studio"), "shell"],
        input=code,
        env=_env(ls_server.data_dir),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(ls_server.data_dir),
    )
    line = [ln for ln in out.stdout.splitlines() if "BIASKIT_TOKENS=" in ln]
    assert line, out.stdout[-2000:] + out.stderr[-2000:]
    tokens = json.loads(line[0].split("BIASKIT_TOKENS=", 1)[1])
    assert sorted(tokens) == sorted(annotator_ids)
    return {e: LabelStudio(ls_server.url, t) for e, t in tokens.items()}


def make_scores(n_groups: int = 3, per_group: int = 40, seed: int = 0):
    """A small scores table: BOLD-like rows with names, vader columns spread over [-1, 1]."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    names = ["Ada Lovelace", "Jacob Zachar", "Maria Lopez", "Chen Wei", "Omar Haddad"]
    rows = []
    for g in range(n_groups):
        for i in range(per_group):
            name = names[(g + i) % len(names)]
            comp = float(np.round(rng.uniform(-1, 1), 4))
            lab = "positive" if comp >= 0.05 else "negative" if comp <= -0.05 else "neutral"
            rows.append(
                {
                    "prompt_id": f"p{g}-{i}",
                    "text": f"{name} was ",
                    "continuation": f"a person {i} in group {g}; {name.split()[1]} said so.",
                    "model": "m",
                    "kind": "generate",
                    "sample_index": 0,
                    "source": "bold",
                    "group": f"g{g}",
                    "term": name,
                    "vader_compound": comp,
                    "vader_label": lab,
                    "vader_error": None,
                }
            )
    return pa.Table.from_pylist(rows)


@pytest.fixture
def scores():
    return make_scores()


@pytest.fixture
def scores_factory():
    return make_scores
