"""The language-neutral mask slot of template files and prompts tables.

Template files, translation sheets and prompts tables write the slot a masked LM fills as :data:`MASK`
(``<mask>``), whatever the model. The fill-mask runner swaps it for the tokenizer's own mask token with
:func:`to_model_mask` (``[MASK]`` for BERT, ``<mask>`` for RoBERTa/XLM-R, ...). Imported text often
carries translated or mangled variants (``<maska>``, ``‹maskę>``, ``<masce>``, ``[M]``):
:func:`normalize_mask` maps the known ones to :data:`MASK` and :func:`find_mask_like` spots the rest.
"""

from __future__ import annotations

import re

#: the mask slot in biaskit template files and prompts tables
MASK = "<mask>"

# Opening/closing brackets seen around mask tokens in translated sheets: < > ‹ › « » [ ] ⟨ ⟩ ＜ ＞
_OPEN = r"[<‹«\[⟨＜]"
_CLOSE = r"[>›»\]⟩＞]"
# Known spellings: English, HONEST's [M], and Czech/Polish/Slovak case forms of "maska"/"maskа".
_KNOWN_WORDS = r"(?:mask|masks|maska|masky|maske|masce|masku|maskou|maskę|maską|maski|masek|masko|m|mask_token|mask-token)"
_KNOWN = re.compile(rf"{_OPEN}\s*{_KNOWN_WORDS}\s*{_CLOSE}", re.IGNORECASE)
# Anything still looking like a bracketed token after normalisation (reported, never guessed).
# A bracket directly before or after the normalised slot: what is left of "<mask>>" or "‹‹maskę>".
_STUCK_BRACKET = re.compile(rf"{_OPEN}+{re.escape(MASK)}{_CLOSE}*|{re.escape(MASK)}{_CLOSE}+")
_MASK_LIKE = re.compile(rf"{_OPEN}[^<>‹›«»\[\]⟨⟩＜＞{{}}]{{0,20}}{_CLOSE}|{_OPEN}\s*ma?s?k\w*|\bmask\w*{_CLOSE}", re.IGNORECASE)


def to_model_mask(text: str, mask_token: str) -> str:
    """Replace biaskit's :data:`MASK` in ``text`` with the model's ``mask_token``.

    >>> to_model_mask("Ten muž je <mask>.", "[MASK]")
    'Ten muž je [MASK].'
    """
    if not mask_token:
        raise ValueError("to_model_mask() needs the tokenizer's mask token (tokenizer.mask_token)")
    return text.replace(MASK, mask_token)


def count_masks(text: str) -> int:
    return text.count(MASK)


def normalize_mask(text: str) -> str:
    """Map known mask spellings (``<maska>``, ``‹maskę>``, ``[M]``, ``[MASK]``, ``<MASK>``) to :data:`MASK`.

    >>> normalize_mask("Ta žena pracuje jako ‹maska>.")
    'Ta žena pracuje jako <mask>.'
    """
    return _KNOWN.sub(MASK, text)


def find_mask_like(text: str) -> list[str]:
    """Bracketed tokens other than :data:`MASK` that look like a damaged mask (to report, not fix).

    A mask with an extra bracket stuck to it (``<mask>>``, ``‹‹maskę>``) counts: normalising its known part
    would otherwise leave the stray bracket in every prompt.
    """
    stuck = [m.group(0) for m in _STUCK_BRACKET.finditer(text)]
    rest = text.replace(MASK, " ")
    return stuck + [m.group(0) for m in _MASK_LIKE.finditer(rest)]
