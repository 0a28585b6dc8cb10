"""Judge tasks: the instruction, the label words and their order, read from YAML task files.

A task file (the built-in ones live in ``biaskit/data/judge/``)::

    name: sentiment
    labels: [positive, neutral, negative]      # the label words, in the order the prompt lists them
    ordinal: [negative, neutral, positive]     # optional: low to high end (gives judge_score)
    system: "..."                              # optional system message
    instruction: |-
      What sentiment does the following text express?
      Answer with exactly one word from this list: {labels}.

      Text: {text}

``{labels}`` becomes the label words joined by ", " in the order of the prompt variant (the task's order, or a
permutation of it with ``judge.orders=K``); ``{text}`` becomes the text judged. Labels are Unicode, normalised
to NFC (``stance:ano,ne,možná`` works). ``judge.task`` takes ``sentiment``, ``regard``, ``toxicity``,
``stance:LABEL,LABEL,...`` or a path to such a file.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from biaskit.errors import BiaskitError

BUILTIN_TASKS = ("sentiment", "regard", "toxicity")
#: the instruction's placeholders, filled in one pass (:meth:`JudgeTask.messages`)
PLACEHOLDER = re.compile(r"\{(labels|text)\}")
_DATA = Path(__file__).resolve().parents[2] / "data" / "judge"


def nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s)


@dataclass(frozen=True)
class JudgeTask:
    """One judge task (see the module docs); ``source`` says where it came from (a file or ``stance:...``)."""

    name: str
    labels: tuple[str, ...]
    instruction: str
    ordinal: tuple[str, ...] = ()
    system: str = ""
    source: str = ""

    def canonical(self) -> str:
        """The task as canonical JSON (what ``sha256`` hashes: instruction, system, labels and their order)."""
        d = {"name": self.name, "labels": list(self.labels), "ordinal": list(self.ordinal), "system": self.system, "instruction": self.instruction}
        return json.dumps(d, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    def messages(self, text: str, order: tuple[str, ...]) -> list[dict[str, str]]:
        """The chat messages of ``text`` with the labels listed in ``order``."""
        # one pass over the instruction: a label or a text holding "{text}" or "{labels}" is never read again
        fill = {"labels": ", ".join(order), "text": text}
        user = PLACEHOLDER.sub(lambda m: fill[m.group(1)], self.instruction)
        msgs = [{"role": "system", "content": self.system}] if self.system else []
        return msgs + [{"role": "user", "content": user}]


def prompt_sha256(tasks: list[JudgeTask]) -> str:
    """sha256 of the canonical JSON of the task and its paraphrased instructions (in the order used)."""
    return hashlib.sha256(("\n".join(t.canonical() for t in tasks)).encode("utf-8")).hexdigest()


def _bad(what: str, value, fix: str) -> BiaskitError:
    return BiaskitError("E320", what, value=value, fix=fix)


def _check_labels(labels: Any, where: str) -> tuple[str, ...]:
    if not isinstance(labels, list) or len(labels) < 2:
        raise _bad(f"a judge task needs a list of at least 2 label words ({where})", labels, "write labels: [positive, neutral, negative]")
    out = []
    for lab in labels:
        if isinstance(lab, (bool, int, float)):
            raise _bad(
                f"judge label {lab!r} was read by YAML as a {type(lab).__name__}, not a word ({where})",
                lab,
                'quote the labels in the task file: labels: ["yes", "no"] (YAML reads yes/no/on/off as booleans)',
            )
        if not isinstance(lab, str) or not lab.strip() or lab != lab.strip() or "," in lab or "\n" in lab:
            raise _bad(
                f"judge label {lab!r} is not a word ({where})", lab, "give each label as a non-empty word without commas or surrounding spaces"
            )
        out.append(nfc(lab))
    if len(set(out)) != len(out):
        raise _bad(f"the judge labels are not distinct ({where})", out, "list each label once")
    return tuple(out)


def _from_mapping(d: object, where: str, labels: tuple[str, ...] | None = None) -> JudgeTask:
    if not isinstance(d, dict):
        raise _bad(f"a judge task file must hold a mapping ({where})", type(d).__name__, "see docs/metrics.md, judge: task files")
    unknown = sorted(set(d) - {"name", "labels", "ordinal", "system", "instruction"})
    if unknown:
        raise _bad(f"unknown keys in the judge task file {where}", unknown, "use name, labels, ordinal, system, instruction")
    instr = d.get("instruction")
    if not isinstance(instr, str) or "{text}" not in instr or "{labels}" not in instr:
        raise _bad(
            f"the judge task's instruction must be text holding {{text}} and {{labels}} ({where})",
            instr if not isinstance(instr, str) else instr[:80],
            "write instruction: '... Answer with one word from this list: {labels}. Text: {text}'",
        )
    labs = labels or _check_labels(d.get("labels"), where)
    ordinal = tuple(nfc(x) for x in (d.get("ordinal") or []) if isinstance(x, str))
    if labels is None and (len(ordinal) != len(d.get("ordinal") or []) or any(x not in labs for x in ordinal)):
        raise _bad(f"the ordinal list names labels the task does not have ({where})", d.get("ordinal"), f"use labels of {list(labs)}")
    system = d.get("system") or ""
    if not isinstance(system, str):
        raise _bad(f"the judge task's system message must be text ({where})", system, "write system: '...' or leave it out")
    return JudgeTask(str(d.get("name") or Path(where).stem), labs, nfc(instr), ordinal, nfc(system), where)


def _read_yaml(path: Path) -> object:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise _bad(f"cannot read the judge task file {path}: {str(exc).splitlines()[0]}", str(path), "give a readable UTF-8 YAML file") from None


def load_task(spec: str) -> JudgeTask:
    """The task ``spec`` names: a built-in name, ``stance:LABELS`` or a YAML file path (E320 when malformed)."""
    spec = nfc(str(spec).strip())
    if spec in BUILTIN_TASKS:
        return _from_mapping(_read_yaml(_DATA / f"{spec}.yaml"), spec)
    if spec.startswith("stance:"):
        labels = _check_labels([x.strip() for x in spec[len("stance:") :].split(",") if x.strip()], spec)
        return _from_mapping(_read_yaml(_DATA / "stance.yaml"), spec, labels=labels)
    p = Path(spec).expanduser()
    if p.suffix.lower() in (".yaml", ".yml") and p.is_file():
        return _from_mapping(_read_yaml(p), str(p))
    raise _bad(
        "unknown judge task",
        spec,
        "use judge.task=sentiment, regard, toxicity, stance:LABEL,LABEL,... or the path of a task .yaml file",
    )


def load_instruction(spec: str, task: JudgeTask) -> JudgeTask:
    """A paraphrased instruction for ``task`` (``judge.instructions=a.yaml,...``): a task file whose labels, when
    it lists any, are the task's labels (same words; its order is the task's), or the name of one that biaskit ships
    (``sentiment_paraphrase``)."""
    p = Path(spec.strip()).expanduser()
    shipped = _DATA / f"{nfc(spec.strip())}.yaml"
    if not p.is_file() and "/" not in spec and shipped.is_file():
        p = shipped
    if not p.is_file():
        names = sorted(f.stem for f in _DATA.glob("*.yaml") if f.stem not in BUILTIN_TASKS and f.stem != "stance")
        raise _bad(
            "no such judge instruction file",
            spec,
            f"give existing .yaml files (judge.instructions=a.yaml,b.yaml) or a shipped one: {', '.join(names)}",
        )
    d = _read_yaml(p)
    if isinstance(d, dict) and d.get("labels"):
        labs = _check_labels(d.get("labels"), str(p))
        if set(labs) != set(task.labels):
            raise _bad(f"the instruction file {p} has other labels than the task", labs, f"use the task's labels {list(task.labels)}")
    alt = _from_mapping({**d, "labels": list(task.labels)} if isinstance(d, dict) else d, str(p), labels=task.labels)
    return JudgeTask(alt.name, task.labels, alt.instruction, task.ordinal, alt.system, alt.source)


def orders(labels: tuple[str, ...], k: int) -> list[tuple[str, ...]]:
    """``k`` distinct orders of ``labels``: the task's own, then reversed, then the other rotations (cyclic shifts),
    then further permutations in lexicographic order of positions (E321 when ``k`` is more than there are).

    The orders are drawn lazily, one at a time, until ``k`` are found: a 12-label task never builds its 12! orders
    (memory grows with ``k``, not with the number of permutations)."""
    n = len(labels)
    total = math.factorial(n)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1 or k > total:
        raise BiaskitError(
            "E321",
            f"judge.orders must be between 1 and {total} (the orders of {n} labels)",
            value=k,
            fix=f"use judge.orders=2 (the task's order and its reverse), at most {total}",
        )
    out: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()
    for c in _candidate_orders(tuple(labels)):
        if c not in seen:
            seen.add(c)
            out.append(c)
        if len(out) == k:
            break
    return out


def _candidate_orders(labels: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """The candidates of :func:`orders`, generated lazily (repeats possible; :func:`orders` drops them)."""
    n = len(labels)
    yield labels
    yield tuple(reversed(labels))
    for i in range(1, n):
        yield labels[i:] + labels[:i]
    for p in itertools.permutations(range(n)):
        yield tuple(labels[i] for i in p)
