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

    .venv/bin/python bench/annotate_bench.py --label-models  # no server: label models and validation by group

``--label-models``: a simulated crowd of 20,000 items x 5 annotations (100,000 labels, 12 annotators with
known accuracies) aggregated with each label model (``biaskit.annotate.labelmodels.aggregate``; MACE and
GLAD optional with ``--all-methods``, they are much slower), then ``validate_metric(..., by="group")`` on
10 groups with 1,000 bootstrap resamples (and 1,000 permutations per pair and rate).
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
    env.update(
        {
            "LABEL_STUDIO_BASE_DATA_DIR": str(data),
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
    proc = subprocess.Popen(
        [str(venv / "bin" / "label-studio"), "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port), "--data-dir", str(data)],
        env=env,
        stdout=open(data / "server.log", "wb"),
        stderr=subprocess.STDOUT,
    )
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
        rows.append(
            {
                "sample_id": make_sample_id(round_, i),
                "round": round_,
                "task_type": "sentiment",
                "text": f"XYZ wrote text number {i} about the weather.",
                "is_gold": False,
                "vader_compound": float(comp[i]),
                "vader_label": lab,
            }
        )
    return pa.Table.from_pylist(rows)


def label_model_bench(n_items: int = 20_000, per_item: int = 5, all_methods: bool = False) -> None:
    """Aggregate n_items x per_item simulated labels and validate a metric by group; prints a Markdown table."""
    import warnings

    from biaskit.annotate.labelmodels import aggregate

    rng = np.random.default_rng(0)
    acc = np.array([0.9, 0.85, 0.85, 0.8, 0.8, 0.75, 0.75, 0.7, 0.7, 0.65, 0.4, 0.34])  # last two: poor, near random
    truth = rng.integers(0, 3, size=n_items)
    sids = [f"s{i:06d}" for i in range(n_items)]
    rows_s, rows_a, rows_l = [], [], []
    for i in range(n_items):
        for w in rng.choice(len(acc), size=per_item, replace=False):
            lab = truth[i] if rng.random() < acc[w] else (truth[i] + 1 + rng.integers(2)) % 3
            rows_s.append(sids[i])
            rows_a.append(f"w{w:02d}")
            rows_l.append(LABS[lab])
    ann = pa.table(
        {"sample_id": rows_s, "annotator": rows_a, "label": rows_l, "round": ["bench"] * len(rows_s), "task_type": ["sentiment"] * len(rows_s)}
    )
    groups = [f"g{i % 10}" for i in range(n_items)]
    m_acc = np.array([0.9 - 0.03 * (i % 10) for i in range(n_items)])  # the metric gets worse group by group
    pred = [LABS[t] if rng.random() < a else LABS[(t + 1) % 3] for t, a in zip(truth, m_acc)]
    samples = pa.table(
        {
            "sample_id": sids,
            "round": ["bench"] * n_items,
            "task_type": ["sentiment"] * n_items,
            "text": ["x"] * n_items,
            "group": groups,
            "vader_label": pred,
            "vader_compound": [{"negative": -0.5, "neutral": 0.0, "positive": 0.5}[p] + float(rng.normal(0, 0.2)) for p in pred],
            "is_gold": [False] * n_items,
        }
    )
    out = [("step", "seconds", "note")]
    methods = ["majority", "dawid-skene", "wawa"] + (["glad", "mace"] if all_methods else [])
    ds_labels = None
    for m in methods:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = aggregate(ann, method=m, samples=samples)
        dt = time.perf_counter() - t0
        lab = dict(zip(res.labels.column("sample_id").to_pylist(), res.labels.column("label").to_pylist()))
        right = np.mean([lab[s] == LABS[t] for s, t in zip(sids, truth)])
        out.append(
            (f"aggregate {len(rows_s):,} labels ({n_items:,} items x {per_item}), {m}", f"{dt:.1f}", f"accuracy vs the simulated truth {right:.3f}")
        )
        if m == "dawid-skene":
            ds_labels = res.labels
    for lbl, labels in (("majority vote", None), ("Dawid-Skene labels", ds_labels)):
        t0 = time.perf_counter()
        v = validate_metric(ann, samples, metric="vader", by="group", labels=labels, n_boot=1000, seed=0, calibrate=False)
        dt = time.perf_counter() - t0
        sig = sum(1 for r in v.table.to_pylist() if r["measure"].startswith("diff_") and r["p_holm"] is not None and r["p_holm"] < 0.05)
        out.append(
            (
                f"validate by group (10 groups, 45 pairs, 1,000 resamples), {lbl}",
                f"{dt:.1f}",
                f"{v.n_items:,} items, {sig} significant pairwise differences",
            )
        )
    print("| " + " | ".join(out[0]) + " |\n|---|---|---|")
    for r in out[1:]:
        print("| " + " | ".join(r) + " |")


def main() -> None:
    import signal

    if "--label-models" in sys.argv:
        label_model_bench(all_methods="--all-methods" in sys.argv)
        return

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
        push(s1, client=ls, batch_size=1)
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
            for r in rows[start : start + 500]:
                base = r["vader_label"]
                anns = []
                for e in emails:
                    lab = base if rng.random() < 0.8 else LABS[int(rng.integers(0, 3))]
                    anns.append(
                        {
                            "result": [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [lab]}}],
                            "completed_by": {"email": e},
                            "lead_time": float(rng.uniform(2, 20)),
                        }
                    )
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
        res.append(
            (
                f"agreement on {3 * args.n} labels (1000 bootstrap)",
                time.perf_counter() - t0,
                f"fleiss {agr.filter(pa.compute.equal(agr['measure'], 'fleiss_kappa'))['estimate'][0].as_py():.3f}",
            )
        )
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
