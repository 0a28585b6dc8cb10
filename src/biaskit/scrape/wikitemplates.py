"""Inline templates that carry prose, rendered as a reader of the page sees them.

:func:`render_template` returns the visible text of a template node (``{{convert|5|km}}`` ->
``5 kilometres (3.1 mi)``), ``""`` for templates that show nothing a sentence needs (citations, maintenance
tags, hatnotes, infoboxes, pronunciation guides inside parentheses), or :data:`DROPPED` for a template whose
text we cannot produce (an unknown template, a computed value such as ``{{inflation}}``). The mark travels
through sentence splitting; :func:`resolve_dropped` then removes a mark that cannot have broken its sentence
(at its start, after its final punctuation, alone in parentheses) and reports every other sentence as
``template_dropped``, so no sentence is kept with a hole where a value was.

``{{convert}}`` follows the display rules documented for Wikipedia's Template:Convert: the input as given
(with thousands separators) and the unit's full name (``abbr=on``: its symbol), then the converted value in
parentheses with the unit symbol, rounded to a precision like the input's (the input's decimal places, shifted
by the rounded log10 of the conversion factor, and at least two significant figures).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from biaskit.scrape.siteinfo import CURRENT

#: stands for a dropped template whose text a sentence may need; never left in output
DROPPED = "\x02"
#: stands for a dropped template the sentence certainly needs, wherever it stands (a {{harvtxt}} subject):
#: its sentence is always dropped and counted; never left in output
BROKEN = "\x03"
#: the date ages are computed at (``{{birth date and age}}``): (year, month, day), set by
#: :func:`biaskit.scrape.clean.clean_wikitext` (``ref_date``; the scrape pipeline passes the revision's timestamp);
#: None: the date is shown without the age
REFERENCE_DATE: ContextVar[tuple[int, int, int] | None] = ContextVar("biaskit_reference_date", default=None)

# --------------------------------------------------------------------------- units for {{convert}}
# code: (singular, plural, symbol, dimension, factor to the SI unit, default output unit or None)
_U: dict[str, tuple[str, str, str, str, float, str | None]] = {
    "km": ("kilometre", "kilometres", "km", "L", 1000.0, "mi"),
    "m": ("metre", "metres", "m", "L", 1.0, "ft"),
    "cm": ("centimetre", "centimetres", "cm", "L", 0.01, "in"),
    "mm": ("millimetre", "millimetres", "mm", "L", 0.001, "in"),
    "mi": ("mile", "miles", "mi", "L", 1609.344, "km"),
    "ft": ("foot", "feet", "ft", "L", 0.3048, "m"),
    "in": ("inch", "inches", "in", "L", 0.0254, "mm"),
    "yd": ("yard", "yards", "yd", "L", 0.9144, "m"),
    "nmi": ("nautical mile", "nautical miles", "nmi", "L", 1852.0, "km"),
    "km2": ("square kilometre", "square kilometres", "km²", "A", 1e6, "sqmi"),
    "m2": ("square metre", "square metres", "m²", "A", 1.0, "sqft"),
    "ha": ("hectare", "hectares", "ha", "A", 1e4, "acre"),
    "acre": ("acre", "acres", "acres", "A", 4046.8564224, "ha"),
    "sqmi": ("square mile", "square miles", "sq mi", "A", 2589988.110336, "km2"),
    "sqft": ("square foot", "square feet", "sq ft", "A", 0.09290304, "m2"),
    "kg": ("kilogram", "kilograms", "kg", "M", 1.0, "lb"),
    "g": ("gram", "grams", "g", "M", 0.001, "oz"),
    "lb": ("pound", "pounds", "lb", "M", 0.45359237, "kg"),
    "oz": ("ounce", "ounces", "oz", "M", 0.028349523125, "g"),
    "t": ("tonne", "tonnes", "t", "M", 1000.0, None),
    "LT": ("long ton", "long tons", "long tons", "M", 1016.0469088, "t"),
    "ST": ("short ton", "short tons", "short tons", "M", 907.18474, "t"),
    "L": ("litre", "litres", "L", "V", 0.001, None),
    "m3": ("cubic metre", "cubic metres", "m³", "V", 1.0, "cuft"),
    "cuft": ("cubic foot", "cubic feet", "cu ft", "V", 0.028316846592, "m3"),
    "USgal": ("US gallon", "US gallons", "US gal", "V", 0.003785411784, "L"),
    "impgal": ("imperial gallon", "imperial gallons", "imp gal", "V", 0.00454609, "L"),
    "km/h": ("kilometre per hour", "kilometres per hour", "km/h", "S", 1 / 3.6, "mph"),
    "mph": ("mile per hour", "miles per hour", "mph", "S", 0.44704, "km/h"),
    "m/s": ("metre per second", "metres per second", "m/s", "S", 1.0, "ft/s"),
    "ft/s": ("foot per second", "feet per second", "ft/s", "S", 0.3048, "m/s"),
    "kn": ("knot", "knots", "kn", "S", 1852 / 3600, "km/h"),
    "kW": ("kilowatt", "kilowatts", "kW", "P", 1000.0, "hp"),
    "MW": ("megawatt", "megawatts", "MW", "P", 1e6, None),
    "hp": ("horsepower", "horsepower", "hp", "P", 745.69987158227022, "kW"),
    "C": ("degree Celsius", "degrees Celsius", "°C", "T", 1.0, "F"),
    "F": ("degree Fahrenheit", "degrees Fahrenheit", "°F", "T", 1.0, "C"),
    "K": ("kelvin", "kelvins", "K", "T", 1.0, "C"),
}
_ALIAS = {
    "mi2": "sqmi",
    "sq mi": "sqmi",
    "ft2": "sqft",
    "sq ft": "sqft",
    "acres": "acre",
    "l": "L",
    "kph": "km/h",
    "kmh": "km/h",
    "°C": "C",
    "°F": "F",
    "metre": "m",
    "meter": "m",
    "foot": "ft",
    "feet": "ft",
    "mile": "mi",
    "miles": "mi",
    "km²": "km2",
    "m²": "m2",
    "knot": "kn",
    "knots": "kn",
    "tonne": "t",
    "tonnes": "t",
    "long ton": "LT",
    "short ton": "ST",
    "cuyd": "cuft",
}
_ALIAS.pop("cuyd")
_RANGE = {
    "to": " to ",
    "-": "–",
    "–": "–",
    "and": " and ",
    "or": " or ",
    "to(-)": " to ",
    "x": " × ",
    "×": " × ",
    "by": " by ",
    "+/-": " ± ",
    "±": " ± ",
    "and(-)": " and ",
}
_NUM = re.compile(r"^[-−+]?(\d{1,3}(,\d{3})+|\d*)(\.\d+)?$")


def _unit(code: str) -> str | None:
    code = code.strip()
    code = _ALIAS.get(code, code)
    return code if code in _U else None


def _parse_num(s: str) -> tuple[float, int] | None:
    """(value, precision) of a plain decimal number; precision is negative for trailing zeros of an integer."""
    s = s.strip().replace("−", "-")
    if not s or not _NUM.match(s) or not any(ch.isdigit() for ch in s):
        return None
    clean = s.replace(",", "")
    if "." in clean:
        prec = len(clean.split(".", 1)[1])
    else:
        digits = clean.lstrip("+-")
        prec = -(len(digits) - len(digits.rstrip("0"))) if digits.strip("0") else 0
    return float(clean), prec


def _fmt(x: float, prec: int) -> str:
    """x rounded to ``prec`` decimal places (negative: tens, hundreds...), with thousands separators."""
    if prec < 0:
        q = 10 ** (-prec)
        x = round(x / q) * q
        prec = 0
    s = f"{x:,.{prec}f}"
    return "0" if s in ("-0", "-0.0") else s.replace("-", "−")


def _fmt_input(s: str) -> str:
    s = s.strip().replace(",", "")
    neg = s.startswith(("-", "−"))
    s = s.lstrip("-−+")
    whole, dot, frac = s.partition(".")
    whole = f"{int(whole):,}" if whole else "0"
    return ("−" if neg else "") + whole + (dot + frac if dot else "")


def _to(value: float, src: str, dst: str) -> float:
    if _U[src][3] == "T":
        c = {"C": value, "F": (value - 32) * 5 / 9, "K": value - 273.15}[src]
        return {"C": c, "F": c * 9 / 5 + 32, "K": c + 273.15}[dst]
    return value * _U[src][4] / _U[dst][4]


def _out_prec(in_prec: int, a: _ConvertArgs, dst: str, out_value: float) -> int:
    """The decimals of ``out_value`` (in unit ``dst``) converted from the input of ``a`` written with ``in_prec``
    decimals: the precision ``a`` names, else as many as the input's, fewer for a bigger output number."""
    src, scale = a.src, a.scale
    if a.explicit is not None:
        return a.explicit
    prec = in_prec
    if _U[src][3] == "T":
        return max(prec, 0)  # temperatures: whole degrees at least: {{convert|40|°F}} -> 40 °F (4 °C)
    prec -= math.floor(math.log10(scale * _U[src][4] / _U[dst][4]) + 0.5)  # a bigger output number needs fewer decimals
    if out_value:
        prec = max(prec, 1 - math.floor(math.log10(abs(out_value))))  # at least two significant figures
    return prec


