"""The model card (``README.md``) of ``biaskit train classifier`` from metrics.json's content, and the checks of the
one-line texts it shows (see :mod:`biaskit.train.classifier`)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics.catalog import labels_of


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


def describe_task(labels: Sequence[str], label_column: str, task: str | None) -> str:
    """What the classifier predicts, in words, from ``--task`` or else the label column and classes."""
    classes = ", ".join(f"`{_md(c)}`" for c in labels)
    if task:
        return f"{_md(task)} ({classes})"
    return f"the labels of column `{_md(label_column)}` ({classes})"


def _md(s: Any) -> str:
    """Text from the data for one Markdown table cell / line: no newlines, pipes or backticks that would change the card."""
    return " ".join(str(s).split()).replace("|", "\\|").replace("`", "'")


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
