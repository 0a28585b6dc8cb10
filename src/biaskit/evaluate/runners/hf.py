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

Layout: loading and generation are here; the batch loop is in ``_hf_base.py``, likelihood scoring in
``_hf_likelihood.py`` and masked-LM fill-ins in ``_hf_fill.py`` (parts of :class:`HFBackend`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit import assets, hashing
from biaskit.assets import hub_offline, online_step, prepare_hub
from biaskit.errors import BiaskitError
from biaskit.evaluate.runners._hf_base import AUTO_BATCH as AUTO_BATCH  # public names of this module, defined next to the batch loop
from biaskit.evaluate.runners._hf_base import AUTO_TOKENS as AUTO_TOKENS
from biaskit.evaluate.runners._hf_base import render_chat, torch_module, transformers_module
from biaskit.evaluate.runners._hf_fill import HFFill
from biaskit.evaluate.runners._hf_likelihood import HFLikelihood
from biaskit.evaluate.runners.backend import BackendBase, BackendOption, Capabilities, JudgeSettings
from biaskit.evaluate.runners.cache import hf_identity
from biaskit.evaluate.runners.common import GenerationSettings, Unit, chat_messages, derive_seed, join_continuation, model_prompt
from biaskit.evaluate.runners.judge_hf import LocalJudge
from biaskit.log import get_logger
from biaskit.output import atomic_path

log = get_logger("runners.hf")

#: loaded models, keyed by (source, task, device, dtype, revision)
_CACHE: dict[tuple, LoadedModel] = {}


def pick_device(device: str | None = "auto") -> str:
    torch = torch_module()
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
    torch = torch_module()
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
    ok = ("causal", "masked") if task in ("auto", None) else (task,)
    return sorted(n for n, a in assets.ASSETS.items() if a.kind == "model" and a.extra.get("task") in ok)


def _valid_models(task: str = "auto") -> str:
    names = _model_assets(task)
    if task == "masked":
        return ", ".join(names + ["a masked LM's Hub id (e.g. xlm-roberta-base) or local model folder"])
    return ", ".join(names + ["a Hub id (org/name)", "a local model folder or .gguf file"])


def locate(spec: str, task: str = "auto") -> tuple[str, str | None, str]:
    """(folder or hub id, gguf file name or None, origin)."""
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

    p = Path(where) / gguf if gguf else Path(where)
    files = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file())
    if sum(f.stat().st_size for f in files) <= (2 << 30):
        return "sha256:" + hashing.sha256_file(p)

    h = hashlib.sha256()
    for f in files:
        st = f.stat()
        h.update(f"{f.relative_to(p) if p.is_dir() else f.name}:{st.st_size}:{int(st.st_mtime)}".encode())
    return "fingerprint:" + h.hexdigest()


def _from_pretrained_kw(gguf: str | None, revision: str | None, trust_remote_code: bool) -> dict[str, Any]:
    """The keyword arguments of transformers' ``from_pretrained`` for a model folder or GGUF file."""
    kw: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if gguf:
        kw["gguf_file"] = gguf
    if revision:
        kw["revision"] = revision
    return kw


def _architectures(where: str, gguf: str | None, revision: str | None, trust_remote_code: bool) -> list[str]:
    tf = transformers_module()
    kw = _from_pretrained_kw(gguf, revision, trust_remote_code)
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
    transformers_module()  # the missing extra is named before anything else
    dev = pick_device(device)
    dt = pick_dtype(dtype, dev)
    where, gguf, origin = locate(model, task)
    key = (where, gguf, dev, str(dt), revision)
    if key in _CACHE:  # one copy per model, shared by every kind of run (e.g. the demo's generate + likelihood)
        lm = _CACHE[key]
        if task not in ("auto", lm.task):
            raise BiaskitError("E060", f"{model!r} is a {lm.task} LM, but a {task} LM is needed here", value=model, fix=_TASK_FIX)
        return lm

    if origin == "hub":
        prepare_hub()  # no network: fail at once (cached models still load) instead of retrying for ~50 s
    src, src_gguf = where, gguf
    converted = _converted_gguf_dir(where, gguf) if gguf else None
    if converted is not None and (converted / "config.json").is_file():
        src, src_gguf = str(converted), None  # the dequantised copy from an earlier run (seconds instead of ~15 s)
    mdl, tok, t, archs = _load_weights(model, task, origin, src, src_gguf, dt, revision, trust_remote_code)
    if converted is not None and src_gguf:
        _save_converted(mdl, tok, converted)
    mdl.to(dev)
    mdl.eval()
    _set_pad_token(tok)
    lm = LoadedModel(
        mdl,
        tok,
        t,
        f"{where}/{gguf}" if gguf else where,
        _revision(where, gguf, origin, mdl, revision),
        dev,
        str(dt).replace("torch.", ""),
        _context_length(mdl.config, tok, t) or 2048,
        {"architectures": archs, "origin": origin},
    )
    _CACHE[key] = lm
    return lm


