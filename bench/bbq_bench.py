"""Benchmark: BBQ rebuilt from its templates (all 11 categories, 58,492 examples), and scoring 58k examples with a
tiny causal LM through the likelihood runner and `stats bbq`.

Each part runs in its own subprocess so peak RSS (ru_maxrss) is its own; wall time and CPU time (user + sys, which
a busy shared machine distorts less) are both reported.

Usage: python bench/bbq_bench.py [--repeat 3] [--compare-examples 1000] [--score-examples 58492] [--device cpu|cuda]
[--batch-size 64]

``expand`` writes the full table to Parquet (``biaskit.templates.bbq.write_expansion``). ``score`` builds an
untrained 2-layer GPT-2 (n_embd 32, context 512) with the tests' byte-level BPE tokenizer, writes the choice
prompts of the first ``--score-examples`` examples (4 rows each: 233,968 rows for all), runs the likelihood runner
on them and scores the answers with ``stats bbq`` (``score_files``). The tiny model makes the runner's own cost
visible (batching, the span, the table), not a real model's.

``--compare-examples N`` first scores the first N examples both ways, side by side on the same examples: each text
in its own forward pass (``share_prefix=False``, the runner before 2026-12-05) and the default, where the four rows
of an example run their shared context and question once (``share_prefix``, see
``biaskit.evaluate.runners._hf_likelihood``). ``--score-examples`` then runs the default way. Scoring runs on one
torch thread by default (``--threads``): on a shared 2-core machine a second thread spends its time waiting, which
counts as CPU time (1,000 examples took 24.6 CPU s one way and 39.4 s the other with 2 threads at load 12-14, and
6.1 s and 1.4 s for 500 examples with 1 thread).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKENIZER = ROOT / "tests" / "evaluate" / "runners" / "data" / "tiny_bpe.json"

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, out, n, device, batch = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
share, threads = sys.argv[7] == "1", int(sys.argv[8])
t0 = time.perf_counter()
c0 = time.process_time()
if mode == "expand":
    from biaskit.templates.bbq import write_expansion
    table, _ = write_expansion(out / "bbq.parquet", seed=0)
    rows = table.num_rows
    extra = {}
else:
    import torch
    from tokenizers import Tokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast
    from biaskit.io import read_table, write_table
    from biaskit.templates.bbq import expand_bbq
    from biaskit.templates.bbq_choice import choice_prompts
    from biaskit.bootstrap import BootSpec
    from biaskit.evaluate.runners import likelihood
    from biaskit.evaluate.stats.bbq import LikelihoodAnswers, score_files
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_file(sys.argv[6]), bos_token="<|endoftext|>",
                                  eos_token="<|endoftext|>", unk_token="<|endoftext|>", pad_token="<|endoftext|>")
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(0)
    model_dir = out / "tiny"
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=512)).save_pretrained(model_dir)
    tok.save_pretrained(model_dir)
    ex = expand_bbq(seed=0).slice(0, n)
    write_table(ex, out / "bbq.parquet")
    write_table(choice_prompts(ex), out / "choices.parquet")
    t1, cpu1 = time.perf_counter(), time.process_time()
    likelihood(str(out / "choices.parquet"), model=str(model_dir), span_column="answer_span", device=device,
               batch_size=int(batch), out=str(out / "ll.parquet"), backend_options={"share_prefix": share}, progress=False)
    t2, cpu2 = time.perf_counter(), time.process_time()
    scores = score_files(out / "bbq.parquet", likelihoods=LikelihoodAnswers(out / "ll.parquet", normalisation="per-token"), boot=BootSpec(n_boot=200))
    rows = n
    extra = {"share_prefix": share, "torch_threads": torch.get_num_threads(), "likelihood_s": round(t2 - t1, 2),
             "likelihood_cpu_s": round(cpu2 - cpu1, 2), "stats_s": round(time.perf_counter() - t2, 2),
             "unscored": int(scores["n_unmatched"].sum()), "score_rows": len(scores)}
print(json.dumps({"mode": mode, "rows": rows, "wall_s": round(time.perf_counter() - t0, 2),
                  "cpu_s": round(time.process_time() - c0, 2),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1), **extra}))
"""


def run(mode: str, n: int, device: str, batch: str, share: bool = True, threads: int = 1) -> dict:
    with tempfile.TemporaryDirectory() as d:
        argv = [sys.executable, "-c", CHILD, mode, d, str(n), device, batch, str(TOKENIZER), "1" if share else "0", str(threads)]
        r = subprocess.run(argv, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise SystemExit(f"{mode} failed:\n{r.stderr[-3000:]}")
        return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--compare-examples", type=int, default=1000, help="examples to score both ways, side by side (0: skip)")
    ap.add_argument("--score-examples", type=int, default=58492, help="examples to score (0: skip scoring)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch-size", default="64")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default); see the module docs")
    args = ap.parse_args()
    for _ in range(args.repeat):
        print(json.dumps(run("expand", 0, args.device, args.batch_size)))
    for share in (False, True) if args.compare_examples else ():
        print(json.dumps(run("score", args.compare_examples, args.device, args.batch_size, share, args.threads)))
    if args.score_examples:
        print(json.dumps(run("score", args.score_examples, args.device, args.batch_size, True, args.threads)))


if __name__ == "__main__":
    main()
