"""Count BBQ's published examples per (category, question_index, context_condition, question_polarity).

Usage (from the repository root, with a local copy of BBQ's ``data/`` folder, e.g. a clone of nyu-mll/BBQ):

    python scripts/bbq_published_counts.py PATH/TO/BBQ/data --out tests/fixtures/bbq/published_counts.csv

It reads every ``<Category>.jsonl`` in the folder and writes one row per cell with its count ``n``, sorted.
tests/templates/test_bbq_counts.py asserts that ``biaskit expand bbq`` gives the same counts. The fixture
was made from the 6 files of nyu-mll/BBQ @ bea11bd that fit in the development copy (Age, Disability_status,
Nationality, Physical_appearance, Religion, Sexual_orientation).
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
from pathlib import Path

KEY = ("category", "question_index", "context_condition", "question_polarity")


def count(folder: Path) -> dict[tuple[str, ...], int]:
    counts: collections.Counter[tuple[str, ...]] = collections.Counter()
    for path in sorted(folder.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    counts[tuple(str(row[k]) for k in KEY)] += 1
    return dict(counts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, help="folder with BBQ's published <Category>.jsonl files")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    counts = count(args.data)
    rows = sorted(counts.items(), key=lambda kv: (kv[0][0], int(kv[0][1]), kv[0][2], kv[0][3]))
    with args.out.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow([*KEY, "n"])
        for key, n in rows:
            w.writerow([*key, n])
    print(f"wrote {args.out}: {len(rows)} cells, {sum(counts.values())} examples")


if __name__ == "__main__":
    main()
