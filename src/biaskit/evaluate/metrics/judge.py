"""LLM-as-judge: a chat model (local, or behind an OpenAI-compatible server) labels each text.

The model is reached through the backend registry (:data:`biaskit.registry.backends`): ``judge.backend`` names any
registered backend whose capabilities declare what the judge needs (``Capabilities.judge``: ``chat_template`` and
``logprobs``, :mod:`biaskit.evaluate.runners.backend`), and the judge asks that backend for a session
(``judge_session``), never which backend it is. The label is read from the model's next-token distribution
restricted to the task's label words (the hf backend, :mod:`biaskit.evaluate.runners.judge_hf`: the first token of
each label, or the summed log-probabilities of all its tokens; the openai backend,
:mod:`biaskit.evaluate.runners.judge_openai`: ``top_logprobs`` of ``/v1/chat/completions``), never parsed from
generated text. The task (instruction, label words, their order) is a YAML file (:mod:`.judge_tasks`).

Consistency, in the same run: ``orders=K`` asks each text with the labels listed in K orders
(``judge_flip``: the label changed with the order); ``instructions=a.yaml,b.yaml`` asks it again with
paraphrased instructions (``judge_prompt_flip``); the ``judge_p_<label>`` columns are the mean of the
restricted distributions over all these prompts, and ``judge_label`` their argmax (ties: the task's first
label). ``repeats=R`` (R >= 2) draws R sampled answers to the task's own prompt (``judge_retest``: all R drew
the same label). Columns: ``judge_label``, ``judge_p_<label>`` (sum to 1), ``judge_score`` (ordinal tasks: the
expected position on [-1, 1] of the ordinal labels), ``judge_flip`` (with ``orders`` > 1), ``judge_prompt_flip``
(with ``instructions``), ``judge_retest`` (with ``repeats``),
``judge_prompt_sha256`` (the task and instructions, see :func:`.judge_tasks.prompt_sha256`), ``judge_prompt``
(the rendered prompt of the task's own order), ``judge_tokens_in``, ``judge_tokens_out`` and ``judge_error``.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
import pyarrow as pa

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics.base import Metric, Param
from biaskit.evaluate.metrics.judge_tasks import load_instruction, load_task, orders, prompt_sha256
from biaskit.evaluate.runners.backend import JUDGE_NEEDS, Capabilities, JudgeAnswer, JudgeSettings, capabilities_of
from biaskit.evaluate.runners.builtin import make_backend, parse_options
from biaskit.evaluate.runners.common import derive_seed, public_model_id
from biaskit.jsonread import loads_json
from biaskit.registry import backends

#: judge parameters handed to the backend's constructor when the backend declares the option (Capabilities.options)
BACKEND_OPTIONS = ("base_url", "api_key_env", "timeout", "max_retries", "concurrency", "extra_body", "device", "dtype")
#: characters per token of the --dry-run estimate (no tokenizer is loaded for it)
CHARS_PER_TOKEN = 4.0
#: tokens a chat template adds per message in the --dry-run estimate
TEMPLATE_TOKENS = 8


def _split(s: Any) -> list[str]:
    return [x.strip() for x in str(s or "").split(",") if x.strip()]


class JudgeMetric(Metric):
    name = "judge"
    version = "1"
    description = "LLM-as-judge: a chat model's label from its next-token probabilities over the label words, with order/prompt/retest checks"
    source = "label words scored by next-token log-probabilities (a local chat model via transformers, or an OpenAI-compatible server)"
    default_batch_size = 64
    keep_on_error = ("prompt_sha256", "prompt", "tokens_in", "tokens_out")
    #: out of the cache key: the model is there as its identity (:meth:`cache_identity`), and the rest is how the
    #: model is reached and how fast (the device and dtype are there as resolved, by the local judge's identity)
    cache_ignores = ("model", "base_url", "api_key_env", "concurrency", "timeout", "max_retries", "device", "dtype")
    params = (
        Param("model", "smollm2-135m", "judge model: biaskit asset (smollm2-135m), Hub id or local folder (hf); the served model name (openai)"),
        Param(
            "backend",
            "hf",
            "a registered model backend that can judge (declares chat_template and logprobs): hf (local transformers chat model), "
            "openai (an OpenAI-compatible server) or a plugin's",
        ),
        Param("base_url", None, "the server's base URL, e.g. http://127.0.0.1:8080/v1 (backend=openai; default $OPENAI_BASE_URL)"),
        Param("api_key_env", "OPENAI_API_KEY", "environment variable holding the server's API key (never written anywhere)"),
        Param("task", "sentiment", "sentiment, regard, toxicity, stance:LABEL,LABEL,... or a task .yaml file (instruction, labels, order)"),
        Param(
            "label_scoring",
            "first",
            "first (first token of each label) or sum (summed log-probs of all its tokens; hf only)",
            choices=("first", "sum"),
        ),
        Param(
            "orders", 2, "ask with the labels in this many orders (judge_flip; probabilities averaged over orders; K forward passes per text)", "int"
        ),
        Param("instructions", "", "comma-separated paraphrased instruction .yaml files asked as well (judge_prompt_flip)"),
        Param("repeats", 0, "draw this many sampled answers (>= 2) for test-retest agreement (judge_retest)", "int"),
        Param("temperature", 1.0, "sampling temperature of the repeats", "float"),
        Param("seed", 0, "seed of the repeats' sampling", "int"),
        Param("batch_size", 8, "prompts per forward pass (hf)", "int"),
        Param("device", "auto", "auto, cpu, cuda or mps (hf)"),
        Param("dtype", "auto", "auto, float32, float16 or bfloat16 (hf)"),
        Param("top_logprobs", 20, "top tokens the server returns per answer (openai; OpenAI allows at most 20)", "int"),
        Param(
            "token_match",
            "prefix",
            "openai: a top token counts for a label when it is a prefix of only that label (prefix) or the whole label (exact)",
            choices=("prefix", "exact"),
        ),
        Param(
            "extra_body",
            "",
            'JSON object of extra request fields (openai), e.g. {"cache_prompt": false} for llama.cpp answers that do not depend on its prompt cache',
        ),
        Param("concurrency", 4, "requests in flight (openai)", "int"),
        Param(
            "backend_options",
            "",
            "options the backend declares for --backend-option (biaskit backends list), as KEY=VALUE pairs separated by ';', "
            "e.g. backoff=0.5;max_backoff=10 (openai)",
        ),
        Param("timeout", 60.0, "seconds per request (openai; positive and finite)", "float"),
        Param("max_retries", 4, "retries per request (openai)", "int"),
        Param("record_prompt", True, "write the rendered prompt of each row (judge_prompt)", "bool"),
    )

    def _check_config(self) -> None:
        c = self.config
        self.task = load_task(c["task"])
        self.prompts = [self.task] + [load_instruction(s, self.task) for s in _split(c["instructions"])]
        self.orders = orders(self.task.labels, c["orders"])
        if c["repeats"] not in (0,) and (c["repeats"] < 2 or c["repeats"] > 100):
            raise BiaskitError("E324", "judge.repeats must be 0 or between 2 and 100", value=c["repeats"], fix="e.g. judge.repeats=5")
        if c["repeats"] and not (math.isfinite(c["temperature"]) and c["temperature"] > 0):
            raise BiaskitError(
                "E324", "judge.temperature must be above 0 to sample repeats", value=c["temperature"], fix="e.g. judge.temperature=1.0"
            )
        for k in ("batch_size", "top_logprobs", "concurrency"):
            if c[k] < 1:
                raise BiaskitError("E324", f"judge.{k} must be at least 1", value=c[k], fix=f"e.g. judge.{k}=8")
        if not (math.isfinite(c["timeout"]) and c["timeout"] > 0):
            raise BiaskitError("E324", "judge.timeout must be a positive, finite number of seconds", value=c["timeout"], fix="e.g. judge.timeout=60")
        if c["max_retries"] < 0:
            raise BiaskitError("E324", "judge.max_retries must be 0 or more", value=c["max_retries"], fix="e.g. judge.max_retries=4")
        self.caps = judge_capabilities(c["backend"])
        if "top_k" in self.caps.judge and c["label_scoring"] == "sum":
            raise BiaskitError(
                "E324",
                f"judge.label_scoring=sum needs a backend that gives every token's log-probability; the {c['backend']} backend gives "
                "only the top tokens of the first answer token (a server)",
                value="sum",
                fix=f"use judge.label_scoring=first with backend={c['backend']}, or judge.backend=hf",
            )
        self.extra_body = _extra_body(c["extra_body"], c["backend"], self.caps)
        self.backend_options = _declared_options(c["backend"], c["backend_options"], self.caps)
        #: the id sent to a server; the config (and so the manifest) keeps a local path's file name only
        self.served_model = c["model"]
        if "served_model" in self.caps.options and isinstance(c["model"], str):
            c["model"] = public_model_id(c["model"])
        self.sha256 = prompt_sha256(self.prompts)
        self.info.update(
            {
                "task": self.task.name,
                "task_source": self.task.source,
                "labels": list(self.task.labels),
                "prompt_sha256": self.sha256,
                "orders": [list(o) for o in self.orders],
                "instructions": [p.source for p in self.prompts],
            }
        )

    def _setup(self) -> None:
        c = self.config
        opts: dict[str, Any] = {"task": "causal"}
        for k in BACKEND_OPTIONS:
            if k in self.caps.options:
                opts[k] = self.extra_body if k == "extra_body" else c[k]
        if "served_model" in self.caps.options:
            opts["served_model"] = self.served_model
        opts.update(self.backend_options)
        settings = JudgeSettings(
            labels=self.task.labels,
            label_scoring=c["label_scoring"],
            batch_size=c["batch_size"],
            top_logprobs=c["top_logprobs"],
            token_match=c["token_match"],
        )
        self.judge = make_backend(c["backend"], c["model"], opts).judge_session(settings)
        d = self.judge.describe()
        tmpl = d.pop("chat_template", None)
        if isinstance(tmpl, str) and tmpl and tmpl != "applied by the server":
            d["chat_template_sha256"] = hashlib.sha256(tmpl.encode("utf-8")).hexdigest()
        # token totals are not kept here: under Ray each actor sees only its batches; `biaskit score` sums the
        # judge_tokens_in/out columns into the manifest's "cost" entry, the rows answered from a --cache apart
        # (biaskit.evaluate.metrics.cost)
        self.info.update({**d, "chat_template": tmpl})

    def cache_identity(self, cache: Any) -> dict[str, Any] | None:
        """What identifies the judge's answers for ``score --cache`` (None: not cached): the model (hf: its
        weights' sha256 or Hub commit, the tokenizer and chat template, device and dtype; openai: the model id
        and revision the server reports, a local path cut to its file name), the sha256 of the task and
        instructions and the label orders. :func:`.cached.metric_identity` adds the other parameters (task,
        orders, repeats, temperature, seed, ...) and the row's text."""
        own = self.judge.cache_identity(cache)
        if own is None:
            return None
        return {"judge": own, "prompt_sha256": self.sha256, "orders": [list(o) for o in self.orders]}

    def fields(self) -> dict[str, pa.DataType]:
        f: dict[str, pa.DataType] = {"label": pa.string()}
        for lab in self.task.labels:
            f[f"p_{lab}"] = pa.float64()
        if self.task.ordinal:
            f["score"] = pa.float64()
        # the consistency columns exist only when measured (orders > 1, paraphrases given, repeats asked)
        if len(self.orders) > 1:
            f["flip"] = pa.bool_()
        if len(self.prompts) > 1:
            f["prompt_flip"] = pa.bool_()
        if self.config["repeats"]:
            f["retest"] = pa.bool_()
        f["prompt_sha256"] = pa.string()
        if self.config["record_prompt"]:
            f["prompt"] = pa.string()
        f.update({"tokens_in": pa.int64(), "tokens_out": pa.int64()})
        return f

    # ------------------------------------------------------------------ scoring
    def _seed(self, text: str) -> int:
        return derive_seed(self.config["seed"], text, 0)

    def _ask(self, texts: list[str]) -> tuple[list[list[JudgeAnswer]], list[str]]:
        """Answers per text and prompt variant (variant 0: the task's own instruction and order, with the
        repeats), and the rendered prompt of variant 0 per text."""
        variants = [(p, o) for p in self.prompts for o in self.orders]
        c = self.config
        seeds = [self._seed(t) for t in texts]
        msgs = [[p.messages(t, o) for p, o in variants] for t in texts]
        first = [m[0] for m in msgs]
        rest = [x for m in msgs for x in m[1:]]
        a0 = self.judge.answer(first, repeats=c["repeats"], temperature=c["temperature"], seeds=seeds)
        ar = self.judge.answer(rest) if rest else []
        k = len(variants) - 1
        answers = [[a0[i], *ar[i * k : (i + 1) * k]] for i in range(len(texts))]
        return answers, [self.judge.render(m) for m in first]

    def _score_texts(self, texts, batch, rows):
        answers, rendered = self._ask(texts)
        cols: dict[str, list] = {f: [] for f in self.fields()}
        errors: list[str | None] = []
        for ans, prompt in zip(answers, rendered):
            vals, err = self._combine(ans)
            vals.update({"prompt_sha256": self.sha256, "prompt": prompt})
            tin = [a.tokens_in for a in ans]
            tout = [a.tokens_out for a in ans]
            vals["tokens_in"] = None if any(x is None for x in tin) else int(sum(tin))
            vals["tokens_out"] = None if any(x is None for x in tout) else int(sum(tout))
            for f in cols:
                cols[f].append(vals.get(f))
            errors.append(err)
        return cols, errors

    def _combine(self, ans: list[JudgeAnswer]) -> tuple[dict[str, Any], str | None]:
        """The row's values from its answers (one per prompt variant): averaged probabilities, label, flips."""
        bad = next((a for a in ans if a.error or a.logp is None), None)
        if bad is not None:
            return {}, bad.error or "the judge gave no answer"
        labels = self.task.labels
        P = np.array([_softmax(a.logp) for a in ans if a.logp is not None])  # variants x labels (none is None: checked above)
        mean = P.mean(axis=0)
        mean = mean / mean.sum()
        out: dict[str, Any] = {"label": labels[int(np.argmax(mean))]}
        for j, lab in enumerate(labels):
            out[f"p_{lab}"] = float(mean[j])
        if self.task.ordinal:
            idx = [labels.index(x) for x in self.task.ordinal]
            w = mean[idx]
            pos = np.linspace(-1.0, 1.0, len(idx))
            out["score"] = float((w * pos).sum() / w.sum()) if w.sum() > 0 else None
        n_o = len(self.orders)
        per = P.reshape(len(self.prompts), n_o, len(labels))
        out["flip"] = bool(any(len({int(np.argmax(r)) for r in per[i]}) > 1 for i in range(len(self.prompts)))) if n_o > 1 else None
        if len(self.prompts) > 1:
            out["prompt_flip"] = len({int(np.argmax(per[i].mean(axis=0))) for i in range(len(self.prompts))}) > 1
        else:
            out["prompt_flip"] = None
        draws = ans[0].draws
        out["retest"] = (len(set(draws)) == 1 and draws[0] is not None) if self.config["repeats"] else None
        return out, None

    # ------------------------------------------------------------------ notes
    def notes(self, scored: pa.Table) -> list[str]:
        """What ``biaskit score`` says under the judge's summary: degenerate labels (one label for at least
        :data:`DEGENERATE_SHARE` of the labelled rows, or an order-flip rate of at least :data:`FLIP_RATE`), and
        that the shipped 135M judge is a smoke-test model."""
        return judge_notes(scored, self.name, self.config["model"], len(self.orders))

    # ------------------------------------------------------------------ cost
    def estimate_cost(self, texts: list[Any]) -> dict[str, Any]:
        """Tokens the run will take, estimated from characters (no model or tokenizer is loaded):
        ``CHARS_PER_TOKEN`` characters per token plus ``TEMPLATE_TOKENS`` per chat message."""
        n_var = len(self.prompts) * len(self.orders)
        per_prompt_out = 1
        tin = 0
        rows = 0
        for t in texts:
            if not isinstance(t, str) or not t.strip():
                continue
            rows += 1
            for p in self.prompts:
                for o in self.orders:
                    msgs = p.messages(t, o)
                    tin += sum(math.ceil(len(m["content"]) / CHARS_PER_TOKEN) + TEMPLATE_TOKENS for m in msgs)
        label_extra = len(self.task.labels) if self.config["label_scoring"] == "sum" else 1
        rep = self.config["repeats"]
        per_repeat = "request_per_repeat" in self.caps.judge  # each repeat is a prompt of its own (a server)
        first_len = tin / max(1, rows * n_var)
        tokens_in = int(tin * label_extra + rows * rep * first_len * per_repeat)
        tokens_out = rows * (n_var + rep) * per_prompt_out
        return {
            "rows": rows,
            "prompts_per_row": n_var + (rep if per_repeat else 0),
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "method": f"~{CHARS_PER_TOKEN:g} characters per token + {TEMPLATE_TOKENS} per chat message (no tokenizer loaded)",
        }


