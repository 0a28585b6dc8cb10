"""Benchmark: push 10,000 tasks to Label Studio and pull them back with 3 annotations each.

    .venv/bin/python bench/annotate_bench.py                 # starts a throw-away server from .venv-ls
    .venv/bin/python bench/annotate_bench.py --url URL       # an existing server (token: LABEL_STUDIO_API_KEY)

Measures (seconds, wall clock):
  * batched push of N tasks (``biaskit.annotate.labelstudio.push``, batch 1000) and an idempotent re-push;
  * one request per task (``batch_size=1``) on a smaller round, extrapolated to N;
  * pull (export + validation) of N tasks carrying 3 annotations each. The 3N annotations are loaded by
    importing tasks with embedded annotations from three annotator accounts (creating 30,000 annotations
    one API call at a time would take hours; the pull path is the same either way);
  * agreement (with 1,000 bootstrap resamples) and validation on the pulled table.
Prints a Markdown table (copied into docs/annotate.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from biaskit.annotate.agreement import agreement  # noqa: E402
from biaskit.annotate.labelstudio import LabelStudio, pull, push  # noqa: E402
from biaskit.annotate.sampling import make_sample_id  # noqa: E402
from biaskit.annotate.tasks import get_task_type  # noqa: E402
from biaskit.annotate.validation import validate_metric  # noqa: E402

TOKEN = "biaskit-bench-token-0123456789abcdef"
LABS = ["negative", "neutral", "positive"]


def start_server() -> tuple[subprocess.Popen, str, Path]:
    venv = ROOT / ".venv-ls"
    if not (venv / "bin" / "label-studio").exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "services" / "label-studio.sh")], check=True)
    data = Path(tempfile.mkdtemp(prefix="biaskit-ls-bench-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LABEL_STUDIO")}
    env.update({"LABEL_STUDIO_BASE_DATA_DIR": str(data), "LABEL_STUDIO_USERNAME": "admin@example.com",
                "LABEL_STUDIO_PASSWORD": "admin-password-123", "LABEL_STUDIO_USER_TOKEN": TOKEN,
                "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true", "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
                "LATEST_VERSION_CHECK": "false", "COLLECT_ANALYTICS": "false", "SENTRY_DSN": "", "FRONTEND_SENTRY_DSN": ""})
    proc = subprocess.Popen([str(venv / "bin" / "label-studio"), "start", "--no-browser", "--internal-host", "127.0.0.1",
                             "--port", str(port), "--data-dir", str(data)], env=env, stdout=open(data / "server.log", "wb"),
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(480):
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if b"UP" in r.read():
                    return proc, url, data
        except Exception:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit("server did not start:\n" + (data / "server.log").read_text()[-2000:])


def samples_table(n: int, round_: str, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    comp = np.round(rng.uniform(-1, 1, n), 4)
    rows = []
    for i in range(n):
        lab = "positive" if comp[i] >= 0.05 else "negative" if comp[i] <= -0.05 else "neutral"
        rows.append({"sample_id": make_sample_id(round_, i), "round": round_, "task_type": "sentiment",
                     "text": f"XYZ wrote text number {i} about the weather.", "is_gold": False,
                     "vader_compound": float(comp[i]), "vader_label": lab})
    return pa.Table.from_pylist(rows)


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the finally block: stop the server
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--single", type=int, default=300, help="tasks pushed one request each (extrapolated to --n)")
    ap.add_argument("--batch-size", type=int, default=1000)
    args = ap.parse_args()
    proc = data = None
    if args.url:
        url, token = args.url, os.environ["LABEL_STUDIO_API_KEY"]
    else:
        proc, url, data = start_server()
        token = TOKEN
    try:
        ls = LabelStudio(url, token, timeout=600)
        sent = get_task_type("sentiment")
        tag = str(int(time.time()))
        res: list[tuple[str, float, str]] = []

        s = samples_table(args.n, f"bench-{tag}")
        t0 = time.perf_counter()
        rep = push(s, client=ls, batch_size=args.batch_size)
        t_batched = time.perf_counter() - t0
        assert rep.imported == args.n, rep
        res.append((f"push {args.n} tasks, batches of {args.batch_size}", t_batched, f"{rep.batches} requests"))
        t0 = time.perf_counter()
        again = push(s, client=ls, batch_size=args.batch_size)
        res.append((f"re-push the same {args.n} (idempotent)", time.perf_counter() - t0, f"{again.imported} imported"))

        s1 = samples_table(args.single, f"bench-single-{tag}")
        t0 = time.perf_counter()
        rep1 = push(s1, client=ls, batch_size=1)
        t_single = time.perf_counter() - t0
        per = t_single / args.single
        res.append((f"push {args.single} tasks, one request each", t_single, f"{per * 1000:.0f} ms/task"))
        res.append((f"one request per task, extrapolated to {args.n}", per * args.n, "estimate"))

        # the annotated project: N tasks x 3 annotations from three annotator accounts
        emails = ["bench1@example.com", "bench2@example.com", "bench3@example.com"]
        ls.ensure_annotators(emails)
        sa = samples_table(args.n, f"bench-ann-{tag}", seed=1)
        title = f"biaskit bench-ann-{tag} (sentiment)"
        proj, _ = ls.ensure_project(title, sent, annotators=3)
        rng = np.random.default_rng(2)
        rows = sa.to_pylist()
        t0 = time.perf_counter()
        for start in range(0, len(rows), 500):
            chunk = []
            for r in rows[start:start + 500]:
                base = r["vader_label"]
                anns = []
                for e in emails:
                    lab = base if rng.random() < 0.8 else LABS[int(rng.integers(0, 3))]
                    anns.append({"result": [{"from_name": "sentiment", "to_name": "text", "type": "choices",
                                             "value": {"choices": [lab]}}], "completed_by": {"email": e},
                                 "lead_time": float(rng.uniform(2, 20))})
                chunk.append({"data": {"text": r["text"], "sample_id": r["sample_id"], "round": r["round"]}, "annotations": anns})
            ls.import_tasks(proj.id, chunk)
        res.append((f"load {args.n} tasks with {3 * args.n} annotations (setup)", time.perf_counter() - t0, "import with embedded annotations"))
        t0 = time.perf_counter()
        pr = pull(sa, client=ls, project=title)
        t_pull = time.perf_counter() - t0
        assert pr.report.kept == 3 * args.n, pr.report.summary()
        res.append((f"pull {args.n} tasks x 3 annotations (export + validation)", t_pull, pr.report.summary()))
        t0 = time.perf_counter()
        agr = agreement(pr.annotations, n_boot=1000)
        res.append((f"agreement on {3 * args.n} labels (1000 bootstrap)", time.perf_counter() - t0,
                    f"fleiss {agr.filter(pa.compute.equal(agr['measure'], 'fleiss_kappa'))['value'][0].as_py():.3f}"))
        t0 = time.perf_counter()
        val = validate_metric(pr.annotations, sa, metric="vader", n_boot=1000)
        res.append(("validate vader (1000 bootstrap, calibration)", time.perf_counter() - t0, f"{val.n_items} items"))

        print("| step | seconds | note |\n|---|---|---|")
        for name, sec, note in res:
            print(f"| {name} | {sec:.1f} | {note} |")
        print(f"\nbatched vs one request per task (extrapolated): {per * args.n / t_batched:.0f}x faster")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(20)
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
