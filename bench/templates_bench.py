"""Benchmark: full HolisticBias v1.0 expansion to Parquet, vectorised (biaskit) vs naive row-by-row Python.

Each approach runs in its own subprocess so peak RSS (ru_maxrss) is measured separately; wall time and
CPU time (user + sys, which a busy shared machine distorts less) are both reported.
Usage: python bench/templates_bench.py [--version v1.0] [--repeat 3]
Target (issue 4): under 2 s and under 300 MB peak RSS for the biaskit path on a 2-core machine.
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
mode, version, out = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()  # includes importing pyarrow/numpy/biaskit
if mode == "biaskit":
    from biaskit.templates.holistic import write_holistic
    rows = write_holistic(out, version).rows
else:
    # naive: one dict per row in Python, then one Arrow table, then Parquet
    import pyarrow as pa, pyarrow.parquet as pq
    from biaskit.templates.holistic_data import load_holistic
    from biaskit.templates.holistic_phrases import noun_phrases
    from biaskit.templates.holistic_plan import _templates
    data = load_holistic(version)
    tpls = _templates(data)
    recs = []
    for np_ in noun_phrases(data):
        for t in tpls:
            if np_["noun"] is None and t.must_be_noun:
                continue
            phrase = np_["plural_noun_phrase"] if t.plural else np_["noun_phrase"]
            recs.append({"text": t.prefix + phrase + t.suffix, **np_, "template": t.template,
                         "first_turn_only": t.first_turn_only, "must_be_noun": t.must_be_noun})
    pq.write_table(pa.Table.from_pylist(recs), out)
    rows = len(recs)
elapsed = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"mode": mode, "rows": rows, "seconds": round(elapsed, 3), "cpu_seconds": round(ru.ru_utime + ru.ru_stime, 3),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def run(mode: str, version: str, out: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, version, str(out)], capture_output=True, text=True, check=True)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["file_mb"] = round(out.stat().st_size / 2**20, 1)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--version", default="v1.0")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        for mode in ("biaskit", "naive"):
            runs = [run(mode, args.version, Path(d) / f"{mode}.parquet") for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r["seconds"])
            print(
                f"{mode:<8} rows={best['rows']:,} best_of_{args.repeat}={best['seconds']:.2f}s "
                f"cpu={min(r['cpu_seconds'] for r in runs):.2f}s "
                f"peak_rss={max(r['peak_rss_mb'] for r in runs):.0f}MB parquet={best['file_mb']}MB"
            )


if __name__ == "__main__":
    main()