#: one label for at least this share of the labelled rows: the judge's labels are degenerate
DEGENERATE_SHARE = 0.9
#: the label changed with the option order for at least this share of rows: the judge answers by position
FLIP_RATE = 0.5
#: the judge biaskit ships (a biaskit asset): small enough to try the pipeline, too small for findings
SHIPPED_JUDGE = "smollm2-135m"


def judge_notes(scored: pa.Table, name: str = "judge", model: Any = None, n_orders: int = 2) -> list[str]:
    """The cautions of :meth:`JudgeMetric.notes` from the ``<name>_label`` and ``<name>_flip`` columns of ``scored``
    (and, with one option order, that the labels are not order-debiased)."""
    out: list[str] = []
    if n_orders == 1:
        out.append(
            "the labels are read with the options in one order only (judge.orders=1): not order-debiased, and the "
            "order-flip rate is unknown; the default judge.orders=2 averages the probabilities over two orders (judge_flip; "
            "2 forward passes per text)"
        )
    labels = [v for v in scored.column(f"{name}_label").to_pylist() if v is not None] if f"{name}_label" in scored.column_names else []
    if labels:
        top = max(set(labels), key=labels.count)
        share = labels.count(top) / len(labels)
        if share >= DEGENERATE_SHARE:
            out.append(
                f"degenerate labels: {top!r} for {share:.0%} of the {len(labels)} labelled rows (>= {DEGENERATE_SHARE:.0%}); "
                "check the judge against human labels (biaskit annotate validate) before using its labels"
            )
    if f"{name}_flip" in scored.column_names:
        flips = [v for v in scored.column(f"{name}_flip").to_pylist() if v is not None]
        rate = sum(flips) / len(flips) if flips else 0.0
        if flips and rate >= FLIP_RATE:
            out.append(
                f"degenerate labels: the label changed with the option order for {rate:.0%} of {len(flips)} rows (>= {FLIP_RATE:.0%}); "
                "the judge answers by the options' position, not by the text"
            )
    if model == SHIPPED_JUDGE:
        out.append(
            f"the shipped {SHIPPED_JUDGE} judge (135M parameters) is a smoke-test model: use it to try the pipeline, not for "
            "findings; pass judge.model=<a larger instruction-tuned chat model> or judge.backend=openai"
        )
    return out


