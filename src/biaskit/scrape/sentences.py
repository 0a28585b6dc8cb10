"""A rule-based sentence splitter that knows Wikipedia prose (the default ``splitter: wiki``).

A sentence ends at ``.``, ``!``, ``?`` or ``…`` (plus closing quotes and brackets) followed by a space and a
capital letter, an opening quote or bracket before a capital, never before a lower-case letter or ``[``. Before a
digit it ends at ``.``, ``!`` or ``?`` (``until 1945. 1946 was quiet``), unless the dot belongs to an abbreviation
(the lists below, :data:`NUMBER_ABBREVIATIONS` such as ``world no. 1``, a single letter, dotted letters ``Π.Δ.``),
to an ordinal or a day or month of an edition that dots them (:data:`DOTTED_ORDINALS`: ``8. 5. 1945``) or to a
short date (``12.03. 2020``). It does not end after

* abbreviations that are followed by a name or a number: ``et al.``, ``ca.``, ``c.``, ``approx.``, ``No.``,
  ``Mr.``, ``Dr.``, ``St.``, ``Gen.``, ``vol.``, ``pp.``, month abbreviations, ...;
* initials: a single capital letter (``J. R. R. Tolkien``, ``George W. Bush``), unless a usual sentence opening
  follows (``set in A. After ...``);
* dotted abbreviations that can also end a sentence (``U.S.``, ``B.C.``, ``a.m.``, ``etc.``, ``Inc.``, ``Jr.``)
  unless the next word is a usual sentence opening (``The``, ``In``, ``He``, ...).

Other scripts (``WikiSplitter(language)``, ``split_text(text, language)``): ``。！？`` (Chinese, Japanese) end a
sentence before any character, spaces or not (after a closing quote only before a space: ``「本当に？」と彼は言った``); ``।``/``॥`` (Bengali, Hindi danda; also a ``|`` typed for it after an Indic letter), Armenian ``։`` and the Arabic
``؟`` before a space (these scripts have no capitals); in Greek ``;`` is the question mark (before a space and a
capital). Each language with a list in :data:`LANG_ABBREVIATIONS` adds its abbreviations (Greek ``π.χ.``, ``κ.ά.``,
``Αγ.``; Vietnamese ``TP.``, ``GS.``, ...) and sentence openings; others use the English lists, which only matter
before a capital letter, plus the abbreviations a dump scrape learns from the edition's own text
(:mod:`biaskit.scrape.abbrev`); in a language without a list, a single lower-case letter of any script but Latin
before the dot (Ukrainian ``м.``, ``с.``) is an abbreviation, never a sentence end.

Pure Python and regular expressions: no model to load, about a hundred times faster than spaCy's senter.
The gold set in ``tests/fixtures/wiki/sentence_boundaries.jsonl`` measures it against the other splitters
(``bench/scrape_bench.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from biaskit.errors import require

#: never a sentence end when followed by a capital (the abbreviation introduces what follows)
ABBREVIATIONS = frozenset(
    """
al ca c approx No Nos Brig Mr Mrs Ms Messrs Dr Drs Prof St Ste Mt Ft Gen Col Lt Capt Cmdr Sgt Maj Adm Gov Sen Rep Rev Hon Pres Fr Br
Sra Mme Mlle Msgr vs v Vol vol Vols vols pp p Ed ed eds Eds trans ch Ch chap sec Sec fig Fig figs Figs op cit ibid Ibid cf Cf
viz fl b d r Jan Feb Apr Jun Jul Aug Sep Sept Oct Nov Dec Ave Blvd Rd Hwy Dept Univ Assn Jos Chas Wm Geo Thos Jas Benj Robt
Saml Pt Cpl Pvt Insp Supt Atty Calif Mich Conn Tenn Tex Okla Minn Fla Ariz Colo
""".split()
)
#: abbreviations that often end a sentence too: a boundary only before a usual sentence opening
AMBIGUOUS = frozenset("etc Inc Ltd Co Corp Jr Sr Esq Bros LLC Ph.D PhD I".split())
#: words that usually open a sentence (after an ambiguous abbreviation)
OPENERS = frozenset(
    """
