"""Hugging Face transformers backend: causal generation, causal/masked likelihood and masked fill-in.

Loading: a biaskit asset name (e.g. ``smollm2-135m``), a local folder, a ``.gguf`` file or a Hub id (used
from the local cache when offline). Loaded models are cached per process, so the demo's generate and
likelihood stages share one SmolLM2.

Speed: prompts are tokenised once, sorted by length and batched (left padding for causal generation, right
padding for scoring) under ``torch.inference_mode()``; device and dtype are picked automatically (CUDA >
MPS > CPU; bf16/fp16 on CUDA). With ``batch_size=None`` ("auto") the batch size halves on out-of-memory.

Reproducibility: sampling is done per row by :class:`PerRowSampler`, which draws each row's next token from
its own ``torch.Generator`` seeded with :func:`~biaskit.evaluate.runners.common.derive_seed`, so a sampled
continuation depends only on (seed, prompt_id, sample_index), not on the batch it ran in.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError, require
from biaskit.evaluate.runners.common import (
    MASK,
    FillMaskSettings,
    GenerationSettings,
    LikelihoodSettings,
    Unit,
    derive_seed,
    find_span,
    join_continuation,
    model_prompt,
    to_model_mask,
)
from biaskit.log import get_logger

log = get_logger("runners.hf")

#: loaded models, keyed by (source, task, device, dtype, revision)
_CACHE: dict[tuple, LoadedModel] = {}

AUTO_BATCH = {"cuda": 64, "mps": 16, "cpu": 16}
#: padded tokens per batch the automatic batch size aims at (longest row x rows)
AUTO_TOKENS = {"cuda": 64 * 1024, "mps": 16 * 512, "cpu": 16 * 256}


def _torch():
    return require("torch", "models", "running models")


def _transformers():
    return require("transformers", "models", "running models")


def pick_device(device: str | None = "auto") -> str:
    torch = _torch()
    d = (device or "auto").lower()
    if d == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    base = d.split(":")[0]
    if base not in {"cpu", "cuda", "mps"}:
        raise BiaskitError("E062", "unknown device", value=device, options=["auto", "cpu", "cuda", "cuda:N", "mps"])
    if base == "cuda" and not torch.cuda.is_available():
        raise BiaskitError("E062", "CUDA was asked for but is not available", value=device, fix="use --device auto or --device cpu")
    return d


def pick_dtype(dtype: str | None, device: str):
    torch = _torch()
    d = (dtype or "auto").lower()
    table = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "float16": torch.float16,
        "fp16": torch.float16,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
    }
    if d == "auto":
        if device.startswith("cuda"):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    if d not in table:
        raise BiaskitError("E062", "unknown dtype", value=dtype, options=["auto", "float32", "float16", "bfloat16"])
    return table[d]


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    task: str  # causal | masked
    source: str  # what was loaded (path, gguf file or hub id)
    revision: str | None
    device: str
    dtype: str
    context_length: int
    extra: dict = field(default_factory=dict)


def _model_assets(task: str = "auto") -> list[str]:
    """biaskit model assets usable for ``task`` (causal / masked; auto: all): a causal LM is never offered for fill-mask."""
    from biaskit import assets

    ok = ("causal", "masked") if task in ("auto", None) else (task,)
    return sorted(n for n, a in assets.ASSETS.items() if a.kind == "model" and a.extra.get("task") in ok)


def _valid_models(task: str = "auto") -> str:
    names = _model_assets(task)
    if task == "masked":
        return ", ".join(names + ["a masked LM's Hub id (e.g. xlm-roberta-base) or local model folder"])
    return ", ".join(names + ["a Hub id (org/name)", "a local model folder or .gguf file"])


def _locate(spec: str, task: str = "auto") -> tuple[str, str | None, str]:
    """(folder or hub id, gguf file name or None, origin)."""
    from biaskit import assets

    if spec in assets.ASSETS:
        r = assets.resolve(spec)
        if r.path is None:
            return r.hub_id or spec, r.filename, "hub"
        p = Path(r.path)
    else:
        p = Path(spec).expanduser()
        if not p.exists():
            if spec.endswith(".gguf"):
                raise BiaskitError("E271", f"no file {spec}", value=spec, fix="check the path, or give one of: " + _valid_models(task))
            assets.check_model_folder(spec, "model", options="or give one of: " + _valid_models(task))
            return spec, None, "hub"
    if p.is_file():
        if p.suffix.lower() != ".gguf":
            raise BiaskitError("E060", "a model file must be a .gguf file", value=str(p), fix="give the model folder or a .gguf file")
        return str(p.parent), p.name, "path"
    return str(p), None, "path"


def _revision(where: str, gguf: str | None, origin: str, model: Any, revision: str | None) -> str | None:
    if origin == "hub":
        commit = getattr(model.config, "_commit_hash", None)
        return commit or revision
    from biaskit.io import sha256_file

    p = Path(where) / gguf if gguf else Path(where)
    files = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())
    if sum(f.stat().st_size for f in files) <= (2 << 30):
        return "sha256:" + sha256_file(p)
    import hashlib

    h = hashlib.sha256()
    for f in files:
        st = f.stat()
        h.update(f"{f.relative_to(p) if p.is_dir() else f.name}:{st.st_size}:{int(st.st_mtime)}".encode())
    return "fingerprint:" + h.hexdigest()


def _architectures(where: str, gguf: str | None, revision: str | None, trust_remote_code: bool) -> list[str]:
    tf = _transformers()
    kw: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if gguf:
        kw["gguf_file"] = gguf
    if revision:
        kw["revision"] = revision
    cfg = tf.AutoConfig.from_pretrained(where, **kw)
    return list(getattr(cfg, "architectures", None) or [])


def load(
    model: str,
    *,
    task: str = "auto",
    device: str | None = "auto",
    dtype: str | None = "auto",
    revision: str | None = None,
    trust_remote_code: bool = False,
) -> LoadedModel:
    """Load (or fetch from the process cache) a causal or masked LM and its tokenizer.

    ``task``: ``causal``, ``masked`` or ``auto`` (from the config's architectures). Raises E060 naming the
    options when the model cannot be found (e.g. an unknown Hub id while offline).
    """
    tf = _transformers()
    dev = pick_device(device)
    dt = pick_dtype(dtype, dev)
    where, gguf, origin = _locate(model, task)
    key = (where, gguf, dev, str(dt), revision)
    if key in _CACHE:  # one copy per model, shared by every kind of run (e.g. the demo's generate + likelihood)
        lm = _CACHE[key]
        if task not in ("auto", lm.task):
            raise BiaskitError(
                "E060",
                f"{model!r} is a {lm.task} LM, but a {task} LM is needed here",
                value=model,
                fix="generate/likelihood take causal LMs (likelihood also masked LMs); fill-mask takes masked LMs",
            )
        return lm
    from biaskit.assets import hub_offline, online_step, prepare_hub

    if origin == "hub":
        prepare_hub()  # no network: fail at once (cached models still load) instead of retrying for ~50 s
    src, src_gguf = where, gguf
    converted = _converted_gguf_dir(where, gguf) if gguf else None
    if converted is not None and (converted / "config.json").is_file():
        src, src_gguf = str(converted), None  # the dequantised copy from an earlier run (seconds instead of ~15 s)
    kw: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if src_gguf:
        kw["gguf_file"] = src_gguf
    if revision:
        kw["revision"] = revision
    try:
        archs = _architectures(src, src_gguf, revision, trust_remote_code)
        detected = "masked" if archs and all(a.endswith("ForMaskedLM") for a in archs) else ("causal" if archs else None)
        t = task if task != "auto" else (detected or "causal")
        if detected and t != detected:
            raise BiaskitError(
                "E060",
                f"{model!r} is a {detected} LM ({', '.join(archs)}), but a {t} LM is needed here",
                value=model,
                fix="generate/likelihood take causal LMs (likelihood also masked LMs); fill-mask takes masked LMs",
            )
        cls = tf.AutoModelForMaskedLM if t == "masked" else tf.AutoModelForCausalLM
        tok = tf.AutoTokenizer.from_pretrained(src, **kw)
        mdl = cls.from_pretrained(src, dtype=dt, **kw)
    except BiaskitError:
        raise
    except (OSError, ValueError, KeyError) as exc:
        if origin == "hub":
            why = "is not in the local cache and the machine is offline" if hub_offline() else "could not be loaded from the Hub"
            raise BiaskitError(
                "E060",
                f"model {model!r} {why}",
                value=model,
                options=[*_model_assets(task), "<local folder>"] + (["<file.gguf>"] if task != "masked" else []),
                fix=f"give one of: {_valid_models(task)}; or {online_step(repr(model))}; detail: {str(exc).splitlines()[0][:200]}",
            ) from exc
        raise BiaskitError(
            "E060",
            f"could not load {task if task != 'auto' else ''} model from {model!r}: {str(exc).splitlines()[0][:300]}",
            value=model,
            fix="check that the folder holds a transformers model with its tokenizer "
            "(a causal LM for generate/likelihood, a masked LM for fill-mask)",
        ) from exc
    if converted is not None and src_gguf:
        _save_converted(mdl, tok, converted)
    mdl.to(dev)
    mdl.eval()
    if tok.pad_token_id is None:
        for cand in (tok.eos_token, tok.unk_token, tok.bos_token):
            if cand is not None:
                tok.pad_token = cand
                break
    cfg = mdl.config
    ctx = None
    for attr in ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length"):
        v = getattr(cfg, attr, None)
        if isinstance(v, int) and v > 0:
            ctx = v
            break
    tml = getattr(tok, "model_max_length", None)
    if isinstance(tml, int) and 0 < tml < 1_000_000:
        ctx = min(ctx, tml) if ctx else tml
    if t == "masked" and getattr(cfg, "model_type", "") in {"roberta", "xlm-roberta", "camembert"} and ctx and ctx > 2:
        ctx = min(ctx, 512)  # RoBERTa reserves 2 position ids (padding offset)
    lm = LoadedModel(
        mdl,
        tok,
        t,
        f"{where}/{gguf}" if gguf else where,
        _revision(where, gguf, origin, mdl, revision),
        dev,
        str(dt).replace("torch.", ""),
        ctx or 2048,
        {"architectures": archs, "origin": origin},
    )
    _CACHE[key] = lm
    return lm


def _converted_gguf_dir(where: str, gguf: str) -> Path | None:
    """Cache folder for the dequantised copy of a .gguf file (keyed by its sha256); None when disabled."""
    if os.environ.get("BIASKIT_GGUF_CACHE", "1").strip().lower() in {"0", "false", "no"}:
        return None
    from biaskit.assets import cache_dir
    from biaskit.io import sha256_file

    f = Path(where) / gguf
    return cache_dir() / "models" / f"{f.stem}-{sha256_file(f)[:16]}"


def _save_converted(model: Any, tok: Any, target: Path) -> None:
    """Save the dequantised model (fp32 safetensors + tokenizer) so the next load skips GGUF parsing.

    Best effort: a failure only costs the next load its speed. Turn off with BIASKIT_GGUF_CACHE=0.
    """
    from biaskit.io import atomic_path

    try:
        model.hf_quantizer = None  # transformers refuses to save "quantized" (GGUF-loaded) models otherwise
        if hasattr(model.config, "quantization_config"):
            delattr(model.config, "quantization_config")
        with atomic_path(target, is_dir=True) as tmp:
            model.save_pretrained(tmp)
            tok.save_pretrained(tmp)
        log.info("saved a dequantised copy of the GGUF model to %s (next loads are faster)", target)
    except Exception as exc:  # noqa: BLE001 - a cache is optional
        log.debug("could not cache the dequantised GGUF model: %s", exc)


def _is_oom(exc: BaseException) -> bool:
    torch = _torch()
    oom = getattr(torch, "OutOfMemoryError", None)
    if oom is not None and isinstance(exc, oom):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


class PerRowSampler:
    """A logits processor that samples each row with its own generator and returns a one-hot mask.

    Temperature, top-k and top-p are applied row by row (transformers' own warpers), then the next token is
    drawn from the row's ``torch.Generator``; the scores come back as 0 for that token and -inf elsewhere,
    so greedy selection in ``generate`` picks it. Rows never share random numbers, so a row's tokens do
    not depend on which other rows are in the batch.
    """

    def __init__(self, seeds: Sequence[int], temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None) -> None:
        torch = _torch()
        tf = _transformers()
        self.gens = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]
        self.warpers = []
        if temperature is not None and temperature != 1.0:
            self.warpers.append(tf.TemperatureLogitsWarper(temperature))
        if top_k:
            self.warpers.append(tf.TopKLogitsWarper(top_k=top_k))
        if top_p is not None and top_p < 1.0:
            self.warpers.append(tf.TopPLogitsWarper(top_p=top_p))

    def __call__(self, input_ids, scores):
        torch = _torch()
        s = scores.float()
        for w in self.warpers:
            s = w(input_ids, s)
        probs = torch.softmax(s, dim=-1).cpu()
        picks = [int(torch.multinomial(probs[i], 1, generator=g)) for i, g in enumerate(self.gens)]
        out = torch.full_like(scores, float("-inf"))
        out[torch.arange(len(picks), device=scores.device), torch.tensor(picks, device=scores.device)] = 0.0
        return out


class HFBackend:
    """Runs prompts through a transformers model (see module docs)."""

    name = "hf"

    def __init__(
        self,
        model: str,
        *,
        device: str | None = "auto",
        dtype: str | None = "auto",
        revision: str | None = None,
        trust_remote_code: bool = False,
        task: str = "auto",
        **_: Any,
    ) -> None:
        self.spec = model
        self.lm = load(model, task=task, device=device, dtype=dtype, revision=revision, trust_remote_code=trust_remote_code)
        self.batch_sizes_used: list[int] = []
        self.truncated_count = 0

    # ------------------------------------------------------------------ info
    @property
    def revision(self) -> str | None:
        return self.lm.revision

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "hf",
            "device": self.lm.device,
            "dtype": self.lm.dtype,
            "task": self.lm.task,
            "source": self.lm.source,
            "context_length": self.lm.context_length,
        }

    # ------------------------------------------------------------------ batching
    def _batched(
        self, order: Sequence[int], lengths: Sequence[int], batch_size: int | None, fn: Callable[[list[int]], list]
    ) -> Iterator[tuple[list[int], list]]:
        """Run ``fn`` on consecutive slices of ``order``; with an automatic size, halve it on OOM."""
        torch = _torch()
        dev = self.lm.device.split(":")[0]
        auto = batch_size is None
        bs = batch_size or AUTO_BATCH.get(dev, 16)
        i = 0
        while i < len(order):
            n = bs
            if auto:
                longest = max(lengths[j] for j in order[i : i + bs])
                n = max(1, min(bs, AUTO_TOKENS.get(dev, 4096) // max(1, longest)))
            idx = list(order[i : i + n])
            try:
                res = fn(idx)
            except Exception as exc:
                if not _is_oom(exc):
                    raise
                if dev == "cuda":
                    torch.cuda.empty_cache()
                n = len(idx)
                if not auto or n == 1:
                    raise BiaskitError(
                        "E062",
                        f"out of memory with batch size {n}",
                        value=n,
                        fix="use --batch-size auto (backs off automatically) or a smaller --batch-size, "
                        "--dtype bfloat16, or a shorter --max-new-tokens",
                    ) from exc
                bs = max(1, n // 2)
                log.warning("out of memory with batch size %d; retrying with %d", n, bs)
                continue
            self.batch_sizes_used.append(len(idx))
            yield idx, res
            i += len(idx)

    # ------------------------------------------------------------------ generate
    def _prompt_text(self, text: str, chat: bool) -> tuple[str, bool]:
        tok = self.lm.tokenizer
        if not chat:
            return text, True
        if not getattr(tok, "chat_template", None):
            raise BiaskitError(
                "E062",
                "--chat needs a tokenizer with a chat template",
                value=self.spec,
                fix="drop --chat for a base model, or use an instruction-tuned model",
            )
        return tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True, tokenize=False), False

    def generate(self, units: Sequence[Unit], s: GenerationSettings, batch_size: int | None) -> Iterator[list[dict]]:
        torch = _torch()
        tf = _transformers()
        lm, tok, model = self.lm, self.lm.tokenizer, self.lm.model
        if lm.task != "causal":
            raise BiaskitError("E060", "generation needs a causal LM; this is a masked LM", value=self.spec, fix="use fill-mask with masked LMs")
        limit = lm.context_length - s.max_new_tokens
        if limit < 1:
            raise BiaskitError(
                "E062",
                f"max_new_tokens ({s.max_new_tokens}) leaves no room for the prompt in the model context ({lm.context_length})",
                value=s.max_new_tokens,
                fix="lower --max-new-tokens",
            )
        eos = model.generation_config.eos_token_id if model.generation_config.eos_token_id is not None else tok.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else ([eos] if eos is not None else []))
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else (min(eos_ids) if eos_ids else 0)
        ids: list[list[int]] = []
        pre: list[dict] = []
        for u in units:
            sent, stripped = model_prompt(u.text, s)
            text, add_special = self._prompt_text(sent, s.chat)
            x = tok(text, add_special_tokens=add_special)["input_ids"]
            info: dict[str, Any] = {"truncated": False, "error": None, "sent": sent, "stripped": stripped}
            if len(x) > limit:
                x = x[-limit:]
                info["truncated"] = True
                self.truncated_count += 1
            if not x:
                if tok.bos_token_id is not None:
                    x = [tok.bos_token_id]
                else:
                    info["error"] = "empty prompt (no tokens) and the tokenizer has no BOS token to start from"
            ids.append(x)
            pre.append(info)
        valid = [i for i in range(len(units)) if pre[i]["error"] is None]
        # rows that cannot run are reported first
        bad = [i for i in range(len(units)) if pre[i]["error"] is not None]
        if bad:
            yield [
                {"_unit": units[i], "continuation": None, "full_text": None, "truncated": pre[i]["truncated"], "error": pre[i]["error"]} for i in bad
            ]
        order = sorted(valid, key=lambda i: (-len(ids[i]), i))
        lengths = [len(x) for x in ids]

        def run(idx: list[int]) -> list[list[int]]:
            L = max(lengths[i] for i in idx)
            inp = torch.full((len(idx), L), pad_id, dtype=torch.long)
            att = torch.zeros((len(idx), L), dtype=torch.long)
            for r, i in enumerate(idx):
                inp[r, L - lengths[i] :] = torch.tensor(ids[i], dtype=torch.long)
                att[r, L - lengths[i] :] = 1
            procs = None
            if s.do_sample:
                seeds = [derive_seed(s.seed, units[i].prompt_id, units[i].sample_index) for i in idx]
                procs = tf.LogitsProcessorList([PerRowSampler(seeds, s.temperature, s.top_k, s.top_p)])
            with torch.inference_mode():
                out = model.generate(
                    input_ids=inp.to(lm.device),
                    attention_mask=att.to(lm.device),
                    max_new_tokens=s.max_new_tokens,
                    do_sample=False,
                    num_beams=1,
                    repetition_penalty=s.repetition_penalty or 1.0,
                    pad_token_id=pad_id,
                    eos_token_id=sorted(eos_ids) or None,
                    logits_processor=procs,
                    no_repeat_ngram_size=0,
                    min_new_tokens=0,
                )
            return out[:, L:].tolist()

        for idx, outs in self._batched(order, lengths, batch_size, run):
            rows = []
            for i, new in zip(idx, outs):
                cut = len(new)
                for j, t in enumerate(new):
                    if t in eos_ids:
                        cut = j
                        break
                new = new[:cut]
                raw = self._continuation(ids[i], new)
                cont, full = join_continuation(units[i].text, pre[i]["sent"], pre[i]["stripped"], raw, s.first_sentence)
                rows.append({"_unit": units[i], "continuation": cont, "full_text": full, "truncated": pre[i]["truncated"], "error": None})
            yield rows

    def _continuation(self, prompt_ids: list[int], new_ids: list[int]) -> str:
        """Decode the new tokens in the prompt's context (keeps the leading space SentencePiece drops)."""
        tok = self.lm.tokenizer
        if not new_ids:
            return ""
        tail = prompt_ids[-8:]
        before = tok.decode(tail, skip_special_tokens=True)
        both = tok.decode(tail + new_ids, skip_special_tokens=True)
        if both.startswith(before):
            return both[len(before) :]
        return tok.decode(new_ids, skip_special_tokens=True)

    # ------------------------------------------------------------------ likelihood
    def _span_chars(self, u: Unit) -> tuple[tuple[int, int] | None, str | None]:
        if u.span is None:
            return None, None
        if not u.span:
            return None, "empty span to score"
        k = find_span(u.text, u.span)
        if k < 0:
            return None, f"span {u.span!r} does not occur in the text"
        return (k, k + len(u.span)), None

    def likelihood(self, units: Sequence[Unit], s: LikelihoodSettings, batch_size: int | None) -> Iterator[list[dict]]:
        if self.lm.task == "masked":
            yield from self._pll(units, s, batch_size)
        else:
            yield from self._causal_ll(units, s, batch_size)

    def bos_policy(self, s: LikelihoodSettings) -> int | None:
        """The token id put before each sentence (never scored), or None when the first token is context only."""
        tok = self.lm.tokenizer
        if s.add_bos is None:  # what the tokenizer does by default
            probe = tok("a", add_special_tokens=True)["input_ids"]
            plain = tok("a", add_special_tokens=False)["input_ids"]
            if len(probe) > len(plain) and tok.bos_token_id is not None and probe[0] == tok.bos_token_id:
                return tok.bos_token_id
            return None
        if s.add_bos:
            b = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
            if b is None:
                raise BiaskitError("E062", "add_bos=True but the tokenizer has no BOS or EOS token", value=self.spec, fix="use add_bos auto/False")
            return b
        return None

    def _encode_scored(self, u: Unit, s: LikelihoodSettings, bos: int | None) -> tuple[list[int], list[int], bool, str | None]:
        """(input ids, indices of target positions to score, truncated, error)."""
        tok = self.lm.tokenizer
        if not u.text or not u.text.strip():
            return [], [], False, "empty text"
        span, err = self._span_chars(u)
        if err:
            return [], [], False, err
        enc = tok(u.text, add_special_tokens=False, return_offsets_mapping=span is not None)
        x = list(enc["input_ids"])
        keep = list(range(len(x)))
        if span is not None:
            offs = enc["offset_mapping"]
            keep = [j for j, (a, b) in enumerate(offs) if b > span[0] and a < span[1]]
        prefix = [bos] if bos is not None else []
        full = prefix + x
        # token j of x sits at position len(prefix)+j; it is scored when that position is > 0
        pos = [len(prefix) + j for j in keep if len(prefix) + j > 0]
        truncated = False
        limit = self.lm.context_length
        if len(full) > limit:
            drop = len(full) - limit
            full = full[drop:]
            pos = [p - drop for p in pos if p - drop > 0]
            truncated = True
            self.truncated_count += 1
        if not pos:
            why = "no token to score"
            if span is not None:
                why += f" in span {u.span!r}"
            if bos is None:
                why += " (the first token is context only when no BOS token is added)"
            return full, [], truncated, why
        return full, pos, truncated, None

    def _causal_ll(self, units: Sequence[Unit], s: LikelihoodSettings, batch_size: int | None) -> Iterator[list[dict]]:
        torch = _torch()
        lm, model, tok = self.lm, self.lm.model, self.lm.tokenizer
        bos = self.bos_policy(s)
        enc = [self._encode_scored(u, s, bos) for u in units]
        bad = [i for i, e in enumerate(enc) if e[3] is not None]
        if bad:
            yield [_ll_row(units[i], None, 0, enc[i][2], enc[i][3]) for i in bad]
        valid = [i for i, e in enumerate(enc) if e[3] is None]
        lengths = [len(e[0]) for e in enc]
        order = sorted(valid, key=lambda i: (-lengths[i], i))
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0

        def run(idx: list[int]) -> list[tuple[float, int]]:
            inp, att = _right_padded([enc[i][0] for i in idx], pad)
            with torch.inference_mode():
                logits = model(input_ids=inp.to(lm.device), attention_mask=att.to(lm.device)).logits
                logp = torch.log_softmax(logits.float(), dim=-1)
                res = []
                for r, i in enumerate(idx):
                    pos = torch.tensor(enc[i][1], device=logp.device)
                    tgt = inp[r].to(logp.device)[pos]
                    lp = logp[r, pos - 1].gather(-1, tgt[:, None]).squeeze(-1)
                    res.append((float(-lp.double().sum()), len(enc[i][1])))
            return res

        for idx, res in self._batched(order, lengths, batch_size, run):
            yield [_ll_row(units[i], nll, n, enc[i][2], None) for i, (nll, n) in zip(idx, res)]

    def _pll(self, units: Sequence[Unit], s: LikelihoodSettings, batch_size: int | None) -> Iterator[list[dict]]:
        """Pseudo-log-likelihood (Salazar et al. 2020): mask each scored token in turn, sum log p(token)."""
        torch = _torch()
        lm, model, tok = self.lm, self.lm.model, self.lm.tokenizer
        if tok.mask_token_id is None:
            raise BiaskitError("E060", "the masked LM's tokenizer has no mask token", value=self.spec)
        for start in range(0, len(units), 64):  # stream results prompt group by prompt group
            chunk = units[start : start + 64]
            enc, bad_rows, jobs = [], [], []
            for ci, u in enumerate(chunk):
                err = None if (u.text and u.text.strip()) else "empty text"
                span, serr = self._span_chars(u) if err is None else (None, None)
                err = err or serr
                if err is None:
                    e = tok(u.text, add_special_tokens=True, return_offsets_mapping=True, return_special_tokens_mask=True)
                    x = list(e["input_ids"])
                    special = list(e["special_tokens_mask"])
                    offs = list(e["offset_mapping"])
                    truncated = len(x) > lm.context_length
                    if truncated:  # cut from the left, keeping the leading special token ([CLS] / <s>)
                        x, special, offs = (_cut_left(v, lm.context_length, bool(special[0])) for v in (x, special, offs))
                        self.truncated_count += 1
                    pos = [j for j in range(len(x)) if not special[j] and (span is None or (offs[j][1] > span[0] and offs[j][0] < span[1]))]
                    if not pos:
                        err = "no token to score" + (f" in span {u.span!r}" if span else "")
                    enc.append((x, pos, truncated))
                    if err is None:
                        jobs.extend((ci, p) for p in pos)
                else:
                    enc.append(([], [], False))
                if err is not None:
                    bad_rows.append(_ll_row(u, None, 0, enc[-1][2], err))
            if bad_rows:
                yield bad_rows
            lengths = [len(enc[ci][0]) for ci, _ in jobs]
            order = sorted(range(len(jobs)), key=lambda j: (-lengths[j], j))
            pad = tok.pad_token_id if tok.pad_token_id is not None else 0

            def run(idx: list[int]) -> list[float]:
                L = max(lengths[j] for j in idx)
                inp = torch.full((len(idx), L), pad, dtype=torch.long)
                att = torch.zeros((len(idx), L), dtype=torch.long)
                tgt = []
                for r, j in enumerate(idx):
                    ci, p = jobs[j]
                    x = enc[ci][0]
                    inp[r, : len(x)] = torch.tensor(x)
                    att[r, : len(x)] = 1
                    tgt.append(x[p])
                    inp[r, p] = tok.mask_token_id
                with torch.inference_mode():
                    logits = model(input_ids=inp.to(lm.device), attention_mask=att.to(lm.device)).logits
                    rows = torch.arange(len(idx), device=logits.device)
                    pos = torch.tensor([jobs[j][1] for j in idx], device=logits.device)
                    logp = torch.log_softmax(logits[rows, pos].float(), dim=-1)
                    return logp[rows, torch.tensor(tgt, device=logits.device)].double().tolist()

            total: dict[int, float] = {}
            for idx, res in self._batched(order, lengths, batch_size, run):
                for j, v in zip(idx, res):
                    total[jobs[j][0]] = total.get(jobs[j][0], 0.0) - v
            out = [_ll_row(u, total[ci], len(enc[ci][1]), enc[ci][2], None) for ci, u in enumerate(chunk) if ci in total]
            if out:
                yield out

    # ------------------------------------------------------------------ fill-mask
    def fill_mask(self, units: Sequence[Unit], s: FillMaskSettings, batch_size: int | None) -> Iterator[list[dict]]:
        torch = _torch()
        lm, model, tok = self.lm, self.lm.model, self.lm.tokenizer
        if lm.task != "masked" or tok.mask_token is None:
            raise BiaskitError(
                "E060",
                "fill-mask needs a masked LM (e.g. bert-base-cased, xlm-roberta-base); this model is causal",
                value=self.spec,
                fix="give a masked LM with --model",
            )
        allowed = self._candidate_mask(s)
        enc: list[tuple[list[int], int] | None] = []
        bad = []
        normed: dict[int, str] = {}
        trunc: set[int] = set()
        for i, u in enumerate(units):
            text, norm, err = to_model_mask(u.text, tok.mask_token)
            if err is None:
                normed[i] = norm
                x = tok(text, add_special_tokens=True)["input_ids"]
                limit = max(1, lm.context_length - (s.max_subwords - 1))  # room for the slot's extra mask tokens
                cut = len(x) > limit
                if cut:  # cut from the left, keeping the leading special token
                    x = _cut_left(x, limit, x[0] in set(tok.all_special_ids))
                    self.truncated_count += 1
                    trunc.add(i)
                mpos = [j for j, t in enumerate(x) if t == tok.mask_token_id]
                if cut and not mpos:
                    err = "the mask slot falls outside the model context once the template is cut from the left"
                elif len(mpos) != 1:
                    err = f"the tokenised template has {len(mpos)} mask tokens; fill-mask needs exactly one"
                else:
                    enc.append((x, mpos[0]))
                    continue
            enc.append(None)
            bad.append(
                {
                    "_unit": u,
                    "sample_index": 0,
                    "token": None,
                    "token_score": None,
                    "rank": None,
                    "full_text": None,
                    "truncated": i in trunc,
                    "error": err,
                }
            )
        if bad:
            yield bad
        if s.max_subwords > 1:
            yield from self._fill_words(units, enc, normed, trunc, s, batch_size)
            return
        valid = [i for i, e in enumerate(enc) if e is not None]
        lengths = [len(e[0]) if e else 0 for e in enc]
        order = sorted(valid, key=lambda i: (-lengths[i], i))
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        k = s.top_k

        def run(idx: list[int]):
            inp, att = _right_padded([enc[i][0] for i in idx], pad)
            with torch.inference_mode():
                logits = model(input_ids=inp.to(lm.device), attention_mask=att.to(lm.device)).logits
                rows = torch.arange(len(idx), device=logits.device)
                pos = torch.tensor([enc[i][1] for i in idx], device=logits.device)
                probs = torch.softmax(logits[rows, pos].float(), dim=-1)
                logp = torch.log_softmax(logits[rows, pos].float(), dim=-1)
                ranked = probs if allowed is None else probs.masked_fill(~allowed.to(probs.device), -1.0)
                vals, ids_ = ranked.topk(min(k, ranked.shape[-1]), dim=-1)
                # a disallowed candidate (fewer allowed tokens than k) gets score -1 so the loop below stops there
                sc = torch.where(vals < 0, torch.full_like(vals, -1.0), probs.gather(-1, ids_))
                lp = logp.gather(-1, ids_).double()
                return [(sc[r].tolist(), ids_[r].tolist(), lp[r].tolist()) for r in range(len(idx))]

        for idx, res in self._batched(order, lengths, batch_size, run):
            rows = []
            for i, (scores, ids_, lps) in zip(idx, res):
                u = units[i]
                for r, (sc, tid, lpv) in enumerate(zip(scores, ids_, lps)):
                    if sc < 0:  # fewer allowed candidates than k
                        break
                    word = tok.decode([tid]).strip()
                    piece = tok.convert_ids_to_tokens(tid)
                    filled, fill = normed[i], word
                    if isinstance(piece, str) and piece.startswith("##"):  # a subword piece joins the word before
                        fill = word[2:] if word.startswith("##") else word
                        filled = filled.replace(" " + MASK, MASK)
                    filled = filled.replace(MASK, fill)
                    rows.append(
                        {
                            "_unit": u,
                            "sample_index": r,
                            "token": word,
                            "token_score": float(sc),
                            "rank": r + 1,
                            "full_text": filled,
                            "truncated": i in trunc,
                            "error": None,
                            "n_subwords": 1,
                            "fill_pll": float(lpv),
                        }
                    )
            yield rows

    # ------------------------------------------------------------------ multi-token (whole-word) fill-in
    def _piece_sets(self):
        """(word-initial, continuation) boolean vocabulary masks for whole-word filling.

        WordPiece: continuation pieces start with ``##``. BPE / SentencePiece: word-initial pieces carry the space
        marker (``Ġ`` / ``▁``), continuation pieces do not. Both must hold a letter; special tokens are never allowed.
        """
        if getattr(self, "_pieces", None) is not None:
            return self._pieces
        torch = _torch()
        tok = self.lm.tokenizer
        V = self.lm.model.get_output_embeddings().weight.shape[0]
        initial = torch.zeros(V, dtype=torch.bool)
        cont = torch.zeros(V, dtype=torch.bool)
        special = set(tok.all_special_ids)
        pieces = tok.convert_ids_to_tokens(list(range(min(V, len(tok)))))
        wordpiece = any(isinstance(p, str) and p.startswith("##") for p in pieces)
        for i, p in enumerate(pieces):
            if i in special or not isinstance(p, str):
                continue
            if wordpiece:
                is_cont, body = p.startswith("##"), p[2:] if p.startswith("##") else p
            else:
                is_cont, body = not p.startswith(("\u0120", "\u2581")), p.lstrip("\u0120\u2581")
            if any(ch.isalpha() for ch in body):
                (cont if is_cont else initial)[i] = True
        self._pieces = (initial, cont, wordpiece)
        return self._pieces

    def _logits_rows(self, seqs: list[list[int]], pos: list[int], batch_size: int | None, fn) -> list:
        """Run the masked LM on ``seqs`` (right padded) and apply ``fn(log_softmax at pos[r], r)`` to each row."""
        torch = _torch()
        lm, tok = self.lm, self.lm.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        lengths = [len(q) for q in seqs]
        order = sorted(range(len(seqs)), key=lambda j: (-lengths[j], j))
        out: list = [None] * len(seqs)

        def run(idx: list[int]) -> list:
            inp, att = _right_padded([seqs[j] for j in idx], pad)
            with torch.inference_mode():
                logits = lm.model(input_ids=inp.to(lm.device), attention_mask=att.to(lm.device)).logits
                rows = torch.arange(len(idx), device=logits.device)
                p = torch.tensor([pos[j] for j in idx], device=logits.device)
                logp = torch.log_softmax(logits[rows, p].float(), dim=-1).cpu()
            return [fn(logp[r], j) for r, j in enumerate(idx)]

        for idx, res in self._batched(order, lengths, batch_size, run):
            for j, v in zip(idx, res):
                out[j] = v
        return out

    def _fill_words(self, units, enc, normed, trunc, s: FillMaskSettings, batch_size: int | None) -> Iterator[list[dict]]:
        """Whole-word fill-ins of 1..``s.max_subwords`` subword tokens, ranked by pseudo-log-likelihood.

        For each length n the slot becomes n mask tokens and a beam search fills them left to right (the first
        piece word-initial, the others continuation pieces; ``s.beams`` partial fill-ins kept by the sum of their
        step log-probabilities). Each finished candidate must be how the tokenizer itself writes the filled
        sentence (re-tokenising gives the same ids), so it is one whole word that neither ends mid-word nor
        glues onto the text after the slot. It is then scored by its pseudo-log-likelihood: the sum over its
        pieces of log p(piece | sentence with that piece masked) (``original``, Salazar et al. 2020) or with the
        piece and the pieces after it masked (``word_l2r``, Kauf & Ivanova 2023). All lengths are ranked
        together; ``token_score`` is exp(PLL) (the probability for one piece), ``n_subwords`` the length.
        """
        import math

        lm, tok = self.lm, self.lm.tokenizer
        mask_id = tok.mask_token_id
        initial, cont, wordpiece = self._piece_sets()
        B, N = s.beams, s.max_subwords
        for i, e in enumerate(enc):
            if e is None:
                continue
            u = units[i]
            x, m = e
            prefix, suffix = x[:m], x[m + 1 :]
            if len(x) - 1 + N > lm.context_length:
                yield [
                    {
                        "_unit": u,
                        "sample_index": 0,
                        "token": None,
                        "token_score": None,
                        "rank": None,
                        "full_text": None,
                        "truncated": i in trunc,
                        "error": f"the template with {N} mask tokens is longer than the model context "
                        f"({lm.context_length} tokens); use a smaller --max-subwords",
                    }
                ]
                continue
            model_text = normed[i].replace(MASK, tok.mask_token)
            first = initial
            if not wordpiece:
                # BPE / SentencePiece: a word at the very start (or after a bracket) may have no space marker
                # (RoBERTa's "word" vs "Ġword"); probe how the tokenizer writes a word in this slot
                probe = tok(model_text.replace(tok.mask_token, "a", 1), add_special_tokens=True)["input_ids"]
                at = len(probe) - len(suffix) - 1  # counted from the end: also right for a template cut from the left
                if at >= 0 and probe[at + 1 :] == suffix:
                    piece = tok.convert_ids_to_tokens(probe[at])
                    if isinstance(piece, str) and not piece.startswith(("\u0120", "\u2581")):
                        first = cont
            beams = {n: [((), 0.0)] for n in range(1, N + 1)}
            for j in range(N):
                jobs = [(n, b) for n in range(1, N + 1) if j < n for b in beams[n]]
                seqs = [prefix + list(b[0]) + [mask_id] * (n - j) + suffix for n, b in jobs]
                allow = first if j == 0 else cont
                kk = min(B, int(allow.sum()))
                if kk == 0:
                    beams = {n: [] for n in beams}
                    break

                def top(logp, r, allow=allow, kk=kk):
                    v, ids_ = logp.masked_fill(~allow, float("-inf")).topk(kk)
                    return list(zip(ids_.tolist(), v.double().tolist()))

                res = self._logits_rows(seqs, [len(prefix) + j] * len(seqs), batch_size, top) if seqs else []
                grown: dict[int, list] = {}
                for (n, (toks, sc)), opts in zip(jobs, res):
                    grown.setdefault(n, []).extend((toks + (t,), sc + v) for t, v in opts)
                for n, cands in grown.items():
                    beams[n] = sorted(cands, key=lambda c: (-c[1], c[0]))[:B]
            cands = []
            for n in range(1, N + 1):
                for toks, _ in beams[n]:
                    if len(toks) != n:
                        continue
                    word = tok.decode(list(toks)).strip()
                    if not word:
                        continue
                    want = prefix + list(toks) + suffix
                    got = tok(model_text.replace(tok.mask_token, word, 1), add_special_tokens=True)["input_ids"]
                    if i in trunc:  # the template was cut from the left (its first special token kept): compare the tail
                        got, want = got[len(got) - len(want) + 1 :], want[1:]
                    if got != want:
                        continue  # not how the tokenizer writes this word here: not a whole word in this slot
                    cands.append((toks, word))
            # pseudo-log-likelihood of each candidate's pieces
            seqs, pos, tgt, owner = [], [], [], []
            for c, (toks, _) in enumerate(cands):
                full = prefix + list(toks) + suffix
                for q in range(len(toks)):
                    masked = list(full)
                    for r in range(q, len(toks)) if s.pll == "word_l2r" else (q,):
                        masked[len(prefix) + r] = mask_id
                    seqs.append(masked)
                    pos.append(len(prefix) + q)
                    tgt.append(toks[q])
                    owner.append(c)
            vals = self._logits_rows(seqs, pos, batch_size, lambda logp, r: float(logp[tgt[r]].double())) if seqs else []
            pll = [0.0] * len(cands)
            for c, v in zip(owner, vals):
                pll[c] += v
            seen: set[str] = set()
            ranked = []
            for c in sorted(range(len(cands)), key=lambda c: (-pll[c], len(cands[c][0]), cands[c][0])):
                if cands[c][1] in seen:
                    continue
                seen.add(cands[c][1])
                ranked.append(c)
            rows = []
            for r, c in enumerate(ranked[: s.top_k]):
                toks, word = cands[c]
                rows.append(
                    {
                        "_unit": u,
                        "sample_index": r,
                        "token": word,
                        "token_score": math.exp(pll[c]),
                        "rank": r + 1,
                        "full_text": normed[i].replace(MASK, word),
                        "truncated": i in trunc,
                        "error": None,
                        "n_subwords": len(toks),
                        "fill_pll": pll[c],
                    }
                )
            if not rows:
                rows = [
                    {
                        "_unit": u,
                        "sample_index": 0,
                        "token": None,
                        "token_score": None,
                        "rank": None,
                        "full_text": None,
                        "truncated": i in trunc,
                        "error": "no whole-word fill-in found (the slot may be glued to the text around it)",
                    }
                ]
            yield rows

    def _candidate_mask(self, s: FillMaskSettings):
        """Boolean vocabulary mask of allowed fill-ins (whole words / targets), or None for all tokens."""
        if not s.whole_word and not s.targets:
            return None
        torch = _torch()
        tok = self.lm.tokenizer
        V = self.lm.model.get_output_embeddings().weight.shape[0]
        allowed = torch.zeros(V, dtype=torch.bool)
        if s.targets:
            for w in s.targets:
                for variant in (w, " " + w):
                    x = tok(variant, add_special_tokens=False)["input_ids"]
                    if len(x) == 1:
                        allowed[x[0]] = True
            return allowed
        # whole words: the word-initial pieces holding a letter (the same classification multi-token fill-ins use)
        return self._piece_sets()[0].clone()


def _cut_left(seq: list, limit: int, keep_first: bool) -> list:
    """The last ``limit`` items of ``seq``; with ``keep_first`` the first item stays in front (e.g. [CLS])."""
    if len(seq) <= limit:
        return list(seq)
    if keep_first:
        return [seq[0]] + list(seq[len(seq) - limit + 1 :])
    return list(seq[len(seq) - limit :])


def _ll_row(u: Unit, nll_sum: float | None, n: int, truncated: bool, error: str | None) -> dict:
    import math

    if error is not None or nll_sum is None or n == 0:
        return {
            "_unit": u,
            "nll_mean": None,
            "perplexity": None,
            "n_tokens": None if error else n,
            "truncated": truncated,
            "error": error or "no token scored",
        }
    mean = nll_sum / n
    return {"_unit": u, "nll_mean": mean, "perplexity": math.exp(mean), "n_tokens": n, "truncated": truncated, "error": None}


def _right_padded(seqs: list[list[int]], pad: int):
    """(input_ids, attention_mask) of token-id lists padded on the right to the longest one."""
    import torch

    L = max(len(q) for q in seqs)
    inp = torch.full((len(seqs), L), pad, dtype=torch.long)
    att = torch.zeros((len(seqs), L), dtype=torch.long)
    for r, q in enumerate(seqs):
        inp[r, : len(q)] = torch.tensor(q, dtype=torch.long)
        att[r, : len(q)] = 1
    return inp, att
