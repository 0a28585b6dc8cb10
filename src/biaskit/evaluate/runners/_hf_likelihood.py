"""Likelihood scoring in the Hugging Face backend: causal log-likelihood and masked pseudo-log-likelihood.

Causal LMs score every text token given the ones before it (an optional BOS in front is never scored);
masked LMs mask one token at a time (Salazar et al. 2020). With a span, only the tokens overlapping it count. On a
pairs table a masked LM scores only the tokens a variant shares with the pair's other variant (``Unit.partner``),
each masked in turn with the differing tokens given: the score of the CrowS-Pairs paper (Nangia et al. 2020).
Every scored row has ``sum_logprob``, the sum of the scored tokens' log-probabilities (``-nll_mean * n_tokens``).
Part of :class:`biaskit.evaluate.runners.hf.HFBackend`.
"""

from __future__ import annotations

import difflib
import inspect
import math
from collections.abc import Iterator, Sequence

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners._hf_base import HFBase, cut_left, right_padded, torch_module
from biaskit.evaluate.runners.common import LikelihoodSettings, Unit, find_span


class HFLikelihood(HFBase):
    """``likelihood`` and ``bos_policy`` of the HF backend."""

    share_prefix: bool = True  # causal likelihood: texts with one unscored prefix run it once (see _ll_shared)

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

    def _encode_all(self, units: Sequence[Unit], bos: int | None) -> list[tuple[list[int], list[int], bool, str | None]]:
        """:meth:`_encode_scored` of every unit, the texts tokenized 1,024 at a time in one call of the tokenizer
        (character offsets only with a span: slow tokenizers have none)."""
        offsets = any(u.span is not None for u in units)
        out = []
        for start in range(0, len(units), 1024):
            chunk = units[start : start + 1024]
            texts = [u.text for u in chunk if u.text and u.text.strip()]
            batch = self.lm.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=offsets) if texts else {"input_ids": []}
            it = iter(zip(batch["input_ids"], batch["offset_mapping"] if offsets else batch["input_ids"]))
            out += [self._encode_scored(u, bos, *next(it)) if u.text and u.text.strip() else self._encode_scored(u, bos, [], []) for u in chunk]
        return out

    def _encode_scored(self, u: Unit, bos: int | None, ids: list[int], offs: list) -> tuple[list[int], list[int], bool, str | None]:
        """(input ids, indices of target positions to score, truncated, error) of ``u``, whose text's tokens and
        their character offsets are ``ids`` and ``offs``."""
        if not u.text or not u.text.strip():
            return [], [], False, "empty text"
        span, err = self._span_chars(u)
        if err:
            return [], [], False, err
        x = list(ids)
        keep = list(range(len(x)))
        if span is not None:
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
        bos = self.bos_policy(s)
        enc = self._encode_all(units, bos)
        bad = [i for i, e in enumerate(enc) if e[3] is not None]
        if bad:
            yield [_ll_row(units[i], None, 0, enc[i][2], enc[i][3]) for i in bad]
        valid = [i for i, e in enumerate(enc) if e[3] is None]
        groups, single = prefix_groups([enc[i][0] for i in valid], [enc[i][1][0] for i in valid])
        if not (self.share_prefix and getattr(self.lm.model.config, "use_cache", False)):
            groups, single = [], list(range(len(valid)))
        yield from self._ll_shared(units, enc, [[valid[j] for j in g] for g in groups], batch_size)
        yield from self._ll_plain(units, enc, [valid[j] for j in single], batch_size)

    def _ll_plain(self, units: Sequence[Unit], enc: list, idxs: list[int], batch_size: int | None) -> Iterator[list[dict]]:
        """Each text in one forward pass, batched longest first."""
        torch = torch_module()
        lm, model, tok = self.lm, self.lm.model, self.lm.tokenizer
        lengths = {i: len(enc[i][0]) for i in idxs}
        order = sorted(idxs, key=lambda i: (-lengths[i], i))
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0

        def run(idx: list[int]) -> list[float]:
            inp, att = right_padded([enc[i][0] for i in idx], pad)
            mask = torch.zeros(inp.shape, dtype=torch.bool)
            for r, i in enumerate(idx):
                mask[r, enc[i][1]] = True
            with torch.inference_mode():
                logits = model(input_ids=inp.to(lm.device), attention_mask=att.to(lm.device)).logits
                return scored_logprob_sums(logits[:, :-1], inp[:, 1:], mask[:, 1:])

        full_lengths = [lengths.get(i, 0) for i in range(len(enc))]
        for idx, res in self._batched(order, full_lengths, batch_size, run):
            yield [_ll_row(units[i], -lp, len(enc[i][1]), enc[i][2], None) for i, lp in zip(idx, res)]

    def _ll_shared(self, units: Sequence[Unit], enc: list, groups: list[list[int]], batch_size: int | None) -> Iterator[list[dict]]:
        """Texts that share their unscored prefix (BBQ's options after one context and question): the prefix runs
        once per group, its key/value cache is copied to each member, and the members' remaining tokens run as one
        batch after it. Groups are batched longest prefix first (prefixes padded on the left, continuations on the
        right, positions counted from each text's first token), ``batch_size`` counting the members' rows on average; the
        log-probabilities equal one forward pass over each whole text (a test holds them to 1e-5)."""
        if not groups:
            return
        first = [enc[g[0]][1][0] for g in groups]
        rest = [max(len(enc[i][0]) for i in g) - first[j] for j, g in enumerate(groups)]
        order = sorted(range(len(groups)), key=lambda j: (-first[j], -rest[j], j))
        mean = sum(len(g) for g in groups) / len(groups)  # BBQ: 4, more where examples repeat a context and question
        group_batch = None if batch_size is None else max(1, round(batch_size / mean))
        sizes = [first[j] + rest[j] * len(g) for j, g in enumerate(groups)]  # the tokens a group runs
        for jdx, res in self._batched(order, sizes, group_batch, lambda jdx: self._shared_batch(enc, [groups[j] for j in jdx])):
            members = [i for j in jdx for i in groups[j]]
            yield [_ll_row(units[i], -lp, len(enc[i][1]), enc[i][2], None) for i, lp in zip(members, res)]

    def _shared_batch(self, enc: list, gs: list[list[int]]) -> list[float]:
        """Scored log-probability sums of the members of ``gs`` (in order), each group's prefix run once."""
        torch = torch_module()
        lm, model, tok = self.lm, self.lm.model, self.lm.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        first = [enc[g[0]][1][0] for g in gs]
        members = [(i, r) for r, g in enumerate(gs) for i in g]
        owner = torch.tensor([r for _, r in members], device=lm.device)
        width = max(first)
        prefix = torch.full((len(gs), width), pad, dtype=torch.long)
        prefix_att = torch.zeros((len(gs), width), dtype=torch.long)
        for r, g in enumerate(gs):
            prefix[r, width - first[r] :] = torch.tensor(enc[g[0]][0][: first[r]], dtype=torch.long)
            prefix_att[r, width - first[r] :] = 1
        inp, att = right_padded([enc[i][0][first[r] :] for i, r in members], pad)
        mask = torch.zeros(inp.shape, dtype=torch.bool)
        for m, (i, r) in enumerate(members):
            mask[m, [p - first[r] for p in enc[i][1]]] = True
        params = inspect.signature(model.forward).parameters
        keep = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
        cache_arg = "cache" if "cache" in params else "past_key_values"
        starts = torch.tensor(first, dtype=torch.long)[:, None]
        with torch.inference_mode():
            head = model(
                input_ids=prefix.to(lm.device),
                attention_mask=prefix_att.to(lm.device),
                position_ids=(torch.arange(width)[None, :] - (width - starts)).clamp(min=0).to(lm.device),
                use_cache=True,
                **keep,
            )
            cache = getattr(head, "cache", None) or getattr(head, "past_key_values", None)
            if cache is None or not hasattr(cache, "batch_select_indices"):
                raise BiaskitError(
                    "E062", "the model's key/value cache cannot be shared between texts", value=type(cache).__name__, fix="pass share_prefix=False"
                )
            cache.batch_select_indices(owner)
            logits = model(
                input_ids=inp.to(lm.device),
                attention_mask=torch.cat([prefix_att[owner.cpu()], att], dim=1).to(lm.device),
                position_ids=(starts[owner.cpu()] + torch.arange(inp.shape[1])[None, :]).to(lm.device),
                use_cache=True,
                **{cache_arg: cache},
            ).logits
            logits = torch.cat([head.logits[:, -1:][owner].to(logits.dtype), logits[:, :-1]], dim=1)
            return scored_logprob_sums(logits, inp, mask)

    def _pll(self, units: Sequence[Unit], s: LikelihoodSettings, batch_size: int | None) -> Iterator[list[dict]]:
        """Pseudo-log-likelihood (Salazar et al. 2020): mask each scored token in turn, sum log p(token)."""
        if self.lm.tokenizer.mask_token_id is None:
            raise BiaskitError("E060", "the masked LM's tokenizer has no mask token", value=self.spec)
        for start in range(0, len(units), 64):  # stream results prompt group by prompt group
            yield from self._pll_chunk(units[start : start + 64], batch_size)

    def _pll_encode(self, u: Unit) -> tuple[list[int], list[int], bool, str | None]:
        """(input ids, positions to score, truncated, error) of one text; special tokens are never scored."""
        lm, tok = self.lm, self.lm.tokenizer
        err = None if (u.text and u.text.strip()) else "empty text"
        span, serr = self._span_chars(u) if err is None else (None, None)
        err = err or serr
        if err is not None:
            return [], [], False, err
        e = tok(u.text, add_special_tokens=True, return_offsets_mapping=True, return_special_tokens_mask=True)
        x = list(e["input_ids"])
        special = list(e["special_tokens_mask"])
        offs = list(e["offset_mapping"])
        truncated = len(x) > lm.context_length
        if truncated:  # cut from the left, keeping the leading special token ([CLS] / <s>)
            x, special, offs = (cut_left(v, lm.context_length, bool(special[0])) for v in (x, special, offs))
            self.truncated_count += 1
        pos = [j for j in range(len(x)) if not special[j] and (span is None or (offs[j][1] > span[0] and offs[j][0] < span[1]))]
        if u.partner is not None:  # CrowS-Pairs: only the tokens the two variants share, the differing ones given
            other = tok(u.partner, add_special_tokens=True)["input_ids"]
            shared = shared_positions(x, list(other), special)
            pos = [j for j in pos if j in shared]
        if not pos:
            err = (
                "no token to score"
                + (f" in span {u.span!r}" if span else "")
                + (" shared with the pair's other variant" if u.partner is not None else "")
            )
        return x, pos, truncated, err

    def _pll_chunk(self, chunk: Sequence[Unit], batch_size: int | None) -> Iterator[list[dict]]:
        """The PLL rows of one group of texts: error rows first, then one row per scored text (in text order)."""
        torch = torch_module()
        lm, model, tok = self.lm, self.lm.model, self.lm.tokenizer
        enc, bad_rows = [], []
        jobs: list[tuple[int, int]] = []  # one (text, position) per token to mask and score
        for ci, u in enumerate(chunk):
            x, pos, truncated, err = self._pll_encode(u)
            enc.append((x, pos, truncated))
            if err is None:
                jobs.extend((ci, p) for p in pos)
            else:
                bad_rows.append(_ll_row(u, None, 0, truncated, err))
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


