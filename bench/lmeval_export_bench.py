"""Benchmark: `biaskit export lm-eval` of the full HolisticBias v1.1 sentence set (566,625 rows, 13 axes).

Side by side, each in its own subprocess (so peak RSS, ru_maxrss, is measured per approach):
- biaskit: ``export_lmeval`` (Arrow filters per axis, Parquet data files, YAMLs, README, manifest);
- naive: the same task split written as JSON Lines docs, one ``json.dumps`` per row from ``to_pylist()`` (what a
  hand-written exporter for lm-eval's ``dataset_path: json`` usually does).
The input table is expanded once beforehand (not timed). Wall time includes importing pyarrow/biaskit.
Usage: python bench/lmeval_export_bench.py [--repeat 3]
Target (issue 26): under 30 s and under 1 GB peak RSS for the biaskit path on a 2-core machine.
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


def run(mode: str, src: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, str(src), str(out)], capture_output=True, text=True, check=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["data_mb"] = round(sum(f.stat().st_size for f in (out / "data").iterdir()) / 2**20, 1)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from biaskit.templates.holistic import write_holistic

    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "hb_v11.parquet"
        n = write_holistic(src, "v1.1").rows
        print(f"input: HolisticBias v1.1, {n} rows, {src.stat().st_size / 2**20:.1f} MB Parquet")
        for i in range(args.repeat):
            for mode in ("biaskit", "naive"):
                print(json.dumps(run(mode, src, Path(d) / f"{mode}-{i}")))


if __name__ == "__main__":
    main()
