"""Measure: share of real sentences HONEST flags, biaskit (default and named variants) vs the honest package.

    .venv/bin/python bench/honest_reference.py --hurtlex path/to/hurtlex_EN.tsv --bold path/to/bold [--n 2000]

Sentences: ``--n`` Wikipedia sentences of BOLD's ``wikipedia/*_wiki.json`` (seeded sample, every domain),
scored in sentence mode. The reference is ``honest.honest.HonestEvaluator("en").honest_score_inner_sentence``
(honest 0.2.1) with its HurtLex download redirected to ``--hurtlex``. Prints a Markdown table (copied into
docs/metrics.md) and the number of sentences on which biaskit's default and the package disagree (must be 0).
Needs the dev extra (``honest``); HurtLex is CC BY-NC-SA and is read from the given path only.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path


def sentences(bold: Path, n: int, seed: int) -> list[str]:
    out = []
    for f in sorted((bold / "wikipedia").glob("*_wiki.json")):
        for group in json.loads(f.read_text(encoding="utf-8")).values():
            for texts in group.values():
                out += [t for t in texts if isinstance(t, str) and t.strip()]
    random.Random(seed).shuffle(out)
    return out[:n]


def reference_flags(texts: list[str], hurtlex: Path) -> tuple[list[bool], list[str]]:
    import honest.honest as hh
    import pandas as pd

    class _Pandas:
        def __getattr__(self, name):
            return getattr(pd, name)

        def read_csv(self, path, *a, **k):
            return pd.read_csv(hurtlex if str(path).startswith("https://") else path, *a, **k)

    hh.pd = _Pandas()
    ev = hh.HonestEvaluator("en")
    inner = ev.honest_score_inner_sentence([texts])
    return [bool(d["count"]) for d in inner], [next((c for c, v in d.items() if c != "count" and v), "") for d in inner]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hurtlex", type=Path, required=True)
    ap.add_argument("--bold", type=Path, required=True)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    import pyarrow as pa

    from biaskit.evaluate.metrics import score_table

    texts = sentences(a.bold, a.n, a.seed)
    t0 = time.perf_counter()
    ref, ref_cats = reference_flags(texts, a.hurtlex)
    t_ref = time.perf_counter() - t0
    rows = [("honest package 0.2.1 (reference)", ref, t_ref)]
    runs = {
        "biaskit default (matching=honest)": {},
        "biaskit matching=casefold (variant)": {"matching": "casefold"},
        "biaskit matching=lemma (variant)": {"matching": "lemma"},
        "biaskit level=inclusive (variant)": {"level": "inclusive"},
    }
    flagged: dict[str, list[bool]] = {}
    cats: dict[str, list[str]] = {}
    for name, extra in runs.items():
        t0 = time.perf_counter()
        out = score_table(
            pa.table({"continuation": texts}),
            ["honest"],
            params={"honest": {"lexicon": str(a.hurtlex), "mode": "sentence", "language": "en", **extra}},
        )
        flagged[name] = out.column("honest_hurtful").to_pylist()
        cats[name] = out.column("honest_categories").to_pylist()
        rows.append((name, flagged[name], time.perf_counter() - t0))
    print(f"{len(texts)} BOLD Wikipedia sentences (seed {a.seed}), real HurtLex EN, sentence mode\n")
    print("| scorer | flagged | share |")
    print("|---|---|---|")
    for name, f, _ in rows:
        print(f"| {name} | {sum(f)} | {sum(f) / len(f):.1%} |")
    diff = sum(x != y for x, y in zip(ref, flagged["biaskit default (matching=honest)"]))
    cdiff = sum(x != y for x, y in zip(ref_cats, cats["biaskit default (matching=honest)"]))
    print(f"\nsentences where biaskit's default and the package disagree: {diff} (flag), {cdiff} (category credited)")


if __name__ == "__main__":
    main()