_TASK_FIX = "generate/likelihood take causal LMs (likelihood also masked LMs); fill-mask takes masked LMs"


def _load_weights(
    model: str, task: str, origin: str, src: str, gguf: str | None, dt: Any, revision: str | None, trust_remote_code: bool
) -> tuple[Any, Any, str, list[str]]:
    """(model, tokenizer, task, architectures) read from ``src``; E060 when the task does not fit or it cannot load."""
    tf = transformers_module()
    kw = _from_pretrained_kw(gguf, revision, trust_remote_code)
    try:
        archs = _architectures(src, gguf, revision, trust_remote_code)
        detected = "masked" if archs and all(a.endswith("ForMaskedLM") for a in archs) else ("causal" if archs else None)
        t = task if task != "auto" else (detected or "causal")
        if detected and t != detected:
            raise BiaskitError("E060", f"{model!r} is a {detected} LM ({', '.join(archs)}), but a {t} LM is needed here", value=model, fix=_TASK_FIX)
        cls = tf.AutoModelForMaskedLM if t == "masked" else tf.AutoModelForCausalLM
        tok = tf.AutoTokenizer.from_pretrained(src, **kw)
        mdl = cls.from_pretrained(src, dtype=dt, **kw)
    except BiaskitError:
        raise
    except (OSError, ValueError, KeyError) as exc:
        raise _load_error(model, task, origin, exc) from exc
    return mdl, tok, t, archs


def _load_error(model: str, task: str, origin: str, exc: Exception) -> BiaskitError:
    """E060 for a model that could not be loaded: offline / not on the Hub, or not a model folder."""
    if origin == "hub":
        why = "is not in the local cache and the machine is offline" if hub_offline() else "could not be loaded from the Hub"
        return BiaskitError(
            "E060",
            f"model {model!r} {why}",
            value=model,
            options=[*_model_assets(task), "<local folder>"] + (["<file.gguf>"] if task != "masked" else []),
            fix=f"give one of: {_valid_models(task)}; or {online_step(repr(model))}; detail: {str(exc).splitlines()[0][:200]}",
        )
    return BiaskitError(
        "E060",
        f"could not load {task if task != 'auto' else ''} model from {model!r}: {str(exc).splitlines()[0][:300]}",
        value=model,
        fix="check that the folder holds a transformers model with its tokenizer (a causal LM for generate/likelihood, a masked LM for fill-mask)",
    )


def _set_pad_token(tok: Any) -> None:
    """A tokenizer without a pad token pads with its EOS (else UNK, else BOS) token."""
    if tok.pad_token_id is None:
        for cand in (tok.eos_token, tok.unk_token, tok.bos_token):
            if cand is not None:
                tok.pad_token = cand
                break


def _context_length(cfg: Any, tok: Any, task: str) -> int | None:
    """The model's context in tokens: its position limit, capped by the tokenizer's (None when neither says)."""
    ctx = None
    for attr in ("max_position_embeddings", "n_positions", "n_ctx", "max_sequence_length", "seq_length"):
        v = getattr(cfg, attr, None)
        if isinstance(v, int) and v > 0:
            ctx = v
            break
    tml = getattr(tok, "model_max_length", None)
    if isinstance(tml, int) and 0 < tml < 1_000_000:
        ctx = min(ctx, tml) if ctx else tml
    if task == "masked" and getattr(cfg, "model_type", "") in {"roberta", "xlm-roberta", "camembert"} and ctx and ctx > 2:
        ctx = min(ctx, 512)  # RoBERTa reserves 2 position ids (padding offset)
    return ctx


