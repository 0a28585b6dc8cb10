"""What every part of the Hugging Face backend shares: lazy torch/transformers, padding and batching.

:class:`HFBase` is the base of :class:`biaskit.evaluate.runners.hf.HFBackend` and of its likelihood
(:mod:`._hf_likelihood`) and fill-in (:mod:`._hf_fill`) parts: the loaded model (``lm``), the batch loop that
halves an automatic batch size on out-of-memory (``_batched``) and the run counters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from biaskit.errors import BiaskitError, require
from biaskit.log import get_logger

log = get_logger("runners.hf")

AUTO_BATCH = {"cuda": 64, "mps": 16, "cpu": 16}
#: padded tokens per batch the automatic batch size aims at (longest row x rows)
AUTO_TOKENS = {"cuda": 64 * 1024, "mps": 16 * 512, "cpu": 16 * 256}


def torch_module():
    return require("torch", "models", "running models")


def transformers_module():
    return require("transformers", "models", "running models")


def render_chat(tok: Any, messages: list[dict[str, str]], model: str) -> str:
    """``messages`` through the tokenizer's chat template, ending where the assistant's answer begins. A template
    that raises (jinja2's ``raise_exception``, an undefined variable, a syntax error) is E316 naming the model, the
    template's first line and jinja2's reason, never a traceback."""
    import jinja2

    try:
        return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    except jinja2.TemplateError as exc:
        tmpl = getattr(tok, "chat_template", None)
        head = str(tmpl).strip().splitlines()[0][:80] if tmpl else "(none)"
        raise BiaskitError(
            "E316",
            f"the chat template of {model} failed on these messages ({type(exc).__name__}: {exc}); template begins: {head}",
            value=model,
            fix="fix or replace the tokenizer's chat_template (tokenizer_config.json or chat_template.jinja), or use --format raw "
            "(generate) / a model whose template accepts system and user messages (judge)",
        ) from None


def _is_oom(exc: BaseException) -> bool:
    torch = torch_module()
    oom = getattr(torch, "OutOfMemoryError", None)
    if oom is not None and isinstance(exc, oom):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


class HFBase:
    """The loaded model and the batch loop every kind of run uses (see the module docs)."""

    spec: str  # the model as the user named it (for messages)
    lm: Any  # the LoadedModel (biaskit.evaluate.runners.hf)
    batch_sizes_used: list[int]
    truncated_count: int

    def _batched(
        self, order: Sequence[int], lengths: Sequence[int], batch_size: int | None, fn: Callable[[list[int]], list]
    ) -> Iterator[tuple[list[int], list]]:
        """Run ``fn`` on consecutive slices of ``order``; with an automatic size, halve it on OOM."""
        torch = torch_module()
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


def cut_left(seq: list, limit: int, keep_first: bool) -> list:
    """The last ``limit`` items of ``seq``; with ``keep_first`` the first item stays in front (e.g. [CLS])."""
    if len(seq) <= limit:
        return list(seq)
    if keep_first:
        return [seq[0]] + list(seq[len(seq) - limit + 1 :])
    return list(seq[len(seq) - limit :])


def right_padded(seqs: list[list[int]], pad: int):
    """(input_ids, attention_mask) of token-id lists padded on the right to the longest one."""
    import torch

    L = max(len(q) for q in seqs)
    inp = torch.full((len(seqs), L), pad, dtype=torch.long)
    att = torch.zeros((len(seqs), L), dtype=torch.long)
    for r, q in enumerate(seqs):
        inp[r, : len(q)] = torch.tensor(q, dtype=torch.long)
        att[r, : len(q)] = 1
    return inp, att
