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
* **Kept.** Words of letters (and inner dots) up to 8 letters; numbers and roman numerals are left to the splitter's
  own rules. They are used exactly like the splitter's own list: never a sentence end before a capital.

The manifest records what was learnt (``abbreviations``: source, pages and characters sampled, the words). The
held-back measurement is in docs/scrape.md ("Abbreviations learnt per edition").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from biaskit.errors import BiaskitError
from biaskit.scrape.sentences import LANG_ABBREVIATIONS, learn_abbreviations

#: how much of a dump's prose the learner reads (characters, pages): about a second of cleaning per 1,000 pages
SAMPLE_CHARS = 1_000_000
SAMPLE_PAGES = 1000
MAX_LETTERS = 8


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


def learn_from_paragraphs(paragraphs: Iterable[str], language: str) -> frozenset[str]:
    """The abbreviations Punkt learns from ``paragraphs`` (each kept word lower-case and capitalised)."""
    return frozenset(w for w in learn_abbreviations(list(paragraphs), language) if keep(w))


def learn_from_pages(
    pages: Iterable[Any], language: str, site: Any = None, *, max_chars: int = SAMPLE_CHARS, max_pages: int = SAMPLE_PAGES
) -> Learned:
    """Clean the first pages (``Page`` objects with ``text`` and ``title``) and learn from their prose."""
    from biaskit.scrape.clean import clean_wikitext

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
            paras = clean_wikitext(page.text, title=page.title, site=site)
        except BiaskitError:  # an unparseable page: the scrape names it later; the sample goes on
            continue
        paragraphs.extend(paras)
        chars += sum(len(p) for p in paras)
    return Learned(learn_from_paragraphs(paragraphs, language) if paragraphs else frozenset(), n, chars)
