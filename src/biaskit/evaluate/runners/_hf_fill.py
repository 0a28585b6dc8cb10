"""Masked-LM fill-ins in the Hugging Face backend: the top-k words for a template's single mask slot.

Single-token fill-ins (``max_subwords=1``) are the top-k vocabulary entries at the mask (optionally only whole
words or given targets). Whole words of several subword pieces (``max_subwords > 1``) come from a beam search
over 1..N mask tokens and are ranked by pseudo-log-likelihood. Part of
:class:`biaskit.evaluate.runners.hf.HFBackend`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners._hf_base import HFBase, cut_left, right_padded, torch_module
from biaskit.evaluate.runners.common import MASK, FillMaskSettings, Unit, to_model_mask

#: a candidate whole word: its subword token ids and the word as the tokenizer decodes them
_Cand = tuple[tuple[int, ...], str]


class HFFill(HFBase):
    """``fill_mask`` of the HF backend."""

    def fill_mask(self, units: Sequence[Unit], s: FillMaskSettings, batch_size: int | None) -> Iterator[list[dict]]:
        lm, tok = self.lm, self.lm.tokenizer
        if lm.task != "masked" or tok.mask_token is None:
            raise BiaskitError(
                "E060",
                "fill-mask needs a masked LM (e.g. bert-base-cased, xlm-roberta-base); this model is causal",
                value=self.spec,
                fix="give a masked LM with --model",
            )
        allowed = self._candidate_mask(s)
        t, bad = self._encode_templates(units, s)
        if bad:
            yield bad
        if s.max_subwords > 1:
            yield from self._fill_words(t, s, batch_size)
            return
        yield from self._fill_tokens(t, s, batch_size, allowed)

    def _encode_templates(self, units: Sequence[Unit], s: FillMaskSettings) -> tuple[_Templates, list[dict]]:
        """The templates encoded for the model (:class:`_Templates`), and an error row for each template that cannot run."""
        tok = self.lm.tokenizer
        enc: list[tuple[list[int], int] | None] = []
        bad = []
        normed: dict[int, str] = {}
        trunc: set[int] = set()
        for i, u in enumerate(units):
            text, norm, err = to_model_mask(u.text, tok.mask_token)
            if err is None:
                assert text is not None and norm is not None  # to_model_mask gives both when there is no error
                normed[i] = norm
                e, cut, err = self._encode_template(text, s)
                if cut:
                    trunc.add(i)
                if err is None:
                    enc.append(e)
                    continue
            enc.append(None)
            bad.append(_fill_error(u, i in trunc, err))
        return _Templates(units, enc, normed, trunc), bad

    def _encode_template(self, text: str, s: FillMaskSettings) -> tuple[tuple[list[int], int] | None, bool, str | None]:
        """((token ids, mask position) or None, cut from the left, error) of one template in the model's notation."""
        tok = self.lm.tokenizer
        x = tok(text, add_special_tokens=True)["input_ids"]
        limit = max(1, self.lm.context_length - (s.max_subwords - 1))  # room for the slot's extra mask tokens
        cut = len(x) > limit
        if cut:  # cut from the left, keeping the leading special token
            x = cut_left(x, limit, x[0] in set(tok.all_special_ids))
            self.truncated_count += 1
        mpos = [j for j, t in enumerate(x) if t == tok.mask_token_id]
        if cut and not mpos:
            return None, cut, "the mask slot falls outside the model context once the template is cut from the left"
        if len(mpos) != 1:
            return None, cut, f"the tokenised template has {len(mpos)} mask tokens; fill-mask needs exactly one"
        return (x, mpos[0]), cut, None

    # ------------------------------------------------------------------ single-token fill-in
    def _fill_tokens(self, t: _Templates, s: FillMaskSettings, batch_size: int | None, allowed) -> Iterator[list[dict]]:
        """The top-k single tokens at each template's mask (among ``allowed`` ones), by probability."""
        enc = {i: e for i, e in enumerate(t.enc) if e is not None}  # the templates that run
        torch = torch_module()
        lm, model, tok = self.lm, self.lm.model, self.lm.tokenizer
        lengths = [len(e[0]) if e else 0 for e in t.enc]
        order = sorted(enc, key=lambda i: (-lengths[i], i))
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        k = s.top_k

        def run(idx: list[int]):
            inp, att = right_padded([enc[i][0] for i in idx], pad)
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
            for i, top in zip(idx, res):
                rows.extend(self._token_rows(t.units[i], t.normed[i], i in t.trunc, top))
            yield rows

    def _token_rows(self, u: Unit, template: str, truncated: bool, top: tuple[list, list, list]) -> list[dict]:
        """One row per ranked token (score, token id, log-probability) of one template."""
        tok = self.lm.tokenizer
        rows = []
        for r, (sc, tid, lpv) in enumerate(zip(*top)):
            if sc < 0:  # fewer allowed candidates than k
                break
            word = tok.decode([tid]).strip()
            piece = tok.convert_ids_to_tokens(tid)
            filled, fill = template, word
            if isinstance(piece, str) and piece.startswith("##"):  # a subword piece joins the word before
                fill = word[2:] if word.startswith("##") else word
                filled = filled.replace(" " + MASK, MASK)
            filled = filled.replace(MASK, fill)
            rows.append(_fill_row(u, r, truncated, _FillIn(word, float(sc), filled, 1, float(lpv))))
        return rows

    def _candidate_mask(self, s: FillMaskSettings):
        """Boolean vocabulary mask of allowed fill-ins (whole words / targets), or None for all tokens."""
        if not s.whole_word and not s.targets:
            return None
        torch = torch_module()
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

    # ------------------------------------------------------------------ multi-token (whole-word) fill-in
    def _piece_sets(self):
        """(word-initial, continuation) boolean vocabulary masks for whole-word filling.

        WordPiece: continuation pieces start with ``##``. BPE / SentencePiece: word-initial pieces carry the space
        marker (``Ġ`` / ``▁``), continuation pieces do not. Both must hold a letter; special tokens are never allowed.
        """
        if getattr(self, "_pieces", None) is not None:
            return self._pieces
        torch = torch_module()
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
        torch = torch_module()
        lm, tok = self.lm, self.lm.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        lengths = [len(q) for q in seqs]
        order = sorted(range(len(seqs)), key=lambda j: (-lengths[j], j))
        out: list = [None] * len(seqs)

        def run(idx: list[int]) -> list:
            inp, att = right_padded([seqs[j] for j in idx], pad)
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

    def _fill_words(self, t: _Templates, s: FillMaskSettings, batch_size: int | None) -> Iterator[list[dict]]:
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
        lm, N = self.lm, s.max_subwords
        for i, e in enumerate(t.enc):
            if e is None:
                continue
            if len(e[0]) - 1 + N > lm.context_length:
                why = f"the template with {N} mask tokens is longer than the model context ({lm.context_length} tokens); use a smaller --max-subwords"
                yield [_fill_error(t.units[i], i in t.trunc, why)]
                continue
            yield self._word_rows(t, i, s, batch_size)

    def _word_rows(self, t: _Templates, i: int, s: FillMaskSettings, batch_size: int | None) -> list[dict]:
        """The ranked whole-word fill-in rows of template ``i`` of ``t`` (or one error row when none is found)."""
        u, template, truncated = t.units[i], t.normed[i], i in t.trunc
        e = t.enc[i]
        assert e is not None  # _fill_words passes only the templates that were encoded
        x, m = e
        prefix, suffix = x[:m], x[m + 1 :]
        model_text = template.replace(MASK, self.lm.tokenizer.mask_token)
        beams = self._beam_search(prefix, suffix, self._first_pieces(model_text, suffix), s, batch_size)
        cands = self._whole_words(beams, prefix, suffix, model_text, truncated)
        pll = self._plls(cands, prefix, suffix, s.pll, batch_size)
        rows = []
        for r, c in enumerate(_rank_words(cands, pll)[: s.top_k]):
            toks, word = cands[c]
            rows.append(_fill_row(u, r, truncated, _FillIn(word, math.exp(pll[c]), template.replace(MASK, word), len(toks), pll[c])))
        return rows or [_fill_error(u, truncated, "no whole-word fill-in found (the slot may be glued to the text around it)")]

    def _first_pieces(self, model_text: str, suffix: list[int]):
        """The vocabulary mask a word's first piece comes from in this slot (word-initial pieces, as a rule)."""
        initial, cont, wordpiece = self._piece_sets()
        if not wordpiece:
            # BPE / SentencePiece: a word at the very start (or after a bracket) may have no space marker
            # (RoBERTa's "word" vs "Ġword"); probe how the tokenizer writes a word in this slot
            tok = self.lm.tokenizer
            probe = tok(model_text.replace(tok.mask_token, "a", 1), add_special_tokens=True)["input_ids"]
            at = len(probe) - len(suffix) - 1  # counted from the end: also right for a template cut from the left
            if at >= 0 and probe[at + 1 :] == suffix:
                piece = tok.convert_ids_to_tokens(probe[at])
                if isinstance(piece, str) and not piece.startswith(("\u0120", "\u2581")):
                    return cont
        return initial

    def _beam_search(self, prefix: list[int], suffix: list[int], first, s: FillMaskSettings, batch_size: int | None) -> dict[int, list]:
        """For each length n in 1..N: the ``s.beams`` best fill-ins (token ids, summed step log-probability)."""
        cont = self._piece_sets()[1]
        mask_id = self.lm.tokenizer.mask_token_id
        B, N = s.beams, s.max_subwords
        beams: dict[int, list] = {n: [((), 0.0)] for n in range(1, N + 1)}
        for j in range(N):
            jobs = [(n, b) for n in range(1, N + 1) if j < n for b in beams[n]]
            seqs = [prefix + list(b[0]) + [mask_id] * (n - j) + suffix for n, b in jobs]
            allow = first if j == 0 else cont
            kk = min(B, int(allow.sum()))
            if kk == 0:
                return {n: [] for n in beams}

            def top(logp, r, allow=allow, kk=kk):
                v, ids_ = logp.masked_fill(~allow, float("-inf")).topk(kk)
                return list(zip(ids_.tolist(), v.double().tolist()))

            res = self._logits_rows(seqs, [len(prefix) + j] * len(seqs), batch_size, top) if seqs else []
            grown: dict[int, list] = {}
            for (n, (toks, sc)), opts in zip(jobs, res):
                grown.setdefault(n, []).extend((toks + (t,), sc + v) for t, v in opts)
            for n, cands in grown.items():
                beams[n] = sorted(cands, key=lambda c: (-c[1], c[0]))[:B]
        return beams

    def _whole_words(self, beams: dict[int, list], prefix: list[int], suffix: list[int], model_text: str, truncated: bool) -> list[_Cand]:
        """The finished beams that are how the tokenizer itself writes the filled sentence (whole words)."""
        tok = self.lm.tokenizer
        cands = []
        for n in sorted(beams):
            for toks, _ in beams[n]:
                if len(toks) != n:
                    continue
                word = tok.decode(list(toks)).strip()
                if not word:
                    continue
                want = prefix + list(toks) + suffix
                got = tok(model_text.replace(tok.mask_token, word, 1), add_special_tokens=True)["input_ids"]
                if truncated:  # the template was cut from the left (its first special token kept): compare the tail
                    got, want = got[len(got) - len(want) + 1 :], want[1:]
                if got != want:
                    continue  # not how the tokenizer writes this word here: not a whole word in this slot
                cands.append((toks, word))
        return cands

    def _plls(self, cands: list[_Cand], prefix: list[int], suffix: list[int], pll: str, batch_size: int | None) -> list[float]:
        """Pseudo-log-likelihood of each candidate's pieces (``original``: one piece masked; ``word_l2r``: it and
        the pieces after it)."""
        mask_id = self.lm.tokenizer.mask_token_id
        seqs, pos, tgt, owner = [], [], [], []
        for c, (toks, _) in enumerate(cands):
            full = prefix + list(toks) + suffix
            for q in range(len(toks)):
                masked = list(full)
                for r in range(q, len(toks)) if pll == "word_l2r" else (q,):
                    masked[len(prefix) + r] = mask_id
                seqs.append(masked)
                pos.append(len(prefix) + q)
                tgt.append(toks[q])
                owner.append(c)
        vals = self._logits_rows(seqs, pos, batch_size, lambda logp, r: float(logp[tgt[r]].double())) if seqs else []
        out = [0.0] * len(cands)
        for c, v in zip(owner, vals):
            out[c] += v
        return out