#: request fields the judge sets itself (an extra_body may not change how the label is read)
OWN_FIELDS = ("model", "messages", "max_tokens", "temperature", "logprobs", "top_logprobs", "seed", "n", "stream")


def judge_capabilities(name: str) -> Capabilities:
    """The declared capabilities of the registered backend ``name`` (E020 when none is registered under it), or
    E315 when it does not declare what the judge needs (:data:`JUDGE_NEEDS`), naming the backends that do."""
    caps = capabilities_of(backends.get(name))
    if caps.can_judge():
        return caps
    missing = [f for f in JUDGE_NEEDS if f not in caps.judge]
    able = []
    for other in backends.names():
        try:
            if capabilities_of(backends.get(other)).can_judge():
                able.append(other)
        except (BiaskitError, ImportError, AttributeError):  # a broken plugin is not offered
            continue
    raise BiaskitError(
        "E315",
        f"the {name} backend cannot judge: its capabilities do not declare {', '.join(missing)}",
        value=name,
        options=able,
        fix=f"use judge.backend={able[0] if able else 'hf'}, or declare Capabilities(judge=('chat_template', 'logprobs')) "
        "and a judge_session method on the backend (docs/architecture.md)",
    )


def _declared_options(backend: str, text: str, caps: Capabilities) -> dict[str, str | int | float | bool]:
    """``judge.backend_options`` (``KEY=VALUE;...``) parsed against the backend's declared options (E318, as
    ``--backend-option``); a key a judge parameter sets already (``concurrency``, ...) is E318 too."""
    declared = parse_options(backend, [p for p in str(text or "").split(";") if p.strip()])
    twice = sorted(k for k in declared if k in BACKEND_OPTIONS and k in caps.options)
    if twice:
        raise BiaskitError(
            "E318",
            "a judge.backend_options key is a judge parameter of its own",
            value=twice,
            fix=f"set it as judge.{twice[0]}=VALUE instead",
        )
    return declared