_SCALE = {"e3": (1e3, "thousand"), "e6": (1e6, "million"), "e9": (1e9, "billion"), "e12": (1e12, "trillion")}
_INT = re.compile(r"-?\d+")


@dataclass
class _ConvertArgs:
    """The arguments of a ``{{convert}}`` these rules cover: the input value(s) and the range words between them,
    the input unit (with its ``e3``... scale), a sub-unit (``6|ft|4|in``), the output unit and precision."""

    values: list[str]
    seps: list[str]
    src: str
    scale: float
    scale_word: str
    sub: tuple[str, str] | None
    dst: str | None
    explicit: int | None
    parsed: list[tuple[float, int]]


def _parse_convert(pos: list[str]) -> _ConvertArgs | None:
    """The stripped positional arguments of ``{{convert}}`` read as :class:`_ConvertArgs`; None when they are beyond these rules."""
    try:
        values = [pos[0]]
        seps: list[str] = []
        i = 1
        while i + 1 < len(pos) and pos[i] in _RANGE:
            seps.append(_RANGE[pos[i]])
            values.append(pos[i + 1])
            i += 2
        code = pos[i]
        scale, scale_word = 1.0, ""
        for pre, (f, w) in _SCALE.items():
            if code.startswith(pre) and _unit(code[len(pre) :]):
                scale, scale_word, code = f, w, code[len(pre) :]
                break
        src = _unit(code)
        if src is None:
            return None
        rest = pos[i + 1 :]
        sub = None  # {{convert|6|ft|4|in|cm}}: 6 feet 4 inches
        if len(rest) >= 2 and _parse_num(rest[0]) and (u2 := _unit(rest[1])) and _U[u2][3] == _U[src][3] and not seps and scale == 1:
            sub = (rest[0], _unit(rest[1]))
            rest = rest[2:]
        if rest and _INT.fullmatch(rest[0]):  # {{convert|2413|ft|0}}: default output unit, precision 0
            rest = ["", *rest]
        dst = _unit(rest[0]) if rest and rest[0] else _U[src][5]
        if rest and rest[0] and dst is None:
            return None  # several output units and other forms these rules do not cover
        explicit = int(rest[1]) if len(rest) > 1 and _INT.fullmatch(rest[1]) else None
        parsed = [_parse_num(v) for v in values]
        if any(p is None for p in parsed) or sub is not None and _parse_num(sub[0]) is None:
            return None
    except IndexError:
        return None
    return _ConvertArgs(values, seps, src, scale, scale_word, sub, dst, explicit, parsed)  # type: ignore[arg-type]