def _rank_words(cands: list[_Cand], pll: list[float]) -> list[int]:
    """Candidate indices by PLL (then fewer pieces, then token ids), each word once."""
    seen: set[str] = set()
    ranked = []
    for c in sorted(range(len(cands)), key=lambda c: (-pll[c], len(cands[c][0]), cands[c][0])):
        if cands[c][1] in seen:
            continue
        seen.add(cands[c][1])
        ranked.append(c)
    return ranked


@dataclass(frozen=True)
class _FillIn:
    """One fill-in of a template's slot: the word, its score (probability, or exp(PLL) for a word of several
    pieces), the filled template, its number of subword pieces and its pseudo-log-likelihood."""

    word: str
    score: float
    full_text: str
    n_subwords: int
    fill_pll: float


@dataclass(frozen=True)
class _Templates:
    """A batch's templates encoded for the model: the units, each template's (token ids, mask position) or None
    when it cannot run, the templates in ``<mask>`` notation (by index) and the indices of those cut from the left."""

    units: Sequence[Unit]
    enc: list[tuple[list[int], int] | None]
    normed: dict[int, str]
    trunc: set[int]


def _fill_row(u: Unit, r: int, truncated: bool, fill: _FillIn) -> dict[str, Any]:
    """The row of ``fill``, the fill-in of rank ``r + 1``."""
    return {
        "_unit": u,
        "sample_index": r,
        "token": fill.word,
        "token_score": fill.score,
        "rank": r + 1,
        "full_text": fill.full_text,
        "truncated": truncated,
        "error": None,
        "n_subwords": fill.n_subwords,
        "fill_pll": fill.fill_pll,
    }


def _fill_error(u: Unit, truncated: bool, error: str | None) -> dict[str, Any]:
    """The one row of a template that got no fill-ins."""
    return {
        "_unit": u,
        "sample_index": 0,
        "token": None,
        "token_score": None,
        "rank": None,
        "full_text": None,
        "truncated": truncated,
        "error": error,
    }