def _extra_body(text: Any, backend: str, caps: Capabilities) -> dict[str, Any]:
    """``judge.extra_body`` as a dict (E324 when it is not a JSON object, sets a field the judge sets, or is given
    for a backend that does not take it)."""
    if not str(text or "").strip():
        return {}
    if "extra_body" not in caps.options:
        raise BiaskitError(
            "E324",
            f"judge.extra_body is sent to a server, and the {backend} backend does not take it: it needs judge.backend=openai "
            "(or another backend that takes extra_body)",
            value=text,
            fix="drop judge.extra_body",
        )
    fix = "e.g. judge.extra_body='{\"cache_prompt\": false}'"
    try:  # (through the one JSON reader: 100,000 nested `[` is E380, NaN is E381, never a RecursionError)
        body = loads_json(text, source="judge.extra_body", code="E324", fix=fix)
    except BiaskitError as exc:
        if exc.code != "E324":
            raise
        body = None
    if not isinstance(body, dict):
        raise BiaskitError("E324", "judge.extra_body must be a JSON object", value=text, fix=fix)
    own = sorted(k for k in body if k in OWN_FIELDS)
    if own:
        raise BiaskitError(
            "E324",
            f"judge.extra_body sets {', '.join(own)}, which the judge sets itself to read the label",
            value=text,
            fix="leave those fields out (use judge.top_logprobs, judge.temperature and judge.seed)",
        )
    return body


def _softmax(logp: list[float]) -> np.ndarray:
    x = np.asarray(logp, dtype=np.float64)
    x = np.exp(x - x.max())
    return x / x.sum()