def _unit_name(code: str, singular: bool, ab: bool, us: bool) -> str:
    """A unit as shown: its symbol (``ab``), else its name (``us``: American spelling)."""
    sing, plur, sym = _U[code][0], _U[code][1], _U[code][2]
    if ab:
        return sym
    n = sing if singular else plur
    return n.replace("metre", "meter").replace("litre", "liter") if us else n


def _convert_input(a: _ConvertArgs, adj: bool, in_abbr: bool, us: bool) -> str:
    """The input side of ``{{convert}}``: the values as given with their unit (and sub-unit)."""
    one = len(a.values) == 1 and a.parsed[0][0] == 1 and a.sub is None and not a.scale_word
    ins = "".join(_fmt_input(v) + (a.seps[k] if k < len(a.seps) else "") for k, v in enumerate(a.values))
    if a.scale_word:
        ins += " " + a.scale_word
    if _U[a.src][3] == "T":
        left = f"{ins} {_U[a.src][2]}"
    elif adj and not in_abbr:
        left = f"{ins}-{_unit_name(a.src, True, False, us).replace(' ', '-')}"  # 600,000-square-foot: every space of the name hyphenated
    else:
        left = f"{ins} {_unit_name(a.src, one, in_abbr, us)}"
    if a.sub is not None:
        sv = _parse_num(a.sub[0])[0]  # type: ignore[index]
        left += (
            f" {_fmt_input(a.sub[0])}"
            + ("-" if adj and not in_abbr else " ")
            + (_unit_name(a.sub[1], True, False, us).replace(" ", "-") if adj and not in_abbr else _unit_name(a.sub[1], sv == 1, in_abbr, us))
        )
    return left


