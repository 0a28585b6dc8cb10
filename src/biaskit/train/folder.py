"""The output folder of ``biaskit train classifier``: the model saved, files and marker committed, the job's
fingerprint and split.csv (see :mod:`biaskit.train.classifier`)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from biaskit.output import write_text
from biaskit.ownership import write_owned_folder
from biaskit.spreadsheet import neutralize
from biaskit.train.config import TrainConfig
from biaskit.train.data import LabelledData

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


def commit(claim, meta: dict[str, Any], texts: dict[str, str], *, keep: bool, trained: tuple[Any, Any] | None = None) -> None:
    """Commit ``texts`` (relative path -> text) and ``trained`` (the model and its tokenizer) when given, then the
    marker ``meta``; the earlier files of biaskit's stay when ``keep`` (a resumed job, a later run), else those not
    written again are removed."""

    def fill(tmp: Path) -> None:
        if trained is not None and trained[0] is not None:
            _save_model(trained[0], trained[1], tmp)
        for rel, text in texts.items():
            write_text(tmp / rel, text)

    write_owned_folder(claim, fill, meta, keep=claim.owned if keep else ())


def train_fingerprint(data: LabelledData, cfg: TrainConfig, finetune: bool, base: str | None) -> str:
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


def split_csv(data: LabelledData, split: tuple[list[int], list[int], list[int]]) -> str:
    """row,label,part with csv quoting (a label may hold a comma, a quote or a newline) and formula cells neutralised."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["row", "label", "part"])
    for part, ix in zip(("train", "dev", "test"), split):
        for i in ix:
            w.writerow([i, neutralize(data.labels[data.y[i]]), part])
    return buf.getvalue()
