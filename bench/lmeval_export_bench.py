"""Benchmark: `biaskit export lm-eval` of the full HolisticBias v1.1 sentence set (566,625 rows, 13 axes).

Side by side, each in its own subprocess (so peak RSS, ru_maxrss, is measured per approach):
- biaskit: ``export_lmeval`` (Arrow filters per axis, Parquet data files, YAMLs, README, manifest);
- naive: the same task split written as JSON Lines docs, one ``json.dumps`` per row from ``to_pylist()`` (what a
  hand-written exporter for lm-eval's ``dataset_path: json`` usually does).
The input table is expanded once beforehand (not timed). Wall time includes importing pyarrow/biaskit.
Usage: python bench/lmeval_export_bench.py [--repeat 3] [--import-rows N]
Target (issue 26): under 30 s and under 1 GB peak RSS for the biaskit path on a 2-core machine.

With ``--import-rows N`` (0: skip) it also times ``import_lmeval`` on N HolisticBias sentences laid out as lm_eval
0.4.13 writes ``loglikelihood_rolling`` samples (one line per doc, the log-likelihood as a string; the values are
placeholders, the layout and sizes are real), counting tokens with the packaged SmolLM2 tokenizer.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
mode, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
if mode == "biaskit":
    from biaskit.interop.lmeval import export_lmeval
    res = export_lmeval(src, out, name="hb")
    rows, tasks = sum(res.tasks.values()), len(res.tasks)
else:
    import os
    import pyarrow.compute as pc, pyarrow.parquet as pq
    t = pq.read_table(src)
    os.makedirs(out + "/data")
    rows = tasks = 0
    for axis in t.column("axis").unique().to_pylist():
        part = t.filter(pc.is_null(t["axis"]) if axis is None else pc.fill_null(pc.equal(t["axis"], axis), False))
        with open(f"{out}/data/hb_{axis}.jsonl", "w", encoding="utf-8") as fh:
            for r in part.to_pylist():
                r["lm_input"] = r["text"]
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        rows += part.num_rows
        tasks += 1
elapsed = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"mode": mode, "rows": rows, "tasks": tasks, "seconds": round(elapsed, 2),
                  "cpu_seconds": round(ru.ru_utime + ru.ru_stime, 2), "peak_rss_mb": round(ru.ru_maxrss / 1024, 1)}))
"""


IMPORT_CHILD = r"""
import json, resource, sys, time
src, tok = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
from biaskit.interop.lmeval import import_lmeval
res = import_lmeval(src, tokenizer=tok)
elapsed = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"mode": "import", "rows": res.table.num_rows, "seconds": round(elapsed, 2),
                  "cpu_seconds": round(ru.ru_utime + ru.ru_stime, 2), "peak_rss_mb": round(ru.ru_maxrss / 1024, 1)}))
"""


def fake_lm_eval_output(task_folder: Path, out: Path, n: int) -> int:
    """lm_eval-style samples/results files for the first n docs of an export (placeholder log-likelihoods)."""
    import hashlib

    import pyarrow.parquet as pq
    import yaml

    date = "2026-12-01T00-00-00.000000"
    out.mkdir(parents=True)
    configs, left, written = {}, n, 0
    for y in sorted(task_folder.glob("hb_*.yaml")):
        cfg = yaml.safe_load(y.read_text())
        configs[cfg["task"]] = cfg
        docs = pq.read_table(cfg["dataset_kwargs"]["data_files"]["test"]).slice(0, max(left, 0)).to_pylist()
        with open(out / f"samples_{cfg['task']}_{date}.jsonl", "w", encoding="utf-8") as fh:
            for i, d in enumerate(docs):
                h = hashlib.sha256(d["lm_input"].encode()).hexdigest()
                fh.write(
                    json.dumps(
                        {
                            "doc_id": i,
                            "doc": d,
                            "target": d["lm_input"],
                            "arguments": {"gen_args_0": {"arg_0": d["lm_input"]}},
                            "resps": [["-30.04416275024414"]],
                            "filtered_resps": ["-30.04416275024414"],
                            "filter": "none",
                            "metrics": ["word_perplexity", "byte_perplexity", "bits_per_byte"],
                            "doc_hash": h,
                            "prompt_hash": h,
                            "target_hash": h,
                            "word_perplexity": [-30.04, 4],
                            "byte_perplexity": [-30.04, 24],
                            "bits_per_byte": [-30.04, 24],
                        },
                        ensure_ascii=False,
                    )
                    + "\n"
                )
        left -= len(docs)
        written += len(docs)
    (out / f"results_{date}.json").write_text(
        json.dumps(
            {
                "configs": configs,
                "config": {"model": "hf", "model_args": "pretrained=smollm2-135m"},
                "lm_eval_version": "0.4.13",
                "model_name": "smollm2-135m",
            }
        )
    )
    return written


def run(mode: str, src: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, str(src), str(out)], capture_output=True, text=True, check=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["data_mb"] = round(sum(f.stat().st_size for f in (out / "data").iterdir()) / 2**20, 1)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--import-rows", type=int, default=0)
    args = ap.parse_args()
    from biaskit.templates.holistic import write_holistic

    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "hb_v11.parquet"
        n = write_holistic(src, "v1.1").rows
        print(f"input: HolisticBias v1.1, {n} rows, {src.stat().st_size / 2**20:.1f} MB Parquet")
        for i in range(args.repeat):
            for mode in ("biaskit", "naive"):
                print(json.dumps(run(mode, src, Path(d) / f"{mode}-{i}")))
        if args.import_rows:
            from biaskit.interop.lmeval import export_lmeval

            export_lmeval(src, Path(d) / "tasks", name="hb")
            n = fake_lm_eval_output(Path(d) / "tasks", Path(d) / "lm-eval-out", args.import_rows)
            size = sum(f.stat().st_size for f in (Path(d) / "lm-eval-out").iterdir()) / 2**20
            print(f"import input: {n} samples, {size:.0f} MB of samples files")
            proc = subprocess.run(
                [sys.executable, "-c", IMPORT_CHILD, str(Path(d) / "lm-eval-out"), "smollm2-135m"], capture_output=True, text=True, check=True
            )
            print(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