def _convert_output(a: _ConvertArgs, dst: str, out_abbr: bool, us: bool) -> str:
    """The converted side of ``{{convert}}``: each value in ``dst``, rounded like the input."""
    outs = []
    for v, p in a.parsed:
        if a.sub is not None:
            v = v + _to(_parse_num(a.sub[0])[0], a.sub[1], a.src)  # type: ignore[index]
            p = _parse_num(a.sub[0])[1] + math.floor(math.log10(_U[a.src][4] / _U[a.sub[1]][4]) + 0.5)  # type: ignore[index]
        ov = _to(v * a.scale, a.src, dst)
        outs.append(_fmt(ov, _out_prec(p, a, dst, ov)))
    outv = "".join(o + (a.seps[k] if k < len(a.seps) else "") for k, o in enumerate(outs))
    out_one = len(outs) == 1 and outs[0] == "1"
    return f"{outv} {_unit_name(dst, out_one, out_abbr, us)}"


def render_convert(pos: list[str], named: dict[str, str], *, abbr_default: bool = False) -> str:
    """``{{convert}}`` as displayed; :data:`DROPPED` when the arguments are beyond these rules."""
    a = _parse_convert([p.strip() for p in pos])
    if a is None:
        return DROPPED
    abbr = named.get("abbr", "on" if abbr_default else "").strip().lower()
    adj = _yes(named.get("adj")) or _yes(named.get("sing"))
    us = named.get("sp", "").strip().lower() == "us"
    disp = named.get("disp", "").strip().lower()
    temp = _U[a.src][3] == "T"
    in_abbr = abbr in ("on", "in", "yes", "y", "values") or temp
    out_abbr = abbr not in ("off", "in", "none", "no") or temp
    left = _convert_input(a, adj, in_abbr, us)
    if a.dst is None or disp == "number":
        return left
    right = _convert_output(a, a.dst, out_abbr, us)
    if named.get("order", "").strip().lower() == "flip":
        # order=flip: the converted value first, the input in parentheses ({{convert|1|mi|km|order=flip}} -> 1.6 km (1 mile))
        left, right = right, left
        if disp in ("", "b", "paren"):
            return f"{left} ({right})"
    if disp == "or":
        return f"{left} or {right}"
    if disp in ("out", "output only"):
        return right
    if disp == "flip":
        return f"{right} ({left})"
    if disp == "comma":
        return f"{left}, {right}"
    if disp and disp not in ("b", "paren"):
        return DROPPED
    return f"{left} ({right})"


# --------------------------------------------------------------------------- dates
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")


def _yes(v: str | None) -> bool:
    return (v or "").strip().lower() in ("y", "yes", "on", "1", "true")


def render_date(pos: list[str], named: dict[str, str], *, dmy_default: bool = False) -> str:
    """``{{birth date|1950|5|17}}`` -> ``May 17, 1950`` (``df=y``: ``17 May 1950``); year or year-month alone too."""
    parts = [p.strip() for p in pos[:3] if p.strip()]
    if not parts:
        return DROPPED
    if len(parts) == 1 and not parts[0].isdigit():
        return parts[0]  # a date already written out (dts, start date with text)
    try:
        y = int(parts[0])
        m = int(parts[1]) if len(parts) > 1 else None
        d = int(parts[2]) if len(parts) > 2 else None
    except ValueError:
        return DROPPED
    if m is not None and not 1 <= m <= 12 or d is not None and not 1 <= d <= 31:
        return DROPPED
    year = f"{-y + 1} BC" if y <= 0 else str(y)
    if m is None:
        return year
    if d is None:
        return f"{_MONTHS[m - 1]} {year}"
    dmy = _yes(named.get("df")) or dmy_default and not _yes(named.get("mf"))
    return f"{d} {_MONTHS[m - 1]} {year}" if dmy else f"{_MONTHS[m - 1]} {d}, {year}"


def _age(born: tuple[int, int, int], on: tuple[int, int, int]) -> int:
    """Whole years from the date ``born`` to the date ``on``, each (year, month, day)."""
    return on[0] - born[0] - (on[1:] < born[1:])


def render_birth_date_and_age(pos: list[str], named: dict[str, str]) -> str:
    """``{{birth date and age|1950|5|17}}`` -> ``May 17, 1950 (age 74)``, the age at :data:`REFERENCE_DATE`
    (without a reference date: the date alone)."""
    date = render_date(pos[:3], named)
    ref = REFERENCE_DATE.get()
    if date == DROPPED or ref is None:
        return date
    try:
        y1, m1, d1 = (int(p.strip()) for p in pos[:3])
    except ValueError:
        return date  # a year alone: no exact age
    return f"{date} (age {_age((y1, m1, d1), ref)})"


