"""Morphology for the West Slavic sentence sheet: who is the subject, which social category, which number.

The subject lists (:mod:`biaskit.templates.westslavic`) name phrases; the sheet's sentences use many more
nouns (jobs, kinship terms) in every case form. Instead of longer phrase lists, a sentence is read with the
language's morphology:

1. **Lemmas.** Every word is lemmatised with simplemma (cs, pl, sk dictionaries): ``dzieckiem`` -> ``dziecko``,
   ``człowieku`` -> ``człowiek``, ``Studenti`` -> ``student``. A short lexicon of person lemmas (kinship terms and
   general person nouns, with their social category) is matched on the lemma, anywhere in the sentence.
2. **Job nouns by derivation.** A noun in subject position (the sentence's first word, or the first word after
   determiners, possessives or a title: ``Náš manažer``, ``Paní učitelka``, ``Nauczyciel``) whose lemma ends in an
   agent-noun suffix (cs/sk ``-tel -ař -ista -ér -er -or -ent -ník -ec -log``, pl ``-arz -acz -ciel -ista -er -or
   -ent -nik -ec -log``, see :data:`_AGENT`) is a person noun; its **grammatical gender** gives the category: a
   feminine agent lemma (cs ``-kyně -yně -nice -ová``, pl ``-ini -yni -owa``, sk ``-kyňa -yňa -nica -ová``, or
   ``-ka`` after an agent stem: ``učitel-ka``, not ``kočka``), or a feminine form of a lemma simplemma gives as
   masculine (``kadeřnice`` -> ``kadeřník``), is ``female``, otherwise ``male``. A title decides too
   (``paní``/``pani`` female, ``pan``/``pán`` male).
3. **osoba.** ``osoba``/``osoby``... is grammatically feminine but names a person of any gender: with an
   adjective ``nebinární``/``niebinarna``/``nebinárna`` (any form) it is ``non-binary``; otherwise neutral and
   non-binary cannot be told apart from the sentence and the category stays null with reason ``osoba_ambiguous``.
4. **Number** of the head noun: irregular plurals (``děti``, ``lidé``, ``dzieci``, ``ludzie``, ``dziewczęta``,
   ``deti``, ``ľudia``, ``dievčatá``) are plural; an agreeing determiner with one number decides (``ty muže``: plural,
   ``té ženy``: singular); a form equal to its lemma is singular; unambiguous case endings decide (cs ``-ové -ů -ům
   -ách -ám -ami``: plural, ``-ovi -em -ou``: singular; pl ``-owie -ów -om -ami -ach``: plural, ``-owi -em -ą -ę``:
   singular); the endings that are singular in one case and plural in another (cs feminine ``-y`` genitive
   singular / nominative plural, masculine ``-i`` dative-locative singular / nominative plural, soft masculine
   ``-e`` genitive-accusative singular / accusative plural; pl and sk likewise) are decided by the preposition
   before the noun (a genitive, dative or locative preposition: singular) or by subject position (the first
   words of the sentence, nominative: plural). What stays undecided is null (reason ``number_ambiguous``).

Every result names the rule that decided it (``rule``), and the import writes it to the table.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache

from biaskit.errors import require
from biaskit.templates.mask import MASK
from biaskit.templates.westslavic_rules import collective_number, group_noun

#: person lemmas (casefolded simplemma output) -> social category; "?" = cannot be told (osoba)
PERSON: dict[str, dict[str, str]] = {
    "cs": {
        **dict.fromkeys(
            (
                "syn",
                "bratr",
                "otec",
                "táta",
                "tatínek",
                "manžel",
                "přítel",
                "strýc",
                "strejda",
                "děda",
                "dědeček",
                "muž",
                "chlapec",
                "kluk",
                "pán",
                "vnuk",
                "synovec",
                "bratranec",
                "tchán",
                "švagr",
                "hoch",
                "mladík",
                "chlap",
                "žák",
                "on",
                "oni",
                "pan",
            ),
            "male",
        ),
        **dict.fromkeys(
            (
                "dcera",
                "sestra",
                "matka",
                "máma",
                "maminka",
                "manželka",
                "žena",
                "přítelkyně",
                "teta",
                "babička",
                "dívka",
                "holka",
                "holčička",
                "paní",
                "slečna",
                "vnučka",
                "neteř",
                "sestřenice",
                "tchyně",
                "švagrová",
                "žákyně",
                "ona",
                "ony",
            ),
            "female",
        ),
        **dict.fromkeys(("dítě", "děti", "člověk", "lidé", "lid", "rodič", "rodiče", "sourozenec", "sourozenci"), "neutral"),
        "osoba": "?",
    },
    "pl": {
        **dict.fromkeys(
            (
                "syn",
                "brat",
                "ojciec",
                "tata",
                "tato",
                "mąż",
                "przyjaciel",
                "chłopak",
                "wujek",
                "dziadek",
                "mężczyzna",
                "chłopiec",
                "pan",
                "wnuk",
                "on",
                "oni",
                "bratanek",
                "siostrzeniec",
                "uczeń",
            ),
            "male",
        ),
        **dict.fromkeys(
            (
                "córka",
                "siostra",
                "matka",
                "mama",
                "żona",
                "przyjaciółka",
                "ciocia",
                "ciotka",
                "babcia",
                "kobieta",
                "dziewczyna",
                "dziewczynka",
                "dziewczę",
                "pani",
                "wnuczka",
                "uczennica",
                "ona",
                "one",
            ),
            "female",
        ),
        **dict.fromkeys(("dziecko", "dzieci", "człowiek", "ludzie", "rodzic", "rodzice", "rodzeństwo"), "neutral"),
        "osoba": "?",
    },
    "sk": {
        **dict.fromkeys(
            (
                "syn",
                "brat",
                "otec",
                "ocko",
                "manžel",
                "priateľ",
                "strýko",
                "dedko",
                "dedo",
                "muž",
                "chlapec",
                "pán",
                "vnuk",
                "on",
                "oni",
                "chalan",
                "žiak",
            ),
            "male",
        ),
        **dict.fromkeys(
            (
                "dcéra",
                "sestra",
                "matka",
                "mama",
                "mamička",
                "manželka",
                "žena",
                "priateľka",
                "teta",
                "babka",
                "babička",
                "dievča",
                "dievčina",
                "dievčatá",
                "pani",
                "slečna",
                "vnučka",
                "žiačka",
                "ona",
                "ony",
            ),
            "female",
        ),
        **dict.fromkeys(("dieťa", "deti", "človek", "ľudia", "rodič", "rodičia", "súrodenec"), "neutral"),
        "osoba": "?",
    },
}

#: irregular plural forms (casefolded) whose lemma is singular or suppletive: always plural
PLURAL_FORMS: dict[str, frozenset[str]] = {
    "cs": frozenset("děti dětí dětem dětmi lidé lidi lidí lidem lidmi rodiče rodičů rodičům".split()),
    "pl": frozenset(
        "dzieci dzieciom dziećmi dzieciach ludzie ludzi ludźmi ludziom ludziach dziewczęta dziewcząt dziewczętom rodzice rodziców rodzicom".split()
    ),
    "sk": frozenset("deti detí deťom deťmi ľudia ľudí ľuďom ľuďmi dievčatá dievčat rodičia rodičov rodičom".split()),
}
SINGULAR_FORMS: dict[str, frozenset[str]] = {
    "cs": frozenset("dítě dítěte dítěti dítětem člověk člověka člověku člověkem".split()),
    "pl": frozenset("dziecko dziecka dziecku dzieckiem człowiek człowieka człowiekowi człowiekiem człowieku".split()),
    "sk": frozenset("dieťa dieťaťa dieťaťu dieťaťom človek človeka človeku človekom".split()),
}

#: words that may stand before the head noun of the subject: determiners, possessives, numerals-free titles.
#: value: (number the word forces or None, category a title forces or None)
_DET_SG = {
    "cs": "můj mého mému mém mým mou moji tvůj tvého tvému náš našeho našemu našem naším naše naší vaše váš ten toho tomu tom "
    "tím ta té tu tou tento tohoto tomuto této touto tato svého svému svém svou".split(),
    "pl": "mój mojego mojemu moim mojej moją moja nasz naszego naszemu naszym naszej naszą nasza ten tego temu tym ta tej tę tą "
    "tamten tamta swojego swojej swoją".split(),
    "sk": "môj môjho môjmu mojom mojím moja mojej moju mojou náš nášho nášmu našom naším naša našej našu našou ten toho tomu "
    "tom tým tá tej tú tou tento táto".split(),
}
_DET_PL = {
    "cs": "mí mých mými moji naši našich našim našimi ti ty těch těm těmi tito tyto těchto těmto".split(),
    "pl": "moi moich moimi nasi naszych naszymi ci te tych tymi tamci".split(),
    "sk": "moji mojich mojimi naši našich našimi tí tie tých tými títo tieto".split(),
}
#: words of both numbers (possessors, ambiguous determiners): allowed before the head, decide nothing
_DET_ANY = {
    "cs": "jeho její jejich moje mé má tvoje tvé vaše naše své svoje svých to".split(),
    "pl": "jego jej ich moje moim mojej twoje nasze wasze swoje to".split(),
    "sk": "jeho jej ich moje moji naše vaše svoje to".split(),
}
_TITLES = {
    "cs": {"paní": "female", "pan": "male", "slečna": "female"},
    "pl": {"pani": "female", "pan": "male"},
    "sk": {"pani": "female", "pán": "male", "slečna": "female"},
}
#: prepositions that govern a case in which the ambiguous endings are singular (genitive, dative, locative)
_OBLIQUE_PREPS = {
    "cs": "od do z ze u bez kolem podle místo během vedle okolo kvůli díky proti naproti k ke o po při".split(),
    "pl": "od do z ze u bez obok podczas według dla koło wokół przy o po".split(),
    "sk": "od do z zo u bez okolo podľa namiesto počas vedľa kvôli vďaka proti k ku o po pri".split(),
}
#: how the non-binary adjective starts (nebinární, niebinarna, nebinárna, in any form)
NONBINARY = ("nebinár", "niebinar", "nebinar")

#: agent-noun suffixes of lemmas (job nouns); feminine agent suffixes of lemmas, and of word forms
_AGENT = {
    "cs": ("tel", "ař", "ář", "ač", "áč", "ista", "ér", "ýr", "žer", "or", "ent", "ník", "ec", "log", "ant", "ik"),
    "pl": ("arz", "acz", "ciel", "ista", "er", "or", "ent", "nik", "ec", "log", "ant", "ik"),
    "sk": ("teľ", "ár", "áč", "ač", "ista", "ér", "žér", "or", "ent", "ník", "ec", "log", "ant", "ik"),
}
#: feminine agent nouns: these endings on the lemma; ``-ka`` only after an agent stem (učitel-ka, prodavač-ka,
#: student-ka, hereč-ka; not kočka)
_FEM_LEMMA = {"cs": ("kyně", "yně", "nice", "ová"), "pl": ("ini", "yni", "owa"), "sk": ("kyňa", "yňa", "nica", "ová")}
_KA_STEMS = (
    "tel",
    "teľ",
    "ciel",
    "ař",
    "ář",
    "ár",
    "ar",
    "arz",
    "ač",
    "áč",
    "acz",
    "ist",
    "ér",
    "ýr",
    "žer",
    "er",
    "or",
    "ent",
    "eč",
    "ik",
    "ant",
    "nic",
)
#: copulas and common verbs right after a nominative subject: their number is the subject's
_VERB_SG = {
    "cs": set("je byl byla bylo bude má měl měla chce umí pracuje".split()),
    "pl": set("jest był była było będzie ma miał miała chce umie pracuje".split()),
    "sk": set("je bol bola bolo bude má mal mala chce vie pracuje".split()),
}
_VERB_PL = {
    "cs": set("jsou byli byly budou mají měli měly chtějí umějí umí pracují".split()) - {"umí"},
    "pl": set("są byli były będą mają mieli miały chcą umieją pracują".split()),
    "sk": set("sú boli budú majú mali chcú vedia pracujú".split()),
}
_CLITICS = {"se", "si", "sa", "się", "by", "bych"}
_FEM_FORM = {
    "cs": ("ky", "ce", "ku", "kou", "kám", "kách", "kami", "yni", "yní", "nici", "nicí", "nic"),
    "pl": ("ki", "ce", "kę", "ką", "kom", "kami", "kach"),
    "sk": ("ky", "ke", "ku", "kou", "kám", "kách", "kami", "yne", "yňu", "nice", "nicu"),
}

#: noun endings per language and lemma class (fa: lemma in -a; m: lemma in a consonant): sg, pl or "amb" (singular
#: in a genitive/dative/locative, plural in the nominative); checked longest first
_ENDINGS = {
    "cs": {
        "fa": {"y": "amb", "e": "sg", "ě": "sg", "u": "sg", "ou": "sg", "ám": "pl", "ách": "pl", "ami": "pl"},
        "m": {
            "a": "sg",
            "ovi": "sg",
            "u": "sg",
            "em": "sg",
            "i": "amb",
            "e": "amb",
            "ě": "amb",
            "ové": "pl",
            "é": "pl",
            "ů": "pl",
            "ům": "pl",
            "ech": "pl",
            "ích": "pl",
            "y": "pl",
        },
    },
    "pl": {
        "fa": {"y": "amb", "i": "amb", "ę": "sg", "ą": "sg", "e": "sg", "om": "pl", "ami": "pl", "ach": "pl"},
        "m": {
            "a": "sg",
            "owi": "sg",
            "em": "sg",
            "iem": "sg",
            "u": "sg",
            "e": "soft",
            "ie": "sg",
            "i": "pl",
            "y": "pl",
            "owie": "pl",
            "ów": "pl",
            "om": "pl",
            "ami": "pl",
            "ach": "pl",
        },
    },
    "sk": {
        "fa": {"y": "amb", "e": "sg", "u": "sg", "ou": "sg", "ám": "pl", "ách": "pl", "ami": "pl"},
        "m": {"a": "sg", "ovi": "sg", "om": "amb", "i": "pl", "ia": "pl", "ovia": "pl", "ov": "pl", "och": "pl", "ami": "pl"},
    },
}
_SOFT = ("l", "rz", "cz", "sz", "ż", "j", "ń", "ś", "ć", "ź", "dz", "c")

WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


@dataclass(frozen=True)
class Reading:
    """The subject found in a sentence: where, which words, and what morphology says about it."""

    start: int  # character offset of the subject phrase (determiner included)
    term: str  # the phrase as written
    lemma: str  # the head noun's lemma
    category: str | None  # male, female, neutral, non-binary, or None
    number: str | None  # sg, pl or None
    rule: str  # how the category was decided (lemma, agent_suffix, title, osoba_nonbinary, ...)
    number_rule: str  # how the number was decided
    reason: str | None = None  # why category (or number) is null


@cache
def _simplemma():
    return require("simplemma", "templates", "morphology of West Slavic sentences")


@lru_cache(maxsize=65536)
def lemma(word: str, lang: str) -> str:
    w = unicodedata.normalize("NFC", word).casefold()
    try:
        return unicodedata.normalize("NFC", _simplemma().lemmatize(w, lang=lang)).casefold()
    except Exception:  # pragma: no cover - simplemma raises for an unknown language only
        return w


def _agent_gender(form: str, lem: str, lang: str) -> str | None:
    """female/male when (form, lemma) is an agent noun (job), else None."""
    if len(lem) >= 5 and (lem.endswith(_FEM_LEMMA[lang]) or (lem.endswith("ka") and lem[:-2].endswith(_KA_STEMS))):
        return "female"
    if lem.endswith(_AGENT[lang]) and len(lem) >= 5:
        # simplemma may lemmatise a feminine form to the masculine (kadeřnice -> kadeřník): the form decides
        return "female" if form.endswith(_FEM_FORM[lang]) and not lem.endswith("ec") else "male"
    return None


def _det_number(word: str, lang: str) -> str | None:
    if word in _DET_SG[lang] and word not in _DET_PL[lang]:
        return "sg"
    if word in _DET_PL[lang] and word not in _DET_SG[lang]:
        return "pl"
    return None


def _is_det(word: str, lang: str) -> bool:
    return word in _DET_SG[lang] or word in _DET_PL[lang] or word in _DET_ANY[lang] or word in _TITLES[lang]


def number_of(
    form: str, lem: str, lang: str, dets: list[str], prep: str | None, initial: bool, after: list[str] | None = None
) -> tuple[str | None, str]:
    """(sg / pl / None, the rule that decided) for the head noun ``form``: ``dets`` the determiners before it,
    ``prep`` the word before those, ``initial`` whether the phrase starts the sentence (nominative position),
    ``after`` the words after the noun (a verb agreeing with a nominative subject decides)."""
    f = form.casefold()
    if f in PLURAL_FORMS[lang]:
        return "pl", "irregular_plural"
    if f in SINGULAR_FORMS[lang]:
        return "sg", "irregular_singular"
    for w in reversed(dets):
        n = _det_number(w, lang)
        if n:
            return n, f"determiner:{w}"
    if initial and prep is None and after:
        v = next((w for w in after[:3] if w not in _CLITICS), None)
        if v in _VERB_SG[lang]:
            return "sg", f"verb:{v}"
        if v in _VERB_PL[lang]:
            return "pl", f"verb:{v}"
    if f == lem:
        return "sg", "lemma_form"
    cls = "fa" if lem.endswith("a") else "m" if not lem.endswith(("e", "ě", "o", "í", "é", "á", "y", "i")) else None
    if cls is None:
        return None, "number_ambiguous"
    end = next((e for e in sorted(_ENDINGS[lang][cls], key=len, reverse=True) if f.endswith(e)), None)
    if end is None and cls == "fa" and not f.endswith(tuple("aáeéěiíoóuúůyýąę")):
        return "pl", "ending:zero"  # no ending: genitive plural (žen, dívek, kobiet)
    if end is None:
        return None, "number_ambiguous"
    val = _ENDINGS[lang][cls][end]
    if val == "soft":  # pl: nauczyciele, lekarze (nominative plural) / bracie (locative singular)
        val = "pl" if lem.endswith(_SOFT) else "sg"
    if val == "amb" and lang == "cs" and cls == "m" and end == "i" and len(_common_prefix(f, lem)) < len(lem):
        val = "pl"  # a stem change before -i (kluk -> kluci, bratr -> bratři) is nominative plural only
    if val in ("sg", "pl"):
        return val, f"ending:-{end}"
    if prep is not None and prep in _OBLIQUE_PREPS[lang]:
        return "sg", f"oblique_preposition:{prep}"
    if initial and prep is None:
        return "pl", "nominative_subject"
    return None, "number_ambiguous"


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


def read_subject(text: str, lang: str) -> Reading | None:
    """The earliest person noun of ``text`` (lemma lexicon anywhere; a job noun by derivation in subject
    position) with its category and number, or None when the sentence names no person."""
    words = [(m.start(), m.group(0)) for m in WORD.finditer(text.replace(MASK, " " * len(MASK)))]
    low = [w.casefold() for _, w in words]
    for i, (pos, w) in enumerate(words):
        f = low[i]
        if _is_det(f, lang) and not (f in _TITLES[lang] and not _noun_follows(low, i, lang)):
            continue  # possessives (jeho, jego: lemma "on"), determiners and a title before its noun are not the head
        lem = lemma(w, lang)
        k = i
        while k > 0 and _is_det(low[k - 1], lang):
            k -= 1
        initial = k == 0  # only determiners/titles before it: subject position
        cat = PERSON[lang].get(lem) or PERSON[lang].get(f)
        rule = "lemma"
        if cat is None and (f in PLURAL_FORMS[lang] or f in SINGULAR_FORMS[lang]):
            cat, rule = "neutral", "lemma"
        if cat is None and (initial or (i > 0 and _is_det(low[i - 1], lang))) and f not in _TITLES[lang] and not _is_det(f, lang):
            cat = _agent_gender(f, lem, lang)
            rule = "agent_suffix"
        if cat is None:
            grp = group_noun(low, i, lang)
            if grp is None:
                continue
            cat, rule, lem = grp
        title = next((_TITLES[lang][x] for x in low[k:i] if x in _TITLES[lang]), None)
        if title and cat in ("male", "female") and rule == "agent_suffix":
            cat, rule = title, "title"
        start = words[k][0]
        term = text[start : pos + len(w)]
        num, nrule = collective_number(rule) or number_of(w, lem, lang, low[k:i], low[k - 1] if k > 0 else None, initial, low[i + 1 :])
        if cat == "?":
            near = low[max(0, i - 2) : i + 3]
            if any(x.startswith(NONBINARY) for x in near):
                return Reading(
                    min(start, words[max(0, i - 2)][0]) if any(x.startswith(NONBINARY) for x in low[max(0, i - 2) : i]) else start,
                    _phrase(text, words, low, i),
                    lem,
                    "non-binary",
                    num,
                    "osoba_nonbinary",
                    nrule,
                )
            return Reading(
                start, term, lem, None, num, "osoba", nrule, reason="osoba_ambiguous: 'osoba' with no adjective telling neutral from non-binary"
            )
        return Reading(start, term, lem, cat, num, rule, nrule, None if num else "number_ambiguous")
    return None


def _noun_follows(low: list[str], i: int, lang: str) -> bool:
    """Whether the word after position i is a person noun (then a title at i belongs to it: Paní učitelka)."""
    if i + 1 >= len(low):
        return False
    nxt = low[i + 1]
    lem = lemma(nxt, lang)
    return lem in PERSON[lang] or _agent_gender(nxt, lem, lang) is not None


def _phrase(text: str, words, low, i: int) -> str:
    """'nebinární osoba' / 'osoba niebinarna': the noun with its adjacent non-binary adjective."""
    a, b = i, i
    if i > 0 and low[i - 1].startswith(NONBINARY):
        a = i - 1
    if i + 1 < len(low) and low[i + 1].startswith(NONBINARY):
        b = i + 1
    return text[words[a][0] : words[b][0] + len(words[b][1])]