def _converted_gguf_dir(where: str, gguf: str) -> Path | None:
    """Cache folder for the dequantised copy of a .gguf file (keyed by its sha256); None when disabled."""
    if os.environ.get("BIASKIT_GGUF_CACHE", "1").strip().lower() in {"0", "false", "no"}:
        return None

    f = Path(where) / gguf
    return assets.cache_dir() / "models" / f"{f.stem}-{hashing.sha256_file(f)[:16]}"


def _save_converted(model: Any, tok: Any, target: Path) -> None:
    """Save the dequantised model (fp32 safetensors + tokenizer) so the next load skips GGUF parsing.

    Best effort: a failure only costs the next load its speed. Turn off with BIASKIT_GGUF_CACHE=0.
    """
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


class PerRowSampler:
    """A logits processor that samples each row with its own generator and returns a one-hot mask.

    Temperature, top-k and top-p are applied row by row (transformers' own warpers), then the next token is
    drawn from the row's ``torch.Generator``; the scores come back as 0 for that token and -inf elsewhere,
    so greedy selection in ``generate`` picks it. Rows never share random numbers, so a row's tokens do
    not depend on which other rows are in the batch.
    """

    def __init__(self, seeds: Sequence[int], temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None) -> None:
        torch = torch_module()
        tf = transformers_module()
        self.gens = [torch.Generator(device="cpu").manual_seed(int(s)) for s in seeds]
        self.warpers = []
        if temperature is not None and temperature != 1.0:
            self.warpers.append(tf.TemperatureLogitsWarper(temperature))
        if top_k:
            self.warpers.append(tf.TopKLogitsWarper(top_k=top_k))
        if top_p is not None and top_p < 1.0:
            self.warpers.append(tf.TopPLogitsWarper(top_p=top_p))

    def __call__(self, input_ids, scores):
        torch = torch_module()
        s = scores.float()
        for w in self.warpers:
            s = w(input_ids, s)
        probs = torch.softmax(s, dim=-1).cpu()
        picks = [int(torch.multinomial(probs[i], 1, generator=g)) for i, g in enumerate(self.gens)]
        out = torch.full_like(scores, float("-inf"))
        out[torch.arange(len(picks), device=scores.device), torch.tensor(picks, device=scores.device)] = 0.0
        return out