def render_death_date_and_age(pos: list[str], named: dict[str, str]) -> str:
    """``{{death date and age|2000|5|17|1950|8|1}}`` -> ``May 17, 2000 (aged 49)``."""
    death = render_date(pos[:3], named)
    try:
        y2, m2, d2, y1, m1, d1 = (int(p.strip()) for p in pos[:6])
    except ValueError:
        return DROPPED
    if death == DROPPED:
        return DROPPED
    return f"{death} (aged {_age((y1, m1, d1), (y2, m2, d2))})"


# --------------------------------------------------------------------------- other templates
_SUP = str.maketrans("0123456789-−+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁻⁺")

#: {{lang-xx}} shows the language's name; codes with a known English name
LANG_NAMES = {
    "ar": "Arabic",
    "az": "Azerbaijani",
    "ca": "Catalan",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "fa": "Persian",
    "fi": "Finnish",
    "fr": "French",
    "ga": "Irish",
    "grc": "Ancient Greek",
    "grc-gre": "Ancient Greek",
    "he": "Hebrew",
    "hi": "Hindi",
    "hu": "Hungarian",
    "hy": "Armenian",
    "it": "Italian",
    "ja": "Japanese",
    "ka": "Georgian",
    "ko": "Korean",
    "la": "Latin",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sa": "Sanskrit",
    "sk": "Slovak",
    "sq": "Albanian",
    "sr": "Serbian",
    "sv": "Swedish",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "ur": "Urdu",
    "zh": "Chinese",
    "ber": "Berber",
    "sw": "Swahili",
    "bn": "Bengali",
    "rus": "Russian",
    "pa": "Punjabi",
    "ps": "Pashto",
    "ku": "Kurdish",
    "mn": "Mongolian",
    "ne": "Nepali",
    "id": "Indonesian",
    "vi": "Vietnamese",
    "th": "Thai",
    "yi": "Yiddish",
    "hr": "Croatian",
    "bg": "Bulgarian",
}

#: templates that show nothing a sentence needs (exact lower-case names)
SILENT = frozenset(
    n.strip()
    for n in """
citation needed|cn|fact|clarify|who|which|when|where|by whom|vague|dubious|better source|page needed|dead link|verify source
failed verification|according to whom|specify|weasel inline|peacock inline|original research inline|or|update after|when?
clarify timeframe|full citation needed|more citations needed|citation needed span|disputed inline|year needed|pages needed
better source needed|self-published inline|primary source inline|efn|efn-ua|efn-lr|refn|r|rp|sfn|sfnp|sfnm|harv|harvnb|harvp
harvcolnb|harvard citation no brackets|notetag|note|main|see also|further|about|redirect|other uses|distinguish|for
hatnote|selfref|anchor|toc|toc right|toc left|clear|reflist|refbegin|refend|div col|div col end|colbegin|colend|col-begin
col-end|col-break|multicol|multicol-end|defaultsort|short description|good article|featured article|featured list
use dmy dates|use mdy dates|use british english|flagicon|increase|decrease|steady|dmoz|youtube|imdb name|imdb title
official website|wikiatlas|gutenberg author|librivox author|internet archive author|ol author|cia world factbook link
osmrelation-inline|in our time|nyttopic|philpapers|inpho|worldcat id|mathworld|eb1911|wayback|webarchive|commons
commons category|wikiquote|wikisource|wiktionary|wikibooks|wikiversity|wikinews|wikispecies|sister project links|portal
portal bar|authority control|navboxes|multiple image|double image|wide image|image|map caption|quote|blockquote|quotation
cquote|rquote|pull quote|hlist|plainlist|flatlist|unbulleted list|bulleted list|columns-list|chart|legend|bartable
bar percent|bar box|clade|inconsistent citations|unreferenced|unreferenced section|refimprove|refimprove section
expand section|multiple issues|lookfrom|intitle|govpubs|statedept|books-inline|wikisource-inline|sep|·|!|=|pipe
coord missing|spoken wikipedia|citation|keypress|en icon|fr icon|gr icon|de icon""".replace("\n", "|").split("|")
    if n.strip()
)
_SILENT_PREFIX = (
    "cite ",
    "vcite",
    "infobox",
    "navbox",
    "sidebar",
    "pp-",
    "s-",
    "use ",
    "portal",
    "wikipedia",
    "commons",
    "sfn",
    "harv",
    "#tag:ref",
    "taxobox",
    "automatic taxobox",
    "speciesbox",
    "succession",
    "campaignbox",
    "geographic location",
    "library resources",
    "good article",
    "featured",
    "wikiproject",
    "citation needed",
    "refimprove",
    "unreferenced",
)
#: pronunciation guides: dropped when inside parentheses (where Wikipedia puts them), else the sentence is dropped
PRONUNCIATION = ("ipa", "ipac-", "ipa-", "ipa2", "ipa3", "respell", "pronunciation", "audio", "pron", "ipa audio link")
#: templates whose first positional argument is their visible text
FIRST_ARG = frozenset(
    n.strip()
    for n in """nowrap|small|smaller|midsize|big|larger|large|resize|nobold|noitalic|sc|smallcaps|sc1
vr|var|mvar|math|sub|sup|linktext|flag|flagcountry|tooltip|abbr|abbrlink|vanchor|ill|interlanguage link|interlanguage link multi
not a typo|proper name|as written|no wrap|small caps|nobr|em|strong|serif|code|kbd|tt|mono|italic title|lang-only
nastaliq|naskh|script/nastaliq|script/arabic|script/hebrew|urdu|noto nastaliq""".replace("\n", "|").split("|")
)


