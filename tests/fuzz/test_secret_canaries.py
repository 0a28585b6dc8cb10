"""Secret canaries in every place a secret can enter biaskit, searched in every byte written.

Places: the environment (HF_TOKEN, OPENAI_API_KEY, LABEL_STUDIO_API_KEY and the variable named by
--api-key-env), the endpoint URL (user:password, credential query values ``api_key=``, ``key=``, ``code=``),
what a server sends back (error bodies that echo the request, with a canary straddling the old 300-byte cut, and
normal HTTP 200 completions that quote the key) and the Ray address (``ray://user:pw@host?key=``). A chain of
real commands runs as separate processes (generate -> score -> report, annotate sample, stats aggregate,
hub stage); then no canary, and no run of its first 8 characters, may be in any file under the run folder or in
anything printed."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardening"))

from hardening_util import FakeServer, cli_env, run_biaskit  # noqa: E402

ENV = {
    "HF_TOKEN": "hf_canaryHFtoken0123456789abcdef",
    "OPENAI_API_KEY": "sk-canaryOPENAIkey0123456789",
    "LABEL_STUDIO_API_KEY": "lsCanaryLabelStudio0123456789",
    "MY_ENDPOINT_KEY": "myCanaryEndpointKey-0123456789",
}
URL_PASSWORD = "urlCanaryPassword-01234"
QUERY = {"api_key": "qkCanaryApiKey-0123456", "key": "keyCanaryQuery-0123456", "code": "codeCanaryQuery-012345"}
RAY = {"password": "rayCanaryPassword-0123", "key": "rayCanaryQueryKey-0123"}
BASIC = base64.b64encode(f"user:{URL_PASSWORD}".encode()).decode()
CANARIES = [*ENV.values(), URL_PASSWORD, *QUERY.values(), *RAY.values(), BASIC]


def _echo_everything(server: FakeServer) -> None:
    """The server quotes what it got (auth header, query, the env token) in error bodies and in completions."""

    def respond(h, path, body):
        prompt = body.get("prompt") or ""
        quoted = f"auth={h.headers.get('Authorization')} query={server.requests[-1]['query']} hf={ENV['HF_TOKEN']}"
        if "DENY" in prompt:
            head = '{"error": {"message": "'
            pad = "x" * (290 - len(head))  # the key starts 10 bytes before the old 300-byte cut
            return 401, {}, (head + pad + ENV["MY_ENDPOINT_KEY"] + " " + quoted.replace('"', "'") + '"}}').encode()
        return 200, {}, json.dumps({"choices": [{"index": 0, "text": f" said {quoted}"}]}).encode()

    server.respond = respond


def _check(root: Path, skip: set[Path], outputs) -> None:
    needles = set(CANARIES) | {c[:8] for c in CANARIES}
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and p not in skip]
    assert len(files) >= 15, files
    for p in files:
        data = p.read_bytes()
        for n in needles:
            assert n.encode() not in data, f"{n!r} in {p}"
    for r in outputs:
        for n in needles:
            assert n not in r.stdout + r.stderr, f"{n!r} printed by {r.args[3:6]}"


def test_secret_canaries_never_reach_a_written_byte(tmp_path):
    server = FakeServer()
    try:
        _echo_everything(server)
        prompts = tmp_path / "prompts.jsonl"
        prompts.write_text(
            "".join(
                json.dumps({"prompt_id": f"p{i}", "text": t, "source": "bold", "language": "en", "domain": "d", "group": f"g{i % 2}"}) + "\n"
                for i, t in enumerate(["The doctor said", "DENY this one", "A nurse is", "DENY again"])
            )
        )
        env = cli_env(**ENV)
        q = "&".join(f"{k}={v}" for k, v in QUERY.items())
        base = f"http://user:{URL_PASSWORD}@127.0.0.1:{server.port}/v1?{q}&api-version=2"
        gens, scores = tmp_path / "gens.parquet", tmp_path / "scores.csv"
        runs = [
            (
                "generate",
                prompts,
                "--backend",
                "openai",
                "--base-url",
                base,
                "--api-key-env",
                "MY_ENDPOINT_KEY",
                "--model",
                "m",
                "--out",
                gens,
                "--max-retries",
                "0",
            ),
            ("score", gens, "--metrics", "vader", "--text-column", "continuation", "--out", scores),
            ("report", scores, "--out", tmp_path / "report", "--n-boot", "5"),
            (
                "annotate",
                "sample",
                scores,
                "--round",
                "r1",
                "--n",
                "2",
                "--out",
                tmp_path / "smp.parquet",
                "--tasks-out",
                tmp_path / "tasks.csv",
                "--ledger",
                tmp_path / "ledger.jsonl",
            ),
            ("stats", "aggregate", scores, "--labels", "vader_label", "--n-boot", "5", "--out", tmp_path / "agg.csv"),
            ("hub", "stage", f"generations={gens}", f"scores={scores}", "--out", tmp_path / "hub"),
            (
                "generate",
                prompts,
                "--backend",
                "openai",
                "--base-url",
                base,
                "--model",
                "m",
                "--engine",
                "ray",
                "--ray-address",
                f"ray://user:{RAY['password']}@127.0.0.1:1/?a=1&key={RAY['key']}",
                "--out",
                tmp_path / "ray.parquet",
            ),
        ]
        outputs = []
        for argv in runs:
            r = run_biaskit(*argv, env=env, cwd=str(tmp_path))
            outputs.append(r)
            if argv[-1] != tmp_path / "ray.parquet":
                assert r.returncode == 0, (argv[:2], r.stderr)
        assert outputs[-1].returncode == 1 and "error[E161]" in outputs[-1].stderr, outputs[-1].stderr
        # the canaries did reach biaskit: the server saw them, and the rows carry their redacted traces
        assert {x["auth"] for x in server.requests} == {f"Bearer {ENV['MY_ENDPOINT_KEY']}"}
        text = (tmp_path / "hub" / "README.md").read_text() + gens.read_bytes().decode("utf-8", "replace")
        assert "***" in text
        _check(tmp_path, {prompts}, outputs)
    finally:
        server.close()