class HFBackend(HFLikelihood, HFFill, BackendBase):
    """Runs prompts through a transformers model (see module docs).

    Loading and generation live here; ``likelihood`` comes from :class:`~._hf_likelihood.HFLikelihood`,
    ``fill_mask`` from :class:`~._hf_fill.HFFill` (both on :class:`~._hf_base.HFBase`, which has the batch loop).
    """

    name = "hf"
    capabilities = Capabilities(
        kinds=("generate", "fill_mask", "likelihood"),
        options=("device", "dtype", "revision", "trust_remote_code", "task", "share_prefix"),
        judge=("chat_template", "logprobs"),
        settable=(
            BackendOption("trust_remote_code", "bool", False, "run the model's own code from the Hub (fill-mask and likelihood too)"),
            BackendOption(
                "share_prefix", "bool", True, "likelihood, causal LMs: texts with one unscored prefix run it once (false: each text whole)"
            ),
        ),
    )

    def __init__(
        self,
        model: str,
        *,
        device: str | None = "auto",
        dtype: str | None = "auto",
        revision: str | None = None,
        trust_remote_code: bool = False,
        task: str = "auto",
        share_prefix: bool = True,
    ) -> None:
        self.spec = model
        self.share_prefix = share_prefix  # causal likelihood: texts with one unscored prefix run it once
        self.hub_revision = revision
        self.lm = load(model, task=task, device=device, dtype=dtype, revision=revision, trust_remote_code=trust_remote_code)
        self.batch_sizes_used: list[int] = []
        self.truncated_count = 0

    # ------------------------------------------------------------------ info
    @property
    def revision(self) -> str | None:  # type: ignore[override]  # read from the loaded model; BackendBase's is a plain default
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

    def cache_identity(self) -> dict[str, Any] | None:
        """The model (weights sha256 / Hub commit), tokenizer and chat template, device and dtype (see :mod:`.cache`)."""
        return hf_identity(self)

    def judge_session(self, s: JudgeSettings) -> LocalJudge:
        """The loaded causal chat model as the judge (:class:`~.judge_hf.LocalJudge`: E322 without a chat template)."""
        return LocalJudge(self, s)

    # ------------------------------------------------------------------ generate
    def _prompt_text(self, text: str, s: GenerationSettings) -> tuple[str, bool]:
        tok = self.lm.tokenizer
        if not s.chat:
            return text, True
        if not getattr(tok, "chat_template", None):
            raise BiaskitError(
                "E062",
                "--format chat needs a tokenizer with a chat template",
                value=self.spec,
                fix="use --format raw for a base model, or an instruction-tuned model",
            )
        return render_chat(tok, chat_messages(text, s), self.spec), False

    def generate(self, units: Sequence[Unit], s: GenerationSettings, batch_size: int | None) -> Iterator[list[dict]]:
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
        ids, pre = self._encode_prompts(units, s, limit)
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
            seeds = [derive_seed(s.seed, units[i].prompt_id, units[i].sample_index) for i in idx] if s.do_sample else []
            return self._generate_batch([ids[i] for i in idx], seeds, s, eos_ids, pad_id)

        for idx, outs in self._batched(order, lengths, batch_size, run):
            rows = []
            for i, new in zip(idx, outs):
                cont, full = self._continuation_texts(units[i], ids[i], _until_eos(new, eos_ids), pre[i], s)
                rows.append({"_unit": units[i], "continuation": cont, "full_text": full, "truncated": pre[i]["truncated"], "error": None})
            yield rows

    def _encode_prompts(self, units: Sequence[Unit], s: GenerationSettings, limit: int) -> tuple[list[list[int]], list[dict]]:
        """Each prompt's token ids (cut from the left to ``limit``) and facts: truncated, error, the text fed."""
        tok = self.lm.tokenizer
        ids: list[list[int]] = []
        pre: list[dict] = []
        for u in units:
            sent, stripped = model_prompt(u.text, s)
            text, add_special = self._prompt_text(sent, s)
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
        return ids, pre

    def _generate_batch(self, seqs: list[list[int]], seeds: list[int], s: GenerationSettings, eos_ids: set[int], pad_id: int) -> list[list[int]]:
        """The new token ids of each prompt (left padded); sampled rows draw from their own seeded generator."""
        torch = torch_module()
        tf = transformers_module()
        lm = self.lm
        L = max(len(x) for x in seqs)
        inp = torch.full((len(seqs), L), pad_id, dtype=torch.long)
        att = torch.zeros((len(seqs), L), dtype=torch.long)
        for r, x in enumerate(seqs):
            inp[r, L - len(x) :] = torch.tensor(x, dtype=torch.long)
            att[r, L - len(x) :] = 1
        procs = None
        if s.do_sample:
            procs = tf.LogitsProcessorList([PerRowSampler(seeds, s.temperature, s.top_k, s.top_p)])
        with torch.inference_mode():
            out = lm.model.generate(
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

    def _continuation_texts(self, u: Unit, prompt_ids: list[int], new: list[int], info: dict, s: GenerationSettings) -> tuple[str, str]:
        """(continuation, full text) of one generated row (``new``: its tokens up to the first EOS), decoded in the
        prompt's context."""
        raw = self._continuation(prompt_ids, new)
        return join_continuation(u.text, info["sent"], info["stripped"], raw, s.first_sentence)

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


def _until_eos(new: list[int], eos_ids: set[int]) -> list[int]:
    """The generated tokens ``new`` up to (without) the first end-of-sequence token."""
    for j, t in enumerate(new):
        if t in eos_ids:
            return new[:j]
    return new