_NAME_END = re.compile(r"[|}\n]")
#: Harvard citations written into the sentence ("{{harvtxt|Smith|2010}} has noted that ..."): shown as "Smith (2010)"
TEXT_CITATIONS = frozenset({"harvtxt", "harvard citation text", "harvcoltxt", "harvcol txt"})
#: the year argument: a year ("2010", "2010a", "c. 1900", "1974, 1999") or "n.d."
_YEAR = re.compile(r"^(?:c\.\s*)?\d{3,4}[a-z]?(?:\s*[,–-]\s*\d{2,4}[a-z]?)*$|^n\.d\.$|^nd$")


def render_harvtxt(pos: list[str], named: dict[str, str]) -> str:
    """``{{harvtxt|Smith|Jones|2010|p=5}}`` -> ``Smith & Jones (2010, p. 5)`` (Template:Harvard citation text: up to
    three surnames, four as ``Smith et al.``); :data:`BROKEN` when no author and year can be read, so a sentence
    never keeps a hole where its subject was (even at its start, where a :data:`DROPPED` mark would be harmless)."""
    args = [p.strip() for p in pos if p.strip()]
    if len(args) < 2 or not _YEAR.match(args[-1]):
        return BROKEN
    names, year = args[:-1][:4], args[-1]
    if len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} & {names[1]}"
    elif len(names) == 3:
        who = f"{names[0]}, {names[1]} & {names[2]}"
    else:
        who = f"{names[0]} et al."
    loc = ""
    if named.get("p"):
        loc = f", p. {named['p']}"
    elif named.get("pp"):
        loc = f", pp. {named['pp']}"
    elif named.get("loc"):
        loc = f", {named['loc']}"
    return f"{who} ({year}{loc})"


def _strip_template_ns(name: str) -> str:
    """``template:convert`` -> ``convert``; also the wiki's own template namespace (``πρότυπο:``, ``bản mẫu:``)
    when the cleaner works with a wiki's names (:data:`biaskit.scrape.siteinfo.CURRENT`)."""
    if name.startswith("template:"):
        return name[9:]
    if ":" in name:
        site = CURRENT.get()
        if site is not None:
            head, _, rest = name.partition(":")
            if head.strip() in site.template_names:
                return rest.strip()
    return name


def is_silent(inner: str) -> bool:
    """True for the inside of a ``{{...}}`` whose template shows no prose (by its name)."""
    m = _NAME_END.search(inner)
    name = _strip_template_ns(" ".join((inner[: m.start()] if m else inner).replace("_", " ").split()).lower())
    if name in TEXT_CITATIONS:
        return False
    return name in SILENT or name.startswith(_SILENT_PREFIX)


def _params(node: Any, render: Callable[[Any], str]) -> tuple[list[str], dict[str, str]]:
    pos: list[str] = []
    named: dict[str, str] = {}
    for p in node.params:
        v = render(p.value)
        if p.showkey:
            named[str(p.name).strip().lower()] = v.strip()
        else:
            pos.append(v)
    return pos, named


_SPOKEN_ABOUT = re.compile(r"(?:\b(?:pronounced|pronunciation|as|is|are|was|were|like|spelled|written|sounds?|of|or|and)|[:=])\s*['\"]*\s*$", re.I)


def _inside_parens(before: str) -> bool:
    line = before[before.rfind("\n") + 1 :]
    return line.count("(") > line.count(")")


def render_template(node: Any, render: Callable[[Any], str], before: Callable[[], str] = str) -> str:
    """Visible text of a template node (see the module doc); ``before()`` gives the text rendered so far."""
    try:
        return _render_template(node, render, before)
    except Exception:  # odd arguments (a rendering bug must not cost the page): treated as unknown, the sentence is counted
        return DROPPED