The A An In It He She They This These That Those There His Her Its Their On At By For From As After Before During When While
Although However But Since Today Some Many Most One We I Other Both Such Several Later Following Despite According Under With
Also Each Over Between Through Because If Another Upon Unlike Like Although Then Thus Hence Meanwhile Nevertheless In Among
What Who Where Why How Our You My No Not All Two Three Four Five Its
""".split()
)

#: per language: (abbreviations before a name/number, ambiguous abbreviations, usual sentence openings)
LANG_ABBREVIATIONS: dict[str, tuple[frozenset, frozenset, frozenset]] = {
    "el": (
        frozenset(
            """π.χ κ.λπ κλπ δηλ κ.ά κ.α Αγ αγ Αγ.Γ κ κα κος Δρ δρ Καθ καθ σελ σ βλ πβ χλμ εκ τ.χ τ.μ περ Στ Ν Αρ αρ
                     μ.μ π.μ Ιαν Φεβ Απρ Αυγ Σεπτ Οκτ Νοεμ Δεκ τ αι λ.χ π.Χ μ.Χ αρχ τουρκ λατ αγγλ γαλλ γερμ ιταλ ισπ ρωσ
                     αραβ αρχ.ελλ""".split()
        ),
        frozenset("κλπ κ.λπ κ.ά κ.α π.Χ μ.Χ αι κ.ο.κ κ.τ.λ".split()),
        frozenset(
            """Ο Η Το Οι Τα Τον Την Τη Των Στο Στη Στην Στον Στα Στις Στους Σε Με Από Για Κατά Μετά Μέχρι Ως Όταν Ενώ Αυτό Αυτή
                     Αυτός Αυτά Ένα Μια Μία Ένας Εκεί Επίσης Ωστόσο Όμως Έτσι Σήμερα Το Εκτός Παρά Πριν Λόγω Ήταν Είναι Έχει Υπάρχουν""".split()
        ),
    ),
    "vi": (
        frozenset("TP Tp tp TS ThS GS PGS TT Q P Th BS KS NXB Nxb St Mr Dr Sv".split()),
        frozenset("v.v vv".split()),
        frozenset(
            """Năm Ông Bà Trong Các Những Đây Sau Theo Tuy Vào Khi Đến Từ Nhưng Là Hiện Tại Người Việc Nó Họ Một Ngày Đó Này
                     Cũng Ngoài Với Do Vì Thành Tháng Hai Ba Bốn Có Không Phần Nhiều Hầu Đồng Lúc Trước Cuối Đầu""".split()
        ),
    ),
}

#: abbreviations that stand before a number but may end a sentence before a word (``world no. 1``, ``Nr. 307``,
#: ``Op. 27``, ``pop. 5,000``, law reports ``F. 3d. 475 (7th Cir. 2007)``, Greek ``αριθμ. 746``): never a sentence end before a digit; per language in
#: :data:`LANG_NUMBER_ABBREVIATIONS` (lower-case: matched on the lower-cased word)
NUMBER_ABBREVIATIONS = frozenset("no nos nr art arts sect sects para paras op opp est pop tab ref refs ver cir 2d 3d".split())
LANG_NUMBER_ABBREVIATIONS: dict[str, frozenset] = {
    "el": frozenset("αριθμ αριθ αρ περ εκτ σελ σ τχ τόμ κεφ παρ άρθρ βασιλ ιαν φεβ μαρ απρ ιουν ιουλ αυγ σεπ σεπτ οκτ νοε νοεμ δεκ".split()),
    "vi": frozenset("tr".split()),
}
#: editions that write ordinals and dates with a dot after the number (cs ``8. 5. 1945``, de ``am 3. 10. 1990``):
#: there a number of one or two digits before the dot is an ordinal or a day or month, never a sentence end before
#: a digit; elsewhere a number ends a sentence before another (``until 1945. 1946 was quiet``)
DOTTED_ORDINALS = frozenset("cs sk pl de da no nb nn is fi et lv lt sl hr sr bs hu tr fo".split())

_CAND = re.compile(r"""([.!?…]+)(["'”’»)\]]*)(\s+)(?=["'“‘«(]?[^\W\d_a-z]|\d)""")
_WORD_BEFORE = re.compile(r"([\w.'’-]*)$")
_DOTTED = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")  # U.S, B.C, a.m, i.e (the final dot is the candidate)
_NEXT_WORD = re.compile(r"""["'“‘«(]?([\w'’-]+)""")
_DAY_MONTH = re.compile(r"^\d{1,2}(?:\.\d{1,2})?$")  # 8 (8. 5. 1945), 8.5 (8.5. 1945)
_DOTTED_ANY = re.compile(r"^(?:[^\W\d_]\.)+[^\W\d_]$")  # U.S, Π.Δ, Φ.Ε.Κ: letters with inner dots, any script
_SHORT_DATE = re.compile(r"^\d{1,2}\.\d{1,2}$")  # 12.03 (12.03. 2020): a date in any edition


#: sentence ends that need no space and no capital after them (CJK full-width marks)
_CJK_END = re.compile(r"""([。！？]+)([」』”’）)\]】〉》"']*)\s*(?=\S)""")
#: sentence ends of scripts without capitals (danda, double danda, Armenian full stop, Arabic question mark)
_UNCASED_END = re.compile(r"""([।॥։؟۔]+)(["'”’»)\]]*)(\s+)(?=\S)""")
#: a ``|`` typed for the danda: right after a letter of an Indic script (Devanagari to Sinhala), before a space
_PIPE_DANDA = re.compile(r"""(?<=[\u0900-\u0DFF])( ?\|)(["'”’»)\]]*)(\s+)(?=\S)""")
#: the Greek question mark ``;`` (U+003B or U+037E) before a capital
_GREEK_Q = re.compile(r"""([;;])(["'”’»)\]]*)(\s+)(?=["'“‘«(]?[^\W\d_a-z])""")


@dataclass(frozen=True)
class _EndRules:
    """A language's rules for where a sentence ends: the words a dot never ends (``abbr``), the ones it ends only
    before a usual sentence opening (``ambiguous``, ``openers``), whether a single lower-case letter of a non-Latin
    script is an abbreviation (``letters``: a language without lists), the number abbreviations (``No.``, ``ca.``)
    and whether the edition dots ordinals, days and months (``ordinals``: ``8. 5. 1945``)."""

    abbr: frozenset = ABBREVIATIONS
    ambiguous: frozenset = AMBIGUOUS
    openers: frozenset = OPENERS
    letters: bool = False
    numbers: frozenset = NUMBER_ABBREVIATIONS
    ordinals: bool = False


def _digit_boundary(punct: str, word: str, rules: _EndRules) -> bool:
    """Whether a sentence ends at ``punct`` after ``word`` when the next word starts with a digit: a full stop (or
    ``!``/``?``) ends it, unless the dot belongs to an abbreviation (the language's lists, the learnt words, the
    number abbreviations, a single letter: ``No. 5``, ``ca. 1900``, ``Q. 1``, ``м. 5``), an ordinal or a day or
    month of an edition that dots them (``8. 5. 1945``), or a short date (``12.03. 2020``)."""
    if punct in ("!", "?", "!?", "?!"):
        return True
    if punct != ".":
        return False  # an ellipsis before a number goes on (1, 2, … 10)
    if not word:
        return True
    word = word.rsplit("-", 1)[-1] or word  # (c. 1230-c. 1314): the abbreviation after a range's dash
    abbr, ambiguous, numbers, ordinals = rules.abbr, rules.ambiguous, rules.numbers, rules.ordinals
    if word in abbr or word in ambiguous or word.lower() in numbers or _DOTTED_ANY.match(word) or word.lower() in ("e.g", "i.e"):
        return False
    if len(word) == 1 and word.isalpha():
        return False
    if _SHORT_DATE.match(word) or (ordinals and _DAY_MONTH.match(word)):
        return False
    return True


def _is_boundary(text: str, m: re.Match, rules: _EndRules) -> bool:
    punct = m.group(1)
    abbr, ambiguous, openers, letters = rules.abbr, rules.ambiguous, rules.openers, rules.letters
    nxt = _NEXT_WORD.match(text, m.end())
    next_word = nxt.group(1) if nxt else ""
    if not next_word or next_word[0].islower():
        return False
    wb = _WORD_BEFORE.search(text[max(0, m.start() - 40) : m.start()])
    word = (wb.group(1) if wb else "").lstrip("'’(-")
    if next_word[0].isdigit():
        return _digit_boundary(punct, word, rules)
    if punct != ".":
        return True  # ! ? … and runs like ".." or "?!"
    if not word:
        return True
    if len(word) == 1 and word.isalpha() and word.isupper() and word != "I":
        # an initial ("J. R. R. Tolkien", "George W. Bush"), unless a usual sentence opening follows a letter used
        # as a name ("the themes set in A. After recapitulating", "Concerto in F. Some did not")
        return len(next_word) > 1 and next_word in openers
    if letters and len(word) == 1 and word.islower() and not unicodedata.name(word, "LATIN").startswith("LATIN"):
        return False  # no list for the language: a single lower-case letter of a non-Latin script is an abbreviation (м. Київ)
    if word in ambiguous or (word not in abbr and (_DOTTED.match(word) or word.lower() in ("e.g", "i.e"))):
        if word.lower() in ("e.g", "i.e"):
            return False
        return next_word in openers
    if word in abbr:
        return False
    return True


def _lists(language: str) -> tuple[frozenset, frozenset, frozenset]:
    base = (language or "en").split("-")[0].lower()
    if base in LANG_ABBREVIATIONS:
        a, b, o = LANG_ABBREVIATIONS[base]
        return ABBREVIATIONS | a, AMBIGUOUS | b, OPENERS | o
    return ABBREVIATIONS, AMBIGUOUS, OPENERS


def split_text(text: str, language: str = "en", extra_abbreviations: frozenset = frozenset()) -> list[str]:
    """The sentences of one paragraph (already single-spaced by the cleaner), in order.

    ``extra_abbreviations``: more words that never end a sentence (e.g. learnt from the dump by
    :func:`learn_abbreviations`)."""
    abbr, ambiguous, openers = _lists(language)
    base = (language or "en").split("-")[0].lower()
    letters = base not in ("en", *LANG_ABBREVIATIONS)
    numbers = NUMBER_ABBREVIATIONS | LANG_NUMBER_ABBREVIATIONS.get(base, frozenset())
    if extra_abbreviations:
        abbr = abbr | extra_abbreviations
    rules = _EndRules(abbr, ambiguous, openers, letters, numbers, base in DOTTED_ORDINALS)
    cuts: list[tuple[int, int]] = []  # (end of the sentence, start of the next)
    for m in _CAND.finditer(text):
        if _is_boundary(text, m, rules):
            cuts.append((m.start(3), m.end()))
    if any(c in text for c in "。！？"):
        # after a closing quote the sentence goes on unless a space follows (「本当に？」と彼は言った。)
        cuts.extend((m.end(2), m.end()) for m in _CJK_END.finditer(text) if not m.group(2) or m.end() > m.end(2))
    if any(c in text for c in "।॥։؟۔"):
        cuts.extend((m.start(3), m.end()) for m in _UNCASED_END.finditer(text))
    if "|" in text:
        cuts.extend((m.start(3), m.end()) for m in _PIPE_DANDA.finditer(text))
    if (language or "").startswith("el") and (";" in text or ";" in text):
        cuts.extend((m.start(3), m.end()) for m in _GREEK_Q.finditer(text))
    out: list[str] = []
    start = 0
    for end, nxt in sorted(set(cuts)):
        if end < start:
            continue
        s = text[start:end].strip()
        if s:
            out.append(s)
        start = nxt
    s = text[start:].strip()
    if s:
        out.append(s)
    return out


def learn_abbreviations(texts: Iterable[str], language: str = "en") -> frozenset[str]:
    """Abbreviations learnt from raw text with NLTK's unsupervised Punkt trainer (Kiss & Strunk 2006), as
    words without their final dot (``"π.χ"``); add them to a splitter with ``WikiSplitter(extra_abbreviations=...)``.

    Needs ``nltk`` (the ``scrape`` extra); E010 when it is missing."""
    require("nltk", "scrape", "learning abbreviations")
    from nltk.tokenize.punkt import PunktTrainer

    trainer = PunktTrainer()
    trainer.INCLUDE_ALL_COLLOCS = False
    trainer.train("\n\n".join(texts), finalize=True)
    params = trainer.get_params()
    out = set()
    for a in params.abbrev_types:  # Punkt stores them lower-cased; keep both the seen and the capitalised form
        out.add(a)
        out.add(a[:1].upper() + a[1:])
    return frozenset(out)


def sentence_offsets(paragraph: str, sentences: list[str]) -> list[int]:
    """Where each sentence but the first starts in ``paragraph`` (the boundaries a splitter put)."""
    out: list[int] = []
    pos = 0
    for k, s in enumerate(sentences):
        s = s.strip()
        if not s:
            continue
        i = paragraph.find(s, pos)
        if i < 0:
            i = paragraph.find(s[:20], pos)
        if i < 0:
            continue
        if k:
            out.append(i)
        pos = i + max(1, len(s) - 5)
    return out


def boundary_scores(gold: list[dict], split) -> dict[str, float | int]:
    """Boundary precision, recall and F1 of ``split(paragraph) -> sentences`` against gold rows
    (``paragraph``, ``boundaries``: start offsets of every sentence but the first)."""
    tp = fp = fn = 0
    for row in gold:
        pred = set(sentence_offsets(row["paragraph"], list(split(row["paragraph"]))))
        ref = set(row["boundaries"])
        tp += len(pred & ref)
        fp += len(pred - ref)
        fn += len(ref - pred)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0, "tp": tp, "fp": fp, "fn": fn}


class _Sent:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Doc:
    __slots__ = ("sents",)

    def __init__(self, sents: list[_Sent]) -> None:
        self.sents = sents


class WikiSplitter:
    """The splitter behind ``splitter: wiki``; ``pipe`` mirrors spaCy's so :func:`split_sentences` takes either.

    ``language`` picks the abbreviation lists and the script rules (see the module doc)."""

    name = "wiki"
    pipe_names: list[str] = []

    def __init__(self, language: str = "en", extra_abbreviations: frozenset = frozenset()) -> None:
        self.language = language or "en"
        self.extra_abbreviations = frozenset(extra_abbreviations)
        self.learned: object = None  # what load_splitter(learn_from=...) learnt (an abbrev.Learned)

    def split(self, text: str) -> list[str]:
        return split_text(text, self.language, self.extra_abbreviations)

    def pipe(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[_Doc]:
        for t in texts:
            yield _Doc([_Sent(s) for s in self.split(t)])
