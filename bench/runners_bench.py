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
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--prompts", type=int, default=24)
    ap.add_argument("--max-new-tokens", type=int, default=20)
    ap.add_argument("--sentences", type=int, default=96)
    ap.add_argument("--batch-sizes", default="auto,8")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
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


if __name__ == "__main__":
    main()