def _render_template(node: Any, render: Callable[[Any], str], before: Callable[[], str]) -> str:
    raw_name = str(node.name).strip()
    name = _strip_template_ns(" ".join(raw_name.replace("_", " ").split()).lower())
    if ":" in name and not name.startswith("#"):
        shown = _render_parser_function(raw_name)
        if shown is not None:
            return shown
    if (name in SILENT or name.startswith(_SILENT_PREFIX)) and name not in TEXT_CITATIONS:
        return ""
    if name.startswith(PRONUNCIATION) and not name.startswith(("ipa-x", "ipac-xx")) or name in ("ipa", "ipac-en"):
        # a pronunciation guide is an aside (in parentheses or after the bold title): dropped; one the sentence
        # speaks about ("is pronounced {{IPA|...}}") takes its sentence with it
        return DROPPED if _SPOKEN_ABOUT.search(before()[-40:]) and not _inside_parens(before()) else ""
    pos, named = _params(node, render)
    first = pos[0].strip() if pos else ""
    if name in ("convert", "cvt"):
        return render_convert(pos, named, abbr_default=name == "cvt")
    if name in TEXT_CITATIONS:
        return render_harvtxt(pos, named)
    if name in _FIXED_TEXT:
        return _FIXED_TEXT[name]
    shown = _render_date_template(name, pos, named, first)
    if shown is None:
        shown = _render_language_template(name, pos, first, before)
    if shown is None:
        shown = _render_markup_template(name, pos, named, first)
    return DROPPED if shown is None else shown


_CASE_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "lc": str.lower,
    "uc": str.upper,
    "ucfirst": lambda s: s[:1].upper() + s[1:],
    "lcfirst": lambda s: s[:1].lower() + s[1:],
}


def _render_parser_function(raw_name: str) -> str | None:
    """``{{lc:...}}`` and the other case functions, ``{{formatnum:...}}``, ``{{DISPLAYTITLE:...}}`` and
    ``{{DEFAULTSORT:...}}`` (both show nothing); None for another name with a colon."""
    head, _, arg = raw_name.partition(":")
    head = head.strip().lower()
    if head in ("displaytitle", *_CASE_FUNCTIONS):
        return _CASE_FUNCTIONS.get(head, lambda s: "")(arg.strip())
    if head == "formatnum":
        num = _parse_num(arg)
        return _fmt_input(arg) if num is not None else DROPPED
    if head == "defaultsort":
        return ""
    return None


#: templates that stand for a fixed piece of text: spaces, dashes, quotes, the possessive 's, the ʻokina
_FIXED_TEXT: dict[str, str] = {
    **dict.fromkeys(("nbsp", "thinsp", "hairsp", "spaces", "space", "sp"), " "),
    **dict.fromkeys(("snd", "spaced ndash", "spnd", "sndash", "spaced en dash"), " – "),
    **dict.fromkeys(("ndash", "en dash", "–"), "–"),
    **dict.fromkeys(("mdash", "em dash", "—", "mdashb"), "—"),
    "spaced mdash": " — ",
    "'s": "'s",
    "`s": "’s",
    "'": "'",
    "' \"": "'\"",
    "'\"": "'\"",
    "\" '": "\"'",
    '-"': '"',
    "-'": "'",
    "okina": "ʻ",
}

#: date templates shown as a written date (``{{birth date|1950|5|17}}`` -> ``May 17, 1950``)
_DATE_TEMPLATES = frozenset(
    {
        "birth date",
        "start date",
        "end date",
        "death date",
        "dob",
        "start date and age",
        "end date and age",
        "death-date",
        "birth-date",
        "dts",
        "date",
        "film date",
        "release date",
        "start and end dates",
    }
)


def _render_date_template(name: str, pos: list[str], named: dict[str, str], first: str) -> str | None:
    """Dates, ages, ``{{as of}}``, ``{{circa}}`` and ``{{floruit}}``; None for another template."""
    if name in ("birth date and age", "bda", "birth date and age2"):
        return render_birth_date_and_age(pos, named)
    if name in _DATE_TEMPLATES:
        if name in ("birth-date", "death-date") and pos:
            return pos[-1].strip() or DROPPED
        return render_date(pos, named)
    if name in ("death date and age", "dda"):
        return render_death_date_and_age(pos, named)
    if name == "as of":
        if named.get("alt", "").strip():
            return named["alt"].strip()  # {{As of|2010|alt=In 2010}} shows its alt text
        d = render_date(pos, named, dmy_default=named.get("df", "").lower() not in ("us", "")) if pos else DROPPED
        if d == DROPPED:
            return DROPPED
        lead = "as of" if _yes(named.get("lc")) else "As of"
        return f"{lead} {d}"
    if name in ("circa", "c."):
        return f"c. {first}" if first else "c."
    if name in ("fl.", "floruit"):
        return f"fl. {first}" if first else "fl."
    return None