def _ll_row(u: Unit, nll_sum: float | None, n: int, truncated: bool, error: str | None) -> dict:
    if error is not None or nll_sum is None or n == 0:
        return {
            "_unit": u,
            "nll_mean": None,
            "perplexity": None,
            "sum_logprob": None,
            "n_tokens": None if error else n,
            "truncated": truncated,
            "error": error or "no token scored",
        }
    mean = nll_sum / n
    return {"_unit": u, "nll_mean": mean, "perplexity": math.exp(mean), "sum_logprob": -nll_sum, "n_tokens": n, "truncated": truncated, "error": None}


def prefix_groups(ids: Sequence[list[int]], first: Sequence[int]) -> tuple[list[list[int]], list[int]]:
    """Texts (token ids, first scored position) whose tokens before the first scored one are the same: the groups
    of two or more (indices, in order) and the texts left alone."""
    by_prefix: dict[tuple[int, ...], list[int]] = {}
    for i, (x, f) in enumerate(zip(ids, first)):
        by_prefix.setdefault(tuple(x[:f]), []).append(i)
    groups = [g for g in by_prefix.values() if len(g) > 1]
    return groups, sorted(i for g in by_prefix.values() if len(g) == 1 for i in g)


def scored_logprob_sums(logits, targets, mask) -> list[float]:
    """Per row, the sum (in float64) of log p(target) over the positions where ``mask`` is true; ``logits[:, t]``
    predicts ``targets[:, t]``."""
    torch = torch_module()
    logp = torch.log_softmax(logits.float(), dim=-1)
    lp = logp.gather(-1, targets.to(logp.device)[..., None]).squeeze(-1).double()
    return torch.where(mask.to(lp.device), lp, torch.zeros_like(lp)).sum(-1).tolist()


def shared_positions(x: list[int], y: list[int], special: list[int]) -> set[int]:
    """Positions of ``x`` whose tokens the alignment of ``x`` with ``y`` matches (difflib's equal blocks, no
    junk heuristic), special tokens left out: the tokens CrowS-Pairs scores (the differing ones are given)."""
    m = difflib.SequenceMatcher(None, x, y, autojunk=False)
    return {i for tag, a, b, _, _ in m.get_opcodes() if tag == "equal" for i in range(a, b) if not special[i]}
