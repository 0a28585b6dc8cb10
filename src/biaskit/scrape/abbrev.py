"""Abbreviations learnt per language edition, for the languages the ``wiki`` splitter has no list for.

The ``wiki`` splitter knows English abbreviations, and Greek and Vietnamese ones (``LANG_ABBREVIATIONS``). In any
other edition a dot before a capital would end a sentence after every abbreviation of that language (Ukrainian
``ім. Шевченка``, ``вул. Хрещатик``, ``дол. США``, ``св. Софії``, ``див. Розділ``), so a dump scrape in such a
language first learns the edition's abbreviations from its own text:

* **Sample.** The first pages of the dump (articles, in dump order) are cleaned as the scrape cleans them, until
  :data:`SAMPLE_CHARS` characters of prose or :data:`SAMPLE_PAGES` pages; a killed and resumed run draws the same
  sample, so it learns the same list.
* **Learner.** NLTK's unsupervised Punkt trainer (Kiss & Strunk 2006): a word type is an abbreviation when it is
  seen with a final dot far more often than without (a log-likelihood test, weighted by its length and its inner
  dots). It needs no model and no download.
* **Evidence.** Punkt alone learnt ordinary words that end many sentences (the surname ``ющенко``) and missed
  abbreviations it saw often (``ім.`` before initials). A word is kept only when the sample shows it: written with
  its dot at least :data:`MIN_COUNT` times, never as the last word of a paragraph (a paragraph never ends in an
  abbreviation that introduces a name), and not only ever capitalised when longer than three letters (a name). A
  short lower-case word (up to :data:`SHORT_LETTERS` letters) with that evidence, written with its dot in at least
  :data:`DOT_SHARE` of its uses, is an abbreviation even where Punkt did not propose it (``ім``, ``проф``).
* **Kept.** Words of letters (and inner dots) up to 8 letters; numbers and roman numerals are left to the splitter's
  own rules. They are used exactly like the splitter's own list: never a sentence end before a capital.

The library learns the same way: ``load_splitter("uk", learn_from=dump)`` (or paragraphs of the edition's text)
calls :func:`learn_from_dump` as ``scrape dump`` does; without ``learn_from`` it warns that it has no list.

The manifest records what was learnt (``abbreviations``: source, pages and characters sampled, the words). The
held-back measurement is in docs/scrape.md ("Abbreviations learnt per edition").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.scrape.dump import iter_dump
from biaskit.scrape.sentences import LANG_ABBREVIATIONS, learn_abbreviations

#: how much of a dump's prose the learner reads (characters, pages): about a second of cleaning per 1,000 pages
SAMPLE_CHARS = 1_000_000
SAMPLE_PAGES = 1000
MAX_LETTERS = 8
#: evidence a learnt word needs: written with its dot this often in the sample, never ending a paragraph
MIN_COUNT = 3
#: a short lower-case word (at most this many letters) written with its dot in at least DOT_SHARE of its uses is an
#: abbreviation even where Punkt did not propose it
SHORT_LETTERS = 5
DOT_SHARE = 0.9
_TOKEN = re.compile(r"(?<![\w.])([^\W\d_]+(?:\.[^\W\d_]+)*)(\.?)(?=\s|$|[,;:)\]»”])")


def has_list(language: str) -> bool:
    """Whether the ``wiki`` splitter has an abbreviation list of its own for ``language``."""
    base = (language or "en").split("-")[0].lower()
    return base == "en" or base in LANG_ABBREVIATIONS


def needs_learning(language: str, splitter: str) -> bool:
    return splitter == "wiki" and not has_list(language)


@dataclass(frozen=True)
class Learned:
    words: frozenset[str]
    pages: int
    chars: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": "punkt: NLTK's unsupervised Punkt trainer (Kiss & Strunk 2006) on the dump's own text",
            "pages_sampled": self.pages,
            "chars_sampled": self.chars,
            "count": len({w.lower() for w in self.words}),
            "words": sorted({w.lower() for w in self.words}),
        }


def keep(word: str) -> bool:
    """A learnt type worth keeping: letters (and inner dots), at most :data:`MAX_LETTERS` letters, not a roman numeral."""
    letters = word.replace(".", "")
    return bool(letters) and letters.isalpha() and len(letters) <= MAX_LETTERS and not set(letters.lower()) <= set("ivxlcdm")


@dataclass
class Evidence:
    """What the sample shows about each word (lower-cased): uses with a dot, without, at a paragraph's end, and
    the dotted uses written with a capital."""

    dotted: Counter
    bare: Counter
    para_end: Counter
    capital: Counter

    def supports(self, word: str) -> bool:
        """Seen with its dot at least MIN_COUNT times, never ending a paragraph, and not a capitalised-only name."""
        w = word.lower()
        if self.dotted[w] < MIN_COUNT or self.para_end[w]:
            return False
        return len(w.replace(".", "")) <= 3 or self.capital[w] < self.dotted[w]

    def short_words(self) -> set[str]:
        """Short lower-case words that nearly always carry a dot (``ім``, ``проф``), with the evidence above."""
        return {
            w
            for w, n in self.dotted.items()
            if len(w.replace(".", "")) <= SHORT_LETTERS and self.capital[w] == 0 and n >= DOT_SHARE * (n + self.bare[w]) and self.supports(w)
        }


def evidence(paragraphs: Iterable[str]) -> Evidence:
    """Count each word's uses in ``paragraphs``: with a final dot, without, as a paragraph's last word."""
    dotted: Counter = Counter()
    bare: Counter = Counter()
    para_end: Counter = Counter()
    capital: Counter = Counter()
    for p in paragraphs:
        last = None
        for m in _TOKEN.finditer(p):
            w = m.group(1).lower()
            if m.group(2):
                dotted[w] += 1
                capital[w] += m.group(1)[0].isupper()
                last = (w, m.end())
            else:
                bare[w] += 1
        if last is not None and last[1] >= len(p.rstrip(" \"'”’»)]")):
            para_end[last[0]] += 1
    return Evidence(dotted, bare, para_end, capital)


def learn_from_paragraphs(paragraphs: Iterable[str], language: str) -> frozenset[str]:
    """The abbreviations of ``paragraphs`` (each kept word lower-case and capitalised): Punkt's, where the sample
    supports them, and the short lower-case words that nearly always carry a dot (see the module doc)."""
    paras = list(paragraphs)
    ev = evidence(paras)
    punkt = {w.lower() for w in learn_abbreviations(paras, language) if keep(w) and ev.supports(w)}
    words = punkt | {w for w in ev.short_words() if keep(w)}
    return frozenset(v for w in words for v in (w, w[:1].upper() + w[1:]))


def learn_from_pages(
    pages: Iterable[Any],
    language: str,
    site: Any = None,
    *,
    clean: Callable[..., list[str]],
) -> Learned:
    """Clean the first pages (``Page`` objects with ``text`` and ``title``; at most :data:`SAMPLE_PAGES` pages and
    :data:`SAMPLE_CHARS` characters of prose) with ``clean`` (the scrape's ``clean_wikitext``) and learn from their prose."""
    max_chars, max_pages = SAMPLE_CHARS, SAMPLE_PAGES

    paragraphs: list[str] = []
    chars = n = 0
    it = iter(pages)
    while n < max_pages and chars < max_chars:
        try:
            page = next(it)
        except StopIteration:
            break
        except BiaskitError:  # a cut or broken dump: the scrape itself reports it; learn from what was read
            break
        n += 1
        try:
            paras = clean(page.text, title=page.title, site=site)
        except BiaskitError:  # an unparseable page: the scrape names it later; the sample goes on
            continue
        paragraphs.extend(paras)
        chars += sum(len(p) for p in paras)
    return Learned(learn_from_paragraphs(paragraphs, language) if paragraphs else frozenset(), n, chars)


def learn_from_dump(dump: str | Path, language: str, site: Any, *, clean: Callable[..., list[str]]) -> Learned:
    """What ``scrape dump`` learns from a dump's first pages (:func:`learn_from_pages`); ``site``: the dump's
    :class:`~biaskit.scrape.siteinfo.SiteNames`. The library's ``load_splitter(learn_from=dump)`` calls it too."""
    return learn_from_pages(iter_dump(dump), language, site, clean=clean)
