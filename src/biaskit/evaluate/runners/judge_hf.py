"""The hf backend as the judge (:meth:`.hf.HFBackend.judge_session`): label log-probabilities from the next token
of a local causal chat model (transformers).

The prompt is the model's chat template applied to the task's messages (``add_generation_prompt=True``), then
tokenised without adding special tokens (the template writes them). Two ways to score a label
(``judge.label_scoring``):

* ``first`` (default): the log-probability of the label's first token at the position after the prompt (one
  forward pass per prompt). The labels' first tokens must differ (error E323 otherwise).
* ``sum``: the summed log-probabilities of all of the label's tokens after the prompt (one forward pass per
  prompt and label), for labels of several tokens that share a first token.

The restricted distribution is the softmax of these log-probabilities over the labels. Batches are padded on
the left with an attention mask and position ids counted from each row's first real token, so a row's
figures do not depend on the batch it is in (tested: batch size 1 and N within 1e-4). A prompt longer than the
model's context is that row's error, never cut.

``judge.repeats=R`` draws R labels per prompt by sampling the first answer token from the model's full
next-token distribution at ``judge.temperature`` (what ``generate`` would do for the first token), with a seed
per prompt; a drawn token that is no label's first token counts as an off-label answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners._hf_base import render_chat
from biaskit.evaluate.runners.backend import JudgeAnswer, JudgeSettings
from biaskit.evaluate.runners.cache import hf_identity, resolve_identity


class LocalJudge:
    """A loaded causal LM with a chat template, judging (see the module docs). ``be`` is the
    :class:`~.hf.HFBackend` that loaded it (``be.lm``, ``be.spec``)."""

    def __init__(self, be: Any, s: JudgeSettings) -> None:
        self.be, self.spec, self.lm = be, be.spec, be.lm
        self.batch_size, self.label_scoring = s.batch_size, s.label_scoring
        self._check(s.labels)

    def _check(self, labels: Sequence[str]) -> None:
        self.tok = self.lm.tokenizer
        if not getattr(self.tok, "chat_template", None):
            raise BiaskitError(
                "E322",
                f"the judge model {self.spec!r} has no chat template",
                value=self.spec,
                fix="use an instruction-tuned chat model (e.g. smollm2-135m), or add a chat_template to its tokenizer_config.json",
            )
        self.labels = list(labels)
        self.label_ids = [list(self.tok(lab, add_special_tokens=False)["input_ids"]) for lab in self.labels]
        empty = [lab for lab, ids in zip(self.labels, self.label_ids) if not ids]
        if empty:
            raise BiaskitError("E323", "a judge label has no tokens", value=empty, fix="use label words the tokenizer can encode")
        firsts = [ids[0] for ids in self.label_ids]
        if self.label_scoring == "first" and len(set(firsts)) != len(firsts):
            clash = [lab for lab, f in zip(self.labels, firsts) if firsts.count(f) > 1]
            raise BiaskitError(
                "E323",
                "judge labels share their first token, so the first token cannot tell them apart",
                value={lab: self.tok.convert_ids_to_tokens(ids) for lab, ids in zip(self.labels, self.label_ids) if lab in clash},
                fix="pass judge.label_scoring=sum (summed log-probabilities of all the label's tokens), or use other label words",
            )
        self.first_of: dict[int, list[str]] = {}
        for lab, f in zip(self.labels, firsts):
            self.first_of.setdefault(f, []).append(lab)

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "hf",
            "model": self.spec,
            "source": self.lm.source,
            "revision": self.lm.revision,
            "device": self.lm.device,
            "dtype": self.lm.dtype,
            "label_tokens": {lab: self.tok.convert_ids_to_tokens(ids) for lab, ids in zip(self.labels, self.label_ids)},
            "label_scoring": self.label_scoring,
            "chat_template": self.tok.chat_template,
        }

    def cache_identity(self, cache: Any) -> dict[str, Any] | None:
        """The loaded model's identity for the response cache, as the hf backend's (weights' sha256 or Hub
        commit, tokenizer and chat template hash, device, dtype); None when a Hub model's commit is unknown."""
        return resolve_identity(hf_identity(self.be, cache), cache)

    def render(self, messages: list[dict[str, str]]) -> str:
        """The prompt text: the chat template applied, ending where the assistant's answer begins (E316 when the
        template raises)."""
        return render_chat(self.tok, messages, self.spec)

    def encode(self, prompt: str) -> list[int]:
        return list(self.tok(prompt, add_special_tokens=False)["input_ids"])

    def answer(
        self, messages: Sequence[list[dict[str, str]]], *, repeats: int = 0, temperature: float = 1.0, seeds: Sequence[int] = ()
    ) -> list[JudgeAnswer]:
        """One :class:`JudgeAnswer` per chat, in order (rendered through the chat template)."""
        return self.answer_prompts([self.render(m) for m in messages], repeats=repeats, temperature=temperature, seeds=seeds)

    def answer_prompts(self, prompts: Sequence[str], *, repeats: int = 0, temperature: float = 1.0, seeds: Sequence[int] = ()) -> list[JudgeAnswer]:
        """One :class:`JudgeAnswer` per rendered prompt, in order (batched longest first; results do not depend on it)."""
        ids = [self.encode(p) for p in prompts]
        extra = max(len(x) for x in self.label_ids) if self.label_scoring == "sum" else 0
        limit = self.lm.context_length
        out: list[JudgeAnswer | None] = [None] * len(prompts)
        ok = []
        for i, x in enumerate(ids):
            if len(x) + extra > limit:
                out[i] = JudgeAnswer(None, tokens_in=0, error=f"the prompt has {len(x)} tokens, more than the judge's context of {limit - extra}")
            else:
                ok.append(i)
        ok.sort(key=lambda i: -len(ids[i]))
        for start in range(0, len(ok), self.batch_size):
            idx = ok[start : start + self.batch_size]
            logp, last = self._score_batch([ids[i] for i in idx])
            for j, i in enumerate(idx):
                draws = self._draws(last[j], repeats, temperature, seeds[i] if seeds else i)
                tin = len(ids[i]) if self.label_scoring == "first" else sum(len(ids[i]) + len(x) for x in self.label_ids)
                out[i] = JudgeAnswer([float(v) for v in logp[j]], draws, tokens_in=tin, tokens_out=1)
        return [a for a in out if a is not None]

    def _forward(self, seqs: list[list[int]], keep: int):
        """Log-softmax (float64 numpy, rows x ``keep`` x vocab) at the last ``keep`` positions of left-padded
        ``seqs`` (the LM head runs only there: ``logits_to_keep``; every other position would cost a vocabulary-wide
        product for nothing)."""
        import torch

        L = max(len(q) for q in seqs)
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        inp = torch.full((len(seqs), L), pad, dtype=torch.long)
        att = torch.zeros((len(seqs), L), dtype=torch.long)
        for r, q in enumerate(seqs):
            inp[r, L - len(q) :] = torch.tensor(q, dtype=torch.long)
            att[r, L - len(q) :] = 1
        pos = (att.cumsum(-1) - 1).clamp(min=0)
        dev = self.lm.model.device
        with torch.inference_mode():
            out = self.lm.model(input_ids=inp.to(dev), attention_mask=att.to(dev), position_ids=pos.to(dev), logits_to_keep=keep)
            logits = out.logits[:, -keep:, :]
            return torch.log_softmax(logits.float(), dim=-1).double().cpu().numpy()

    def _score_batch(self, seqs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """(label log-probabilities rows x labels, the next-token log-softmax after each prompt rows x vocab)."""
        if self.label_scoring == "first":
            lsm = self._forward(seqs, 1)[:, -1, :]
            return lsm[:, [ids[0] for ids in self.label_ids]], lsm
        n_lab = len(self.label_ids)
        K = max(len(x) for x in self.label_ids) + 1
        lsm = self._forward([q + lab for q in seqs for lab in self.label_ids], K)
        logp = np.zeros((len(seqs), n_lab))
        last = np.zeros((len(seqs), lsm.shape[-1]))
        for r in range(len(seqs)):
            for k, lab in enumerate(self.label_ids):
                row = lsm[r * n_lab + k]
                m = len(lab)
                # kept positions are the last K; the label's tokens (the last m) are predicted from kept
                # positions K-m-1 .. K-2
                logp[r, k] = sum(row[K - m - 1 + t, tok] for t, tok in enumerate(lab))
                if k == 0:
                    last[r] = row[K - m - 1]
        return logp, last

    def _draws(self, lsm_last: np.ndarray, repeats: int, temperature: float, seed: int) -> list[str | None]:
        """``repeats`` first answer tokens drawn from the full next-token distribution at ``temperature``."""
        if repeats <= 0:
            return []
        z = lsm_last / max(temperature, 1e-6)
        p = np.exp(z - z.max())
        p /= p.sum()
        rng = np.random.default_rng(seed)
        toks = rng.choice(len(p), size=repeats, p=p)
        out: list[str | None] = []
        for t in toks:
            labs = self.first_of.get(int(t), [])
            out.append(labs[0] if len(labs) == 1 else None)
        return out