def _render_language_template(name: str, pos: list[str], first: str, before: Callable[[], str]) -> str | None:
    """Foreign-language text (``{{lang}}``, ``{{lang-xx}}``, transliterations, ``{{nihongo}}``, scripts); None for
    another template."""
    if name == "lang":
        return pos[1].strip() if len(pos) > 1 else DROPPED
    if name.startswith("lang-"):
        code = name[5:]
        if DROPPED in first:
            # the foreign-language text could not be produced: inside parentheses it is an aside and goes alone,
            # never taking the sentence (a biography's lead) with it
            return "" if _inside_parens(before()) else DROPPED
        if not first:
            return DROPPED
        # the language's name as Wikipedia shows it; for a code not listed here, the text alone (an aside)
        return f"{LANG_NAMES[code]}: {first}" if code in LANG_NAMES else first
    if name in ("transl", "transliteration"):
        return pos[-1].strip() if len(pos) > 1 else DROPPED
    if name in ("nihongo", "nihongo2", "nihongo3"):
        bits = [p.strip() for p in pos[:3]]
        if not bits or not bits[0]:
            return DROPPED
        extra = ", ".join(b for b in bits[1:] if b)
        return f"{bits[0]} ({extra})" if extra else bits[0]
    if name in ("script", "rtl-lang", "native name", "lang-rtl"):
        return pos[1].strip() if len(pos) > 1 else DROPPED
    return None


def _render_markup_template(name: str, pos: list[str], named: dict[str, str], first: str) -> str | None:
    """``{{sic}}``, text wrappers (:data:`FIRST_ARG`), brackets, formulas, fractions, numbers and currency; None
    for another template."""
    if name in ("sic",):
        text = "".join(p.strip() for p in pos)
        return text if _yes(named.get("hide")) else (f"{text} [sic]" if text else "[sic]")
    if name in FIRST_ARG:
        return first if first else ""
    if name in ("angbr",):
        return f"⟨{first}⟩"
    if name in ("chem", "chem2"):
        return "".join(p.strip() for p in pos)
    if name in ("frac", "sfrac"):
        if len(pos) == 1:
            return f"1/{first}"
        if len(pos) == 2:
            return f"{first}/{pos[1].strip()}"
        if len(pos) == 3:
            return f"{first} {pos[1].strip()}/{pos[2].strip()}"
        return DROPPED
    if name in ("e",):
        return f"×10{first.translate(_SUP)}" if first else DROPPED
    if name == "val":
        if not first or _parse_num(first) is None:
            return DROPPED
        text = first  # as written: {{val}} groups long numbers with gaps, which copy out as the bare digits
        if len(pos) > 1 and pos[1].strip():
            text += f"±{pos[1].strip()}"
        if named.get("e"):
            text += f"×10{named['e'].translate(_SUP)}"
        unit = named.get("u") or named.get("ul") or ""
        if unit:
            text += f" {unit}"
        return text
    if name in ("us$", "usd"):
        return f"US${first}" if first else DROPPED
    return None


_PARENS_DROPPED = re.compile(r"\(\s*(?:" + DROPPED + r"[\s,;:]*)+\)")
_CLOSERS = "\"'”’»)]"


def resolve_dropped(sentence: str) -> tuple[str | None, bool]:
    """Remove dropped-template marks that cannot have broken the sentence.

    Returns ``(sentence, broken)``: ``broken`` when a mark sits inside the sentence (its sentence must be
    dropped and counted); ``(None, False)`` when nothing but marks and punctuation was left.
    """
    if BROKEN in sentence:
        return sentence.replace(BROKEN, "").replace(DROPPED, ""), True
    if DROPPED not in sentence:
        return sentence, False
    s = _PARENS_DROPPED.sub("", sentence)
    s = s.lstrip(DROPPED + " ")
    body = s.rstrip(DROPPED + " ")
    if DROPPED in body:
        return s, True
    if body and len(body) < len(s) and body[-1] not in ".!?" + _CLOSERS:
        return s, True  # a mark at the end of a sentence without final punctuation: maybe a missing value
    if not any(ch.isalnum() for ch in body):
        return None, False
    return body, False
