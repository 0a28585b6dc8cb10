"""Which texts an English-only metric covers: a text it cannot read gets null + error, never a neutral 0.

VADER's lexicon and the default toxicity models (``unitary/toxic-bert``, the offline alt-profanity-check) read
English. On text in another script (Hebrew, Arabic, Cyrillic, CJK, ...) they find no known word and return a score
that looks like a real "neutral" / "non-toxic" result; on a run of letters with no spaces (100,000 x ``A``) the
same. Such texts are not scored: the metric writes null and ``<metric>_error`` = ``not covered: ...`` (a row the
report counts as failed, not as neutral). Texts without letters (digits, emoji, punctuation) are left to the metric.

The rule (kept simple so that it can be stated exactly):

- **script**: fewer than half of the text's letters are Latin letters (A-Z, a-z and the Latin-1/Latin Extended-A/B/
  Additional blocks) -> ``not covered: ... mostly HEBREW script (100% of its letters)``;
- **words**: no whitespace-separated token with a letter is at most :data:`MAX_WORD` characters long ->
  ``not covered: no word-like token ...``.

A Latin-script text in another language (Czech, Polish) passes the check: telling languages apart needs a language
identifier, which biaskit does not ship; docs/metrics.md says the metrics are English-only.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

#: longest token still read as a word (the longest English dictionary words have about 45 letters)
MAX_WORD = 45

_LETTER = re.compile(r"[^\W\d_]")
_LATIN = re.compile(r"[A-Za-z\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff\uff21-\uff3a\uff41-\uff5a]")


def _script(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return name.split(" ")[0] if name else f"U+{ord(ch):04X}"


def coverage_error(text: str, metric: str) -> str | None:
    """Why ``metric`` (English-only) does not cover ``text``, or None when it does (see the module docstring)."""
    letters = _LETTER.findall(text)
    if not letters:
        return None
    latin = len(_LATIN.findall(text))
    if 2 * latin < len(letters):
        other = Counter(_script(c) for c in letters if not _LATIN.match(c)).most_common(1)[0][0]
        share = round(100 * (len(letters) - latin) / len(letters))
        return f"not covered: {metric} reads English (Latin-script) text and this text is mostly {other} script ({share}% of its letters)"
    if not any(len(w) <= MAX_WORD for w in text.split() if _LETTER.search(w)):
        longest = max(len(w) for w in text.split())
        return (
            f"not covered: {metric} reads English words and this text has no word-like token "
            f"(its shortest token with letters has more than {MAX_WORD} characters; the longest has {longest})"
        )
    return None
