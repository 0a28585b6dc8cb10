"""Re-probe of issue 43's sixteen cases: each case and variants of it (other commands reading the same kind of input,
other bad values) run through the real command line, each in its own temporary folder, and each outcome classified.

    PYTHONPATH=src python bench/probe_inputs.py [--only CASE,...] [--jobs 2] [--keep DIR] [--no-models]

Outcomes: ``correct`` (the coded error the input deserves, or the right result), ``data loss`` (a user's file changed
or gone), ``leak`` (a planted canary, or its first 8 characters, printed or in any byte of any file written: outputs,
caches, ledgers), ``traceback`` (an uncaught exception, a crash, a kill, exit 1 without a coded ``error[E...]`` line),
``silent wrong`` (exit 0 where the input is bad, or a result that is not the right one) and ``false refusal`` (a coded
error for a valid input). Every probe runs with fake secrets in the environment (``HF_TOKEN``, ``OPENAI_API_KEY``,
``LABEL_STUDIO_API_KEY``); the server probes put ``user:password@`` and ``?token=`` in the endpoint URL and a key in
the data, and the server quotes every request back (its Authorization header included).

The local chat-model probes (case 13) build an untrained tiny GPT-2 from the runner tests' saved tokenizer (no
download); ``--no-models`` leaves them out. Prints one line per probe and the counts per outcome; exits 1 when any
outcome is not ``correct``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
TOKENIZER = ROOT / "tests/evaluate/runners/data"

ENV = {
    "HF_TOKEN": "hf_probeCanaryHF0123456789abcdef",
    "OPENAI_API_KEY": "sk-probeCanaryOpenAI0123456789",
    "LABEL_STUDIO_API_KEY": "lsProbeCanary0123456789abcd",
}
URL_PW, URL_TOKEN = "urlProbePassword-0123456", "urlProbeToken-0123456789"
DATA_KEY = ENV["LABEL_STUDIO_API_KEY"]  # a key that is in the environment, planted in data values too
CANARIES = [*ENV.values(), URL_PW, URL_TOKEN]
THESIS = b"\\chapter{Outside} the user's thesis, not biaskit's"
DEEP = "[" * 100_000 + "]" * 100_000
CORRECT = "correct"
OUTCOMES = ("data loss", "leak", "traceback", "silent wrong", "false refusal", CORRECT, "probe error")


# ----------------------------------------------------------------------------------------------- the echo server


class Echo:
    """An OpenAI-compatible endpoint on 127.0.0.1. ``mode`` (from the request's text) picks a reply: by default a
    valid one that quotes the request back; others break the schema in one way."""

    def __init__(self) -> None:
        echo = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                self._send(200, json.dumps({"object": "list", "data": [{"id": "m", "root": f"/models/{DATA_KEY}"}]}).encode())

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                status, data = echo.reply(self.path.partition("?")[0], body, f"{self.headers.get('Authorization')} {raw.decode('utf-8', 'replace')}")
                self._send(status, data)

            def _send(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self) -> str:
        return f"http://bob:{URL_PW}@127.0.0.1:{self.port}/v1?token={URL_TOKEN}"

    @staticmethod
    def _mode(body: dict) -> str:
        text = json.dumps(body)
        for mode in BAD_REPLIES:
            if f"MODE-{mode}" in text:
                return mode
        return "good"

    def reply(self, path: str, body: dict, echo: str) -> tuple[int, bytes]:
        mode = self._mode(body)
        if mode == "http500":
            return 500, f"upstream failed: {echo}".encode()
        if mode == "deep":
            return 200, DEEP.encode()
        if path.endswith("/completions") and not path.endswith("/chat/completions"):
            prompt = body.get("prompt") or ""
            lp = {"tokens": [prompt[:1], prompt[1:]], "token_logprobs": [None, BAD_REPLIES.get(mode, -1.5)], "text_offset": [0, 1]}
            usage = {"prompt_tokens": 2, "completion_tokens": BAD_USAGE.get(mode, 1)}
            text = prompt if body.get("echo") else f" said {echo}"  # likelihood asks for the prompt echoed and scored
            return 200, json.dumps({"choices": [{"text": text, "logprobs": lp}], "usage": usage}).encode()
        labels = _task_labels(body)
        tops = [{"token": t, "logprob": -0.2 - k} for k, t in enumerate(labels)]
        if mode in ("inf", "plus5", "true"):
            tops[0]["logprob"] = BAD_REPLIES[mode]
        if mode == "dup":
            tops.append(dict(tops[0]))
        content = [{"token": labels[0], "logprob": tops[0]["logprob"], "top_logprobs": tops}]
        usage = {"prompt_tokens": 5, "completion_tokens": BAD_USAGE.get(mode, 1)}
        choice = {"message": {"role": "assistant", "content": f"{labels[0]} {echo}"}, "logprobs": {"content": content}}
        return 200, json.dumps({"choices": [choice], "usage": usage, "system_fingerprint": echo}).encode()


#: the log-probability a reply carries in each bad mode (and the other bad modes' names)
BAD_REPLIES: dict[str, object] = {"inf": math.inf, "plus5": 5.0, "true": True, "dup": -0.2, "usage_half": -0.2, "usage_word": -0.2}
BAD_REPLIES.update({"http500": None, "deep": None})
BAD_USAGE: dict[str, object] = {"usage_half": 1.5, "usage_word": "one"}


def _task_labels(body: dict) -> list[str]:
    text = json.dumps(body)
    for labels in (["positive", "negative", "neutral"], ["yes", "no"]):
        if all(lab in text for lab in labels):
            return labels
    many = {int(n) for n in re.findall(r"\bl(\d+)\b", text)}
    return [f"l{i}" for i in sorted(many)] if many else ["positive", "negative", "neutral"]


# ----------------------------------------------------------------------------------------------- inputs


def rows(n: int = 12, key: str = DATA_KEY) -> list[dict]:
    labels = ["positive", "negative", "neutral"]
    return [
        {
            "prompt_id": f"p{i}",
            "text": f"The nurse number {i} said ",
            "source": "bold",
            "language": "en",
            "domain": "profession",
            "group": f"grp-{key}" if i % 2 else "plain",
            "page_title": f"Person {i // 2}",
            "sample_index": 0,
            "model": "m",
            "kind": "generate",
            "continuation": f"and {labels[i % 3]} {i} see http://u:{URL_PW}@x.org/?token={URL_TOKEN}",
            "full_text": f"The nurse number {i} said {labels[i % 3]} {i}",
            "vader_compound": [0.6, -0.6, 0.0][i % 3] + i / 1000,
            "vader_label": labels[i % 3],
        }
        for i in range(n)
    ]


def write_rows(path: Path, table_rows: list[dict], cols: list[str] | None = None) -> Path:
    t = pa.Table.from_pylist([{k: r[k] for k in cols} for r in table_rows] if cols else table_rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(t, path)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in t.to_pylist()), encoding="utf-8")
    else:
        pq.write_table(t, path)
    return path


PROMPT_COLS = ["prompt_id", "text", "source", "language", "domain", "group", "page_title"]


def prompts(d: Path, n: int = 6, texts: list[str] | None = None) -> Path:
    rs = rows(n)
    if texts:
        for r, t in zip(rs, texts):
            r["text"] = t
    return write_rows(d / "prompts.parquet", rs[: len(texts) if texts else n], PROMPT_COLS)


def judge_task(d: Path, labels: list[str], name: str = "task.yaml") -> Path:
    p = d / name
    p.write_text(f"labels: {json.dumps(labels)}\ninstruction: 'Pick one of {{labels}}. Text: {{text}}'\n", encoding="utf-8")
    return p


# ----------------------------------------------------------------------------------------------- probes


@dataclass
class Ctx:
    d: Path
    server: Echo
    models: Path | None
    keep: dict[Path, bytes] = field(default_factory=dict)  # user files that must keep their bytes
    env: dict[str, str] = field(default_factory=dict)
    memory: int | None = None  # an address-space cap in bytes


@dataclass
class Probe:
    case: int
    name: str
    setup: Callable[[Ctx], list]  # the argv (without "biaskit"), after writing its inputs under ctx.d
    expect: str  # "error" (a coded error is right) or "ok" (a result is; ``check`` says whether it is the right one)
    codes: tuple[str, ...] = ()  # the codes that are right for "error" (any coded error when empty)
    check: Callable[[Ctx], str | None] | None = None  # for "ok": None when right, else why it is wrong
    needs_models: bool = False
    pre: Callable[[Ctx], list] | None = None  # a first run whose output the probe's run reads (must succeed)


def read(path: Path):
    if path.suffix == ".csv":
        import pandas as pd

        return pd.read_csv(path)
    return pq.read_table(path).to_pandas()


def openai_at(x: Ctx) -> list:
    """The options that point a runner command at the probe's server (model "m")."""
    return ["--backend", "openai", "--base-url", x.server.url(), "--model", "m"]


def judge_server(x: Ctx, extra: list | None = None) -> list:
    return [
        *("-p", "judge.backend=openai", "-p", f"judge.base_url={x.server.url()}", "-p", "judge.model=m", "-p", "judge.max_retries=0"),
        *(extra or []),
    ]


def judge_mode(n: int, mode: str) -> Callable[[Ctx], list]:
    """``score -m judge`` against the probe's server of ``n`` rows whose row 1 asks the server for reply ``mode``."""

    def setup(x: Ctx) -> list:
        rs = rows(n)
        rs[1]["continuation"] = f"text MODE-{mode}"
        cmd = ["score", write_rows(x.d / "gens.parquet", rs), "-m", "judge", *judge_server(x)]
        return [*cmd, "--text-column", "continuation", "--out", x.d / "j.parquet"]

    return setup


def probes() -> list[Probe]:
    out: list[Probe] = []
    out += case1()
    out += case2()
    out += case3()
    out += case4()
    out += case5()
    out += case6()
    out += case7()
    out += case8()
    out += case9()
    out += case10()
    out += case11()
    out += case12()
    out += case13()
    out += case14()
    out += case15()
    out += case16()
    return out


# 1. a marker reaching outside its folder through a link ---------------------------------------------------------


def _outside(x: Ctx) -> Path:
    far = x.d / "elsewhere"
    far.mkdir(exist_ok=True)
    (far / "thesis.tex").write_bytes(THESIS)
    x.keep[far / "thesis.tex"] = THESIS
    return far


def _link_in_marker(x: Ctx, out: Path, marker: str) -> None:
    far = _outside(x)
    (out / "link").symlink_to(far, target_is_directory=True)
    m = json.loads((out / marker).read_text())
    m["files"]["link/thesis.tex"] = hashlib.sha256(THESIS).hexdigest()
    (out / marker).write_text(json.dumps(m))


def case1() -> list[Probe]:
    def rerun(argv: Callable[[Ctx], list], marker: str) -> tuple[Callable, Callable]:
        def pre(x: Ctx) -> list:
            return argv(x)

        def setup(x: Ctx) -> list:
            _link_in_marker(x, x.d / "out", marker)
            return argv(x)

        return pre, setup

    lm = lambda x: ["export", "lm-eval", prompts(x.d), "--out", x.d / "out"]  # noqa: E731
    bold = lambda x: ["bold", "export", prompts(x.d), "--out", x.d / "out", "--layout", "hub"]  # noqa: E731
    hub = lambda x: ["hub", "stage", f"prompts={prompts(x.d)}", "--out", x.d / "out"]  # noqa: E731
    res = []
    for name, argv, marker in (
        ("export lm-eval rerun, marker lists link/thesis.tex", lm, "biaskit_export.json"),
        ("bold export rerun, marker lists link/thesis.tex", bold, "biaskit_bold_export.manifest"),
        ("hub stage rerun, marker lists link/thesis.tex", hub, "biaskit_manifest.json"),
    ):
        pre, setup = rerun(argv, marker)
        res.append(Probe(1, name, setup, "error", ("E143", "E006"), pre=pre))

    def report_figures(x: Ctx) -> list:
        far = _outside(x)
        out = x.d / "rep"
        out.mkdir()
        (out / "figures").symlink_to(far, target_is_directory=True)
        return ["report", write_rows(x.d / "scores.parquet", rows()), "--out", out, "--n-boot", "5"]

    def no_new_files_outside(x: Ctx) -> str | None:
        extra = sorted(p.name for p in (x.d / "elsewhere").iterdir() if p.name != "thesis.tex")
        return f"figures written outside --out: {extra[:3]}" if extra else None

    res.append(Probe(1, "report whose figures/ links elsewhere", report_figures, "error", (), check=no_new_files_outside))
    return res


# 2. cache commands on a foreign or linked cache.sqlite ----------------------------------------------------------


def _foreign(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE users (name TEXT, email TEXT)")
    con.execute("INSERT INTO users VALUES ('ada', 'ada@example.org')")
    con.commit()
    con.close()
    return path.read_bytes()


def case2() -> list[Probe]:
    def foreign(cmd: str) -> Callable[[Ctx], list]:
        def setup(x: Ctx) -> list:
            db = x.d / "c" / "cache.sqlite"
            x.keep[db] = _foreign(db)
            return ["cache", cmd, x.d / "c"]

        return setup

    def linked(x: Ctx) -> list:
        target = x.d / "app.db"
        x.keep[target] = _foreign(target)
        (x.d / "c").mkdir()
        (x.d / "c" / "cache.sqlite").symlink_to(target)
        return ["cache", "clear", x.d / "c"]

    def run_at_foreign(x: Ctx) -> list:
        db = x.d / "c" / "cache.sqlite"
        x.keep[db] = _foreign(db)
        return [
            "likelihood",
            prompts(x.d),
            *openai_at(x),
            "--cache",
            x.d / "c",
            "--out",
            x.d / "l.parquet",
        ]

    return [
        Probe(2, "cache clear on a foreign cache.sqlite", foreign("clear"), "error"),
        Probe(2, "cache info on a foreign cache.sqlite", foreign("info"), "error"),
        Probe(2, "cache clear on a symlinked cache.sqlite", linked, "error"),
        Probe(2, "likelihood --cache at a foreign cache.sqlite", run_at_foreign, "error"),
    ]


# 3. annotate sample replacing an earlier round's samples ---------------------------------------------------------


def _sample(x: Ctx, rnd: str, extra: list | None = None) -> list:
    scores = write_rows(x.d / "scores.parquet", rows(40))
    return [
        "annotate",
        "sample",
        scores,
        "--round",
        rnd,
        "--n",
        "6",
        "--bins",
        "1",
        "--out",
        x.d / "r" / "samples.parquet",
        "--ledger",
        x.d / "ledger.jsonl",
        *(extra or []),
    ]


def case3() -> list[Probe]:
    def changed(x: Ctx) -> list:
        t = pq.read_table(x.d / "r" / "samples.parquet")
        pq.write_table(t.slice(0, 2), x.d / "r" / "samples.parquet")  # the round's table changed since the ledger
        return [
            "annotate",
            "sample",
            x.d / "scores.parquet",
            "--round",
            "r2",
            "--n",
            "6",
            "--bins",
            "1",
            "--out",
            x.d / "r2.parquet",
            "--ledger",
            x.d / "ledger.jsonl",
        ]

    def two_rounds_kept(x: Ctx) -> str | None:
        led = [json.loads(line) for line in (x.d / "ledger.jsonl").read_text().splitlines() if line.strip()]
        return None if len(led) >= 2 else f"ledger has {len(led)} entries"

    return [
        Probe(3, "annotate sample: round r2 at r1's --out", lambda x: _sample(x, "r2"), "error", ("E389",), pre=lambda x: _sample(x, "r1")),
        Probe(
            3,
            "annotate sample: r1 again with other items at the same --out",
            lambda x: _sample(x, "r1", ["--seed", "7"]),
            "error",
            ("E389",),
            pre=lambda x: _sample(x, "r1"),
        ),
        Probe(3, "annotate sample: an earlier round's table changed since the ledger", changed, "error", ("E388",), pre=lambda x: _sample(x, "r1")),
        Probe(
            3,
            "annotate sample: r2 at r1's --out with --overwrite",
            lambda x: _sample(x, "r2", ["--overwrite"]),
            "ok",
            check=two_rounds_kept,
            pre=lambda x: _sample(x, "r1"),
        ),
    ]


# 4. secrets in the cache ------------------------------------------------------------------------------------------


def case4() -> list[Probe]:
    def plain_prompt_absent(x: Ctx) -> str | None:
        """Keys are sha256 hashes, never a prompt (the generic leak check reads every byte of the values)."""
        con = sqlite3.connect(x.d / "c" / "cache.sqlite")
        try:
            keys = [k for (k,) in con.execute("SELECT key FROM entries")]
        finally:
            con.close()
        if not keys:
            return "nothing was cached"
        return None if all(re.fullmatch(r"[0-9a-f]{64}", k) for k in keys) else "a cache key is not a hash"

    def judge(x: Ctx) -> list:
        return [
            "score",
            write_rows(x.d / "gens.parquet", rows(6)),
            "-m",
            "judge",
            *judge_server(x, ["-p", "judge.record_prompt=true"]),
            "--text-column",
            "continuation",
            "--cache",
            x.d / "c",
            "--out",
            x.d / "j.parquet",
        ]

    def gen(fmt: str) -> Callable[[Ctx], list]:
        return lambda x: [
            "generate",
            prompts(x.d),
            *openai_at(x),
            "--format",
            fmt,
            *(["--system-prompt", f"key {DATA_KEY}"] if fmt == "chat" else []),
            "--cache",
            x.d / "c",
            "--out",
            x.d / "g.parquet",
        ]

    ll = lambda x: [
        "likelihood",
        prompts(x.d),
        *openai_at(x),
        "--cache",
        x.d / "c",
        "--out",
        x.d / "l.parquet",
    ]  # noqa: E731
    return [
        Probe(4, "score -m judge (server) --cache: cache.sqlite", judge, "ok", check=plain_prompt_absent),
        Probe(4, "generate --format chat (server) --cache: cache.sqlite", gen("chat"), "ok", check=plain_prompt_absent),
        Probe(4, "generate --format raw (server) --cache: cache.sqlite", gen("raw"), "ok", check=plain_prompt_absent),
        Probe(4, "likelihood (server) --cache: cache.sqlite", ll, "ok", check=plain_prompt_absent),
    ]


# 5. report.html redaction before formatting -----------------------------------------------------------------------


def case5() -> list[Probe]:
    def report(where: str) -> Callable[[Ctx], list]:
        def setup(x: Ctx) -> list:
            rs = rows()
            for r in rs:
                if where == "domain":
                    r["domain"] = f"dom_{DATA_KEY}/x-y" if r["group"] != "plain" else "plain"
                elif where == "title":
                    r["page_title"] = f"{DATA_KEY}_{r['page_title']}"
            return ["report", write_rows(x.d / "scores.parquet", rs), "--out", x.d / "rep", "--n-boot", "5"]

        return setup

    return [
        Probe(5, "report: a key in group values", report("group"), "ok"),
        Probe(5, "report: a key with _ / - in domain values", report("domain"), "ok"),
        Probe(5, "report: a key in page titles", report("title"), "ok"),
    ]


# 6. stats ppi human labels outside the label set ------------------------------------------------------------------


def case6() -> list[Probe]:
    def ppi(human: list, suffix: str = ".parquet", raw_csv: str | None = None) -> Callable[[Ctx], list]:
        def setup(x: Ctx) -> list:
            rs = rows(160)  # (PPI needs 30 labelled rows per group for its interval)
            for r, h in zip(rs, human * 160):
                r["human_label"] = h
            path = x.d / f"s{suffix}"
            if raw_csv is not None:
                path.write_text("group,vader_label,human_label\n" + "".join(f"{r['group']},{r['vader_label']},{raw_csv}\n" for r in rs))
            else:
                write_rows(path, rs)
            return [
                "stats",
                "ppi",
                path,
                "--metric-column",
                "vader_label",
                "--human-column",
                "human_label",
                "--label",
                "positive",
                "--by",
                "group",
                "--out",
                x.d / "ppi.csv",
            ]

        return setup

    def right(x: Ctx) -> str | None:
        t = read(x.d / "ppi.csv")
        est = t[t["measure"] == "share_ppi"]["estimate"]
        return None if len(est) and est.notna().all() else "no PPI estimate"

    return [
        Probe(6, "stats ppi: human labels POSITIVE", ppi(["POSITIVE", "negative"]), "error", ("E151", "E251")),
        Probe(6, "stats ppi: human labels 'nan' strings", ppi(["nan", "positive"]), "error", ("E151", "E251")),
        # (an all-NaN CSV column is read as numbers, all missing: E350 "no human label" is the right refusal there)
        Probe(6, "stats ppi: unquoted NaN in a CSV (every row)", ppi([], ".csv", raw_csv="NaN"), "error", ("E151", "E251", "E350")),
        Probe(6, "stats ppi: unquoted NaN among labels in a CSV", ppi(["NaN", "positive", "negative"], ".csv"), "error", ("E151", "E251")),
        Probe(6, "stats ppi: all SUPER", ppi(["SUPER"]), "error", ("E151", "E251")),
        Probe(
            6,
            "stats ppi: valid human labels, half unlabelled",
            ppi(["positive", "negative", None, None, "negative", "positive", None, None]),
            "ok",
            check=right,
        ),
    ]


# 7. server log-probabilities ----------------------------------------------------------------------------------------


def case7() -> list[Probe]:
    def judge(mode: str) -> Callable[[Ctx], list]:
        return judge_mode(3, mode)

    def row_error(x: Ctx) -> str | None:
        t = read(x.d / "j.parquet")
        bad = t.iloc[1]
        if not isinstance(bad["judge_error"], str) or not bad["judge_error"].startswith("E317"):
            return f"row 1: judge_error {bad['judge_error']!r}, label {bad['judge_label']!r}"
        good = t.iloc[0]["judge_error"]
        return None if not isinstance(good, str) else f"a good reply became an error: {good[:80]}"

    def ll(mode: str) -> Callable[[Ctx], list]:
        return lambda x: [
            "likelihood",
            prompts(x.d, 2, ["a OK", f"a MODE-{mode}"]),
            *openai_at(x),
            "--max-retries",
            "0",
            "--out",
            x.d / "l.parquet",
        ]

    def ll_error(x: Ctx) -> str | None:
        t = read(x.d / "l.parquet")
        e = t.iloc[1]["error"]
        return None if isinstance(e, str) and e.startswith("E317") and t.iloc[1]["nll_mean"] != t.iloc[1]["nll_mean"] else f"row 1: {e!r}"

    res = [Probe(7, f"judge (server): reply with {m}", judge(m), "ok", check=row_error) for m in ("inf", "plus5", "true", "dup", "deep")]
    res += [Probe(7, f"likelihood (server): token logprob {m}", ll(m), "ok", check=ll_error) for m in ("inf", "plus5", "true", "deep")]
    return res


# 8. degenerate cluster designs -----------------------------------------------------------------------------------


def case8() -> list[Probe]:
    def table(x: Ctx, ids: list) -> Path:
        rs = rows(9)
        for r, c in zip(rs, ids):
            r["page"] = c
        return write_rows(x.d / "s.parquet", rs)

    def ztest(ids: list) -> Callable[[Ctx], list]:
        return lambda x: [
            "stats",
            "ztest",
            table(x, ids),
            "--column",
            "vader_label",
            "--label",
            "positive",
            "--cluster",
            "page",
            "--out",
            x.d / "z.csv",
        ]

    def no_verdict(x: Ctx) -> str | None:
        z = read(x.d / "z.csv")
        r = z.iloc[0]
        if r.get("method") != "none" or not isinstance(r.get("reason"), str):
            return f"method {r.get('method')!r}, significant {r.get('significant')!r}"
        return None if r.get("significant") != r.get("significant") or r.get("significant") is None else f"a verdict: {r.get('significant')!r}"

    def aggregate(ids: list) -> Callable[[Ctx], list]:
        return lambda x: [
            "stats",
            "aggregate",
            table(x, ids),
            "--labels",
            "vader_label",
            "--cluster",
            "page",
            "--n-boot",
            "5",
            "--out",
            x.d / "a.csv",
        ]

    def no_interval(x: Ctx) -> str | None:
        a = read(x.d / "a.csv")
        a = a[a["method"].notna()] if "method" in a else a
        bad = a[a["method"].astype(str).str.contains("deff|cr1|cluster")]
        return f"{len(bad)} rows still name a cluster method" if len(bad) else None

    return [
        Probe(8, "stats ztest --cluster: one cluster", ztest(["c1"] * 9), "ok", check=no_verdict),
        Probe(8, "stats ztest --cluster: all ids null", ztest([None] * 9), "ok", check=no_verdict),
        Probe(8, "stats aggregate --cluster: one cluster", aggregate(["c1"] * 9), "ok", check=no_interval),
        Probe(8, "stats aggregate --cluster: all ids null", aggregate([None] * 9), "ok", check=no_interval),
    ]


# 9. --out picks the format by its suffix ---------------------------------------------------------------------------


def case9() -> list[Probe]:
    def cmd(kind: str, suffix: str) -> Callable[[Ctx], list]:
        def setup(x: Ctx) -> list:
            s = write_rows(x.d / "scores.parquet", [{**r, "human_label": r["vader_label"]} for r in rows(12)])
            out = x.d / f"o{suffix}"
            return {
                "ppi": [
                    "stats",
                    "ppi",
                    s,
                    "--metric-column",
                    "vader_label",
                    "--human-column",
                    "human_label",
                    "--label",
                    "positive",
                    "--by",
                    "group",
                    "--out",
                    out,
                ],
                "aggregate": ["stats", "aggregate", s, "--labels", "vader_label", "--n-boot", "5", "--out", out],
                "ztest": ["stats", "ztest", s, "--column", "vader_label", "--label", "positive", "--out", out],
            }[kind]

        return setup

    def readable(suffix: str) -> Callable[[Ctx], str | None]:
        def check(x: Ctx) -> str | None:
            p = x.d / f"o{suffix}"
            try:
                if suffix == ".parquet":
                    pq.read_table(p)
                elif suffix == ".jsonl":
                    [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
                else:
                    read(p)
            except Exception as exc:  # noqa: BLE001  (any failure to read it back is the finding)
                return f"{p.name} is not {suffix}: {type(exc).__name__}"
            return None

        return check

    res = [
        Probe(9, f"stats {k} --out o{s}", cmd(k, s), "ok", check=readable(s)) for k in ("ppi", "aggregate", "ztest") for s in (".parquet", ".jsonl")
    ]
    res += [Probe(9, f"stats {k} --out o.txt", cmd(k, ".txt"), "error", ("E390",)) for k in ("ppi", "aggregate")]
    return res


# 10. --cache '' and a judge label holding {text} -------------------------------------------------------------------


def case10() -> list[Probe]:
    def empty_cache(argv: Callable[[Ctx], list]) -> Callable[[Ctx], list]:
        return lambda x: [*argv(x), "--cache", ""]

    ll = lambda x: ["likelihood", prompts(x.d), "--backend", "openai", "--base-url", x.server.url(), "--model", "m", "--out", x.d / "l.parquet"]  # noqa: E731
    judge = lambda x: [
        "score",
        write_rows(x.d / "gens.parquet", rows(3)),
        "-m",
        "judge",
        *judge_server(x),
        "--text-column",
        "continuation",
        "--out",
        x.d / "j.parquet",
    ]  # noqa: E731

    def label_text(x: Ctx) -> list:
        task = judge_task(x.d, ["{text}", "other"])
        return [
            "score",
            write_rows(x.d / "gens.parquet", rows(3)),
            "-m",
            "judge",
            *judge_server(x, ["-p", f"judge.task={task}", "-p", "judge.record_prompt=true"]),
            "--text-column",
            "continuation",
            "--out",
            x.d / "j.parquet",
        ]

    def label_kept(x: Ctx) -> str | None:
        t = read(x.d / "j.parquet")
        col = next((c for c in t.columns if c.endswith("prompt")), None)
        if col is None:
            return "no recorded prompt"
        p = str(t.iloc[0][col])
        return None if "{text}" in p or "E3" in str(t.iloc[0].get("judge_error")) else "the label {text} was replaced by the row's text"

    return [
        Probe(10, "likelihood --cache ''", empty_cache(ll), "error"),
        Probe(10, "score -m judge --cache ''", empty_cache(judge), "error"),
        Probe(
            10,
            "generate --cache ''",
            empty_cache(
                lambda x: ["generate", prompts(x.d), "--backend", "openai", "--base-url", x.server.url(), "--model", "m", "--out", x.d / "g.parquet"]
            ),
            "error",
        ),
        Probe(10, "judge task with a label {text}", label_text, "ok", check=label_kept),
    ]


# 11. a many-label judge task under a memory cap ---------------------------------------------------------------------


def case11() -> list[Probe]:
    def many(n: int, orders: int) -> Callable[[Ctx], list]:
        def setup(x: Ctx) -> list:
            x.memory = 3 * 1024**3
            task = judge_task(x.d, [f"l{i}" for i in range(n)])
            return [
                "score",
                write_rows(x.d / "gens.parquet", rows(2)),
                "-m",
                "judge",
                *judge_server(x, ["-p", f"judge.task={task}", "-p", f"judge.orders={orders}"]),
                "--text-column",
                "continuation",
                "--out",
                x.d / "j.parquet",
            ]

        return setup

    def labelled(x: Ctx) -> str | None:
        t = read(x.d / "j.parquet")
        return None if t["judge_label"].notna().all() else f"errors: {t['judge_error'].dropna().tolist()[:1]}"

    return [
        Probe(11, "judge with 12 labels, orders=1 (3 GB cap)", many(12, 1), "ok", check=labelled),
        Probe(11, "judge with 12 labels, orders=5 (3 GB cap)", many(12, 5), "ok", check=labelled),
        Probe(11, "judge with 10 labels, orders=2 (3 GB cap)", many(10, 2), "ok", check=labelled),
        Probe(11, "judge with 3 labels, orders=7 (more than 3! orders)", many(3, 7), "error", ("E321",)),
    ]


# 12. damaged cache entries --------------------------------------------------------------------------------------------


def case12() -> list[Probe]:
    def damaged(value: str, argv: Callable[[Ctx], list]) -> tuple[Callable, Callable]:
        def setup(x: Ctx) -> list:
            con = sqlite3.connect(x.d / "c" / "cache.sqlite")
            con.execute("UPDATE entries SET value=?", (value,))
            con.commit()
            con.close()
            return argv(x)

        return argv, setup

    def counted(x: Ctx) -> str | None:
        for m in list(x.d.glob("*.manifest.json")) + list(x.d.glob("*manifest*")):
            if b'"damaged"' in m.read_bytes() and b'"damaged": 0' not in m.read_bytes():
                return None
        return "cache.damaged not counted in a manifest"

    ll = lambda x: [
        "likelihood",
        prompts(x.d, 2),
        *openai_at(x),
        "--cache",
        x.d / "c",
        "--out",
        x.d / "l.parquet",
        "--overwrite",
    ]  # noqa: E731
    judge = lambda x: [
        "score",
        write_rows(x.d / "gens.parquet", rows(2)),
        "-m",
        "judge",
        *judge_server(x),
        "--text-column",
        "continuation",
        "--cache",
        x.d / "c",
        "--out",
        x.d / "j.parquet",
    ]  # noqa: E731
    res = []
    for what, value in (
        ("not JSON", "{not json"),
        ("42", "42"),
        ("a row of the wrong type", json.dumps([{"nll_mean": "x", "perplexity": [1]}])),
        ("nested 100,000 deep", DEEP),
    ):
        pre, setup = damaged(value, ll)
        res.append(Probe(12, f"likelihood --cache: entry {what}", setup, "ok", check=counted, pre=pre))
    for what, value in (("not JSON", "{not json"), ("a column of the wrong type", json.dumps({"judge_label": 3, "judge_p_positive": "x"}))):
        pre, setup = damaged(value, judge)
        res.append(Probe(12, f"score -m judge --cache: entry {what}", setup, "ok", check=counted, pre=pre))
    return res


# 13. a chat template that raises (local models) -----------------------------------------------------------------------

REFUSING = (
    "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{{ m['content'] }}{% endfor %}"
)
BROKEN = "{% for m in messages %}{{ m['content'] }"
UNDEFINED = "{% for m in messages %}{{ m.content | no_such_filter }}{% endfor %}"


def _model_with(x: Ctx, template: str) -> Path:
    assert x.models is not None
    d = x.d / "model"
    shutil.copytree(x.models, d)
    cfg = json.loads((d / "tokenizer_config.json").read_text())
    cfg["chat_template"] = template
    (d / "tokenizer_config.json").write_text(json.dumps(cfg))
    if (d / "chat_template.jinja").exists():
        (d / "chat_template.jinja").write_text(template)
    return d


def case13() -> list[Probe]:
    def gen(template: str) -> Callable[[Ctx], list]:
        return lambda x: [
            "generate",
            prompts(x.d, 2),
            "--model",
            _model_with(x, template),
            "--format",
            "chat",
            "--system-prompt",
            "Be brief.",
            "--max-new-tokens",
            "2",
            "--device",
            "cpu",
            "--out",
            x.d / "g.parquet",
        ]

    def judge(template: str) -> Callable[[Ctx], list]:
        def setup(x: Ctx) -> list:
            task = x.d / "sys.yaml"
            task.write_text("labels: ['yes', 'no']\nsystem: You are a careful rater.\ninstruction: 'Pick {labels}. Text: {text}'\n")
            return [
                "score",
                write_rows(x.d / "gens.parquet", rows(2)),
                "-m",
                "judge",
                "-p",
                f"judge.model={_model_with(x, template)}",
                "-p",
                f"judge.task={task}",
                "--text-column",
                "continuation",
                "--out",
                x.d / "j.parquet",
            ]

        return setup

    res = []
    for name, t in (("raise_exception", REFUSING), ("a syntax error", BROKEN), ("an unknown filter", UNDEFINED)):
        res.append(Probe(13, f"generate --format chat: template with {name}", gen(t), "error", ("E316", "E062"), needs_models=True))
        res.append(Probe(13, f"judge (local): template with {name}", judge(t), "error", ("E316", "E315"), needs_models=True))
    return res


# 14. usage counts and timeouts -------------------------------------------------------------------------------------------


def case14() -> list[Probe]:
    def usage(mode: str) -> Callable[[Ctx], list]:
        return judge_mode(2, mode)

    def row_error(x: Ctx) -> str | None:
        t = read(x.d / "j.parquet")
        e = t.iloc[1]["judge_error"]
        return None if isinstance(e, str) and e.startswith("E317") and "completion_tokens" in e else f"row 1: {e!r}"

    def timeout(v: str) -> Callable[[Ctx], list]:
        return lambda x: [
            "score",
            write_rows(x.d / "gens.parquet", rows(2)),
            "-m",
            "judge",
            *judge_server(x, ["-p", f"judge.timeout={v}"]),
            "--text-column",
            "continuation",
            "--out",
            x.d / "j.parquet",
        ]

    gen_timeout = lambda v: (
        lambda x: [
            "generate",
            prompts(x.d, 2),
            *openai_at(x),
            "--timeout",
            v,
            "--out",
            x.d / "g.parquet",
        ]
    )  # noqa: E731
    res = [Probe(14, f"judge (server): usage.completion_tokens {m}", usage(m), "ok", check=row_error) for m in ("usage_half", "usage_word")]
    res += [Probe(14, f"judge.timeout={v}", timeout(v), "error", ("E324",)) for v in ("-1", "nan", "inf", "0")]
    res += [Probe(14, f"generate --timeout {v}", gen_timeout(v), "error") for v in ("-1", "nan")]
    return res


# 15. JSON nested 100,000 deep ----------------------------------------------------------------------------------------------


def case15() -> list[Probe]:
    def marker(argv: Callable[[Ctx], list], name: str) -> tuple[Callable, Callable]:
        def setup(x: Ctx) -> list:
            (x.d / "out" / name).write_text(DEEP)
            return argv(x)

        return argv, setup

    lm = lambda x: ["export", "lm-eval", prompts(x.d), "--out", x.d / "out"]  # noqa: E731
    hub = lambda x: ["hub", "stage", f"prompts={prompts(x.d)}", "--out", x.d / "out"]  # noqa: E731
    res = []
    for name, argv, m in (("export lm-eval: marker", lm, "biaskit_export.json"), ("hub stage: manifest", hub, "biaskit_manifest.json")):
        pre, setup = marker(argv, m)
        res.append(Probe(15, f"{name} nested 100,000 deep", setup, "error", ("E380",), pre=pre))

    def plan(x: Ctx) -> list:
        (x.d / "plan.json").write_text(DEEP)
        return [*_sample(x, "r1"), "--plan", x.d / "plan.json"]

    def ledger(x: Ctx) -> list:
        (x.d / "ledger.jsonl").write_text(DEEP + "\n")
        return _sample(x, "r1")

    def run_state(x: Ctx) -> list:
        (x.d / "l.parquet.parts").mkdir()
        (x.d / "l.parquet.parts" / "run.json").write_text(DEEP)
        return ["likelihood", prompts(x.d), "--backend", "openai", "--base-url", x.server.url(), "--model", "m", "--out", x.d / "l.parquet"]

    def extra_body(x: Ctx) -> list:
        return [
            "score",
            write_rows(x.d / "gens.parquet", rows(2)),
            "-m",
            "judge",
            *judge_server(x, ["-p", "judge.extra_body=" + "[" * 5000 + "]" * 5000]),
            "--text-column",
            "continuation",
            "--out",
            x.d / "j.parquet",
        ]

    def bbq(x: Ctx) -> list:
        first = (ROOT / "tests/fixtures/bbq/Age_head8.jsonl").read_text(encoding="utf-8").splitlines()[0]
        (x.d / "Age.jsonl").write_text(first + "\n" + DEEP + "\n")
        return ["hub", "load", x.d / "Age.jsonl", "--out", x.d / "bbq.parquet"]

    def bbq_info(x: Ctx) -> list:
        row = json.loads((ROOT / "tests/fixtures/bbq/Age_head8.jsonl").read_text(encoding="utf-8").splitlines()[0])
        row["answer_info"] = "[" * 3000 + "]" * 3000
        (x.d / "Age.jsonl").write_text(json.dumps(row) + "\n")
        return ["hub", "load", x.d / "Age.jsonl", "--out", x.d / "bbq.parquet"]

    res += [
        Probe(15, "annotate sample --plan nested 100,000 deep", plan, "error", ("E380",)),
        Probe(15, "annotate sample: ledger line nested 100,000 deep", ledger, "error"),
        Probe(15, "likelihood: run state file nested 100,000 deep", run_state, "error", ("E380",)),
        Probe(15, "judge.extra_body nested 5,000 deep", extra_body, "error", ("E380",)),
        Probe(15, "hub load BBQ: a line nested 100,000 deep", bbq, "error", ("E380",)),
        Probe(15, "hub load BBQ: answer_info nested 3,000 deep", bbq_info, "error", ("E380",)),
    ]
    return res


# 16. score a table without prompt_id ------------------------------------------------------------------------------------


def case16() -> list[Probe]:
    sents = [{"sentence": f"The {w} was a wonderful nurse.", "label": "positive"} for w in ("woman", "man", "person")]

    def score(suffix: str) -> Callable[[Ctx], list]:
        return lambda x: ["score", write_rows(x.d / f"t{suffix}", sents), "-m", "vader", "--text-column", "sentence", "--out", x.d / "s.parquet"]

    def carried(x: Ctx) -> str | None:
        t = read(x.d / "s.parquet")
        want = {"sentence", "label", "vader_label"}
        if not want <= set(t.columns):
            return f"columns {sorted(t.columns)}"
        return None if t["vader_label"].notna().all() else "rows not scored"

    def wrong_name(x: Ctx) -> list:
        return ["score", write_rows(x.d / "t.csv", sents), "-m", "vader", "--text-column", "nope", "--out", x.d / "s.parquet"]

    return [
        *(Probe(16, f"score a {s} of sentences without prompt_id", score(s), "ok", check=carried) for s in (".csv", ".jsonl", ".parquet")),
        Probe(16, "score with a --text-column the table lacks", wrong_name, "error", ("E001", "E004", "E080")),
    ]


# ----------------------------------------------------------------------------------------------- running and judging


def tiny_chat_model(root: Path) -> Path:
    """An untrained tiny GPT-2 with a chat template and whole-word labels (the runner tests' saved BPE tokenizer; no
    download), as the command matrix builds it."""
    from tokenizers import Tokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    d = root / "tiny-chat"
    eos = "<|endoftext|>"
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_file(str(TOKENIZER / "tiny_bpe.json")), bos_token=eos, eos_token=eos, unk_token=eos, pad_token=eos
    )
    tok.chat_template = (
        "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    tok.add_tokens(["yes", "no"])
    cfg = GPT2Config(
        vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=512, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id
    )
    GPT2LMHeadModel(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return d


def _snapshot(d: Path) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in d.rglob("*") if p.is_file() and not p.is_symlink()}


def _cli(argv: list, x: Ctx, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "LABEL_STUDIO_URL")}
    env.update(ENV)
    env.update({"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "MPLBACKEND": "Agg"})
    env["BIASKIT_CACHE"] = str(x.d / "user-cache")
    code = "from biaskit.cli import main; main()"
    if x.memory:
        code = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({x.memory}, {x.memory})); " + code
    return subprocess.run([sys.executable, "-c", code, *map(str, argv)], env=env, cwd=x.d, capture_output=True, text=True, timeout=timeout)


def classify(p: Probe, x: Ctx, res: subprocess.CompletedProcess | None, inputs: dict[Path, str]) -> tuple[str, str]:
    try:
        return _classify(p, x, res, inputs)
    except Exception as exc:  # noqa: BLE001  (the probe's own check failed: reported apart, never as a finding)
        return "probe error", f"the probe's check failed: {type(exc).__name__}: {exc}"[:240]


def _classify(p: Probe, x: Ctx, res: subprocess.CompletedProcess | None, inputs: dict[Path, str]) -> tuple[str, str]:
    if res is None:
        return "traceback", "timed out"
    shown = (res.stdout + res.stderr).strip()
    if res.returncode == 2 and "Usage:" in shown:
        return "probe error", f"the probe's command line is wrong: {shown[-200:]}"
    if "Traceback (most recent call last)" in shown or res.returncode not in (0, 1) or (res.returncode == 1 and "error[E" not in shown):
        return "traceback", f"exit {res.returncode}: {shown[-240:]}"
    for path, data in x.keep.items():
        if not path.is_file() or path.read_bytes() != data:
            return "data loss", f"{path.name} changed or gone"
    needles = set(CANARIES) | {c[:8] for c in CANARIES}
    for n in needles:
        if n in shown:
            return "leak", f"{n[:4]}... printed"
    for f in x.d.rglob("*"):
        if not f.is_file() or f.is_symlink() or inputs.get(f) == hashlib.sha256(f.read_bytes()).hexdigest():
            continue
        data = f.read_bytes()
        for n in needles:
            if n.encode() in data:
                return "leak", f"{n[:4]}... in {f.relative_to(x.d)}"
    code = next((shown[i + 6 : i + 10] for i in [shown.find("error[E")] if i >= 0), "")
    if p.expect == "error":
        if res.returncode == 0:
            return "silent wrong", "exit 0 on a bad input"
        if p.codes and code not in p.codes:
            return CORRECT, f"coded error E{code[1:]} (expected {'/'.join(p.codes)})"
        if p.check is not None and (why := p.check(x)):
            return "data loss" if "outside" in why else "silent wrong", why
        return CORRECT, f"error[{code}]"
    if res.returncode == 1:
        return "false refusal", shown[-200:]
    why = p.check(x) if p.check is not None else None
    return ("silent wrong", why) if why else (CORRECT, "result checked" if p.check else "ran")


def run_probe(p: Probe, server: Echo, models: Path | None, keep_root: Path | None, timeout: float) -> tuple[Probe, str, str, float]:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="probe-") as tmp:
        x = Ctx(Path(tmp), server, models)
        try:
            if p.pre is not None:
                first = _cli(p.pre(x), x, timeout)
                if first.returncode != 0:
                    return (
                        p,
                        "traceback" if "Traceback" in first.stderr else "false refusal",
                        f"first run failed: {(first.stdout + first.stderr)[-200:]}",
                        time.perf_counter() - t0,
                    )
            try:
                argv = p.setup(x)
            except Exception as exc:  # noqa: BLE001
                return (p, *_setup_error(p, exc), time.perf_counter() - t0)
            inputs = _snapshot(x.d)
            try:
                res: subprocess.CompletedProcess | None = _cli(argv, x, timeout)
            except subprocess.TimeoutExpired:
                res = None
            outcome, why = classify(p, x, res, inputs)
        finally:
            if keep_root is not None:
                shutil.copytree(x.d, keep_root / f"{p.case:02d}-{abs(hash(p.name)) % 10**6}", symlinks=True, dirs_exist_ok=True)
    return p, outcome, why, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated case numbers")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--keep", type=Path, help="copy each probe's folder here")
    ap.add_argument("--no-models", action="store_true", help="leave out the probes that need a local model (torch)")
    args = ap.parse_args(argv)
    only = {int(c) for c in args.only.split(",") if c.strip()}
    todo = [p for p in probes() if (not only or p.case in only) and not (args.no_models and p.needs_models)]
    server = Echo()
    with tempfile.TemporaryDirectory(prefix="probe-models-") as mroot:
        models = tiny_chat_model(Path(mroot)) if any(p.needs_models for p in todo) else None
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = []
            for r in pool.map(lambda p: run_probe(p, server, models, args.keep, args.timeout), todo):
                results.append(r)
                print(f"[{len(results)}/{len(todo)}] case {r[0].case}: {r[1]}: {r[0].name}", file=sys.stderr, flush=True)
    counts = Counter(o for _, o, _, _ in results)
    for p, outcome, why, secs in sorted(results, key=lambda r: (r[0].case, r[0].name)):
        print(f"{p.case:>2}  {outcome:<13} {secs:5.1f}s  {p.name}: {why}")
    per_case = Counter(p.case for p, *_ in results)
    print(f"\n{len(results)} probes over {len(per_case)} cases (" + ", ".join(f"{c}: {n}" for c, n in sorted(per_case.items())) + ")")
    print("  ".join(f"{o}: {counts.get(o, 0)}" for o in OUTCOMES))
    return 0 if counts.get(CORRECT, 0) == len(results) else 1


def _setup_error(p: Probe, exc: Exception) -> tuple[str, str]:
    return "probe error", f"the probe's setup failed: {type(exc).__name__}: {exc}"[:240]


if __name__ == "__main__":
    sys.exit(main())
