"""The wiki's own names: namespaces, their aliases and the image-option magic words of any language edition.

A Greek article links its pictures as ``[[Αρχείο:X.jpg|μικρογραφία|...]]`` and its categories as
``[[Κατηγορία:...]]``; a Vietnamese one as ``[[Tập tin:...]]`` / ``[[Thể loại:...]]``. The cleaner must know
these names to drop such links (their options and captions are no prose). :class:`SiteNames` holds them:

* from a dump: the ``<siteinfo><namespaces>`` block at the top of every ``pages-articles`` dump
  (:func:`read_dump_siteinfo`, :func:`site_names_from_dump`);
* from the Action API: ``meta=siteinfo&siprop=namespaces|namespacealiases|magicwords``
  (:func:`site_names_from_api`), which also lists the aliases and the localised image options;
* always: MediaWiki's canonical English names (``File``, ``Image``, ``Category``, ``Template``, ...), which every
  wiki accepts, and the image options MediaWiki's English core defines.

Dumps carry no aliases and no magic words, so :data:`KNOWN_ALIASES` and :data:`KNOWN_IMAGE_OPTIONS` add the
common ones of a few languages (taken from MediaWiki's ``languages/messages/Messages*.php``; the API lists them
all). A link whose prefix is a known namespace is never read as prose.
"""

from __future__ import annotations

import bz2
import re
import xml.etree.ElementTree as ET
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from biaskit.errors import BiaskitError

#: MediaWiki's canonical namespace names (every wiki accepts them besides its localised names)
CANONICAL: dict[int, tuple[str, ...]] = {
    -2: ("Media",),
    -1: ("Special",),
    1: ("Talk",),
    2: ("User",),
    3: ("User talk",),
    4: ("Project",),
    5: ("Project talk",),
    6: ("File", "Image"),
    7: ("File talk", "Image talk"),
    8: ("MediaWiki",),
    9: ("MediaWiki talk",),
    10: ("Template",),
    11: ("Template talk",),
    12: ("Help",),
    13: ("Help talk",),
    14: ("Category",),
    15: ("Category talk",),
    100: ("Portal",),
    101: ("Portal talk",),
    118: ("Draft",),
    119: ("Draft talk",),
    828: ("Module",),
    829: ("Module talk",),
    710: ("TimedText",),
    711: ("TimedText talk",),
}
#: Namespace aliases a dump does not list (MediaWiki core's ``$namespaceAliases`` of these languages, and
#: Wikipedia's ``WP``); the API's ``namespacealiases`` gives them all for a live wiki.
KNOWN_ALIASES: dict[str, dict[int, tuple[str, ...]]] = {
    "*": {4: ("WP", "Wikipedia"), 6: ("Image",), 14: ("Category",)},
    "el": {6: ("Εικόνα",), 7: ("Συζήτηση εικόνας",), 10: ("Πρότυπο",), 14: ("Κατηγορία",)},
    "vi": {6: ("Hình", "Tập tin"), 7: ("Thảo luận Hình",), 10: ("Tiêu bản", "Bản mẫu"), 14: ("Thể loại",)},
    "uk": {6: ("Файл", "Зображення"), 10: ("Шаблон",), 14: ("Категорія",)},
    "ru": {6: ("Файл", "Изображение"), 10: ("Шаблон",), 14: ("Категория",)},
    "ja": {6: ("ファイル", "画像"), 10: ("Template", "テンプレート"), 14: ("Category", "カテゴリ")},
    "zh": {6: ("文件", "File", "图像", "檔案", "文件"), 14: ("分类", "分類", "Category")},
    "cs": {6: ("Soubor", "Obrázek"), 10: ("Šablona",), 14: ("Kategorie",)},
    "pl": {6: ("Plik", "Grafika"), 10: ("Szablon",), 14: ("Kategoria",)},
    "sk": {6: ("Súbor", "Obrázok"), 10: ("Šablóna",), 14: ("Kategória",)},
    "de": {6: ("Datei", "Bild"), 10: ("Vorlage",), 14: ("Kategorie",)},
    "fr": {6: ("Fichier",), 10: ("Modèle",), 14: ("Catégorie",)},
    "bn": {6: ("চিত্র",), 14: ("বিষয়শ্রেণী",)},
}
#: English image options (MediaWiki core ``img_*`` magic words), lower-case; ``$1`` is a value
_EN_IMAGE_OPTIONS = (
    "thumb",
    "thumbnail",
    "frame",
    "framed",
    "enframed",
    "frameless",
    "border",
    "left",
    "right",
    "center",
    "centre",
    "none",
    "baseline",
    "sub",
    "super",
    "sup",
    "top",
    "text-top",
    "middle",
    "bottom",
    "text-bottom",
    "upright",
    "upright=$1",
    "upright $1",
    "thumb=$1",
    "thumbnail=$1",
    "alt=$1",
    "link=$1",
    "page=$1",
    "page $1",
    "class=$1",
    "lang=$1",
    "$1px",
)
#: localised image options of a few languages (the API's ``magicwords`` lists every one of a live wiki)
KNOWN_IMAGE_OPTIONS: dict[str, tuple[str, ...]] = {
    "el": (
        "μικρογραφία",
        "μικρογραφια",
        "πλαίσιο",
        "κορνίζα",
        "χωρίςπλαίσιο",
        "χωρίς πλαίσιο",
        "πλαίσιο",
        "αριστερά",
        "δεξιά",
        "κέντρο",
        "κανένα",
        "όρθιο",
        "όρθιο=$1",
        "εναλλ.=$1",
        "εναλλ=$1",
        "σύνδεσμος=$1",
        "$1εσ",
        "$1px",
    ),
    "vi": (
        "nhỏ",
        "hình nhỏ",
        "khung",
        "không khung",
        "khung viền",
        "viền",
        "trái",
        "phải",
        "giữa",
        "không",
        "đứng",
        "đứng=$1",
        "thế=$1",
        "liên kết=$1",
        "$1px",
    ),
    "uk": (
        "мініатюра",
        "міні",
        "безрамки",
        "рамка",
        "межа",
        "зліва",
        "справа",
        "центр",
        "ліворуч",
        "праворуч",
        "посередині",
        "альт=$1",
        "посилання=$1",
        "$1пкс",
    ),
    "ru": ("мини", "миниатюра", "обрамить", "безрамки", "граница", "слева", "справа", "центр", "альт=$1", "ссылка=$1", "$1пкс"),
    "ja": ("サムネイル", "サムネ", "フレーム", "フレームなし", "境界", "左", "右", "中央", "なし", "代替=$1", "リンク=$1", "$1ピクセル"),
    "cs": ("náhled", "vlevo", "vpravo", "střed", "rám", "bez rámu", "$1pixelů"),
    "pl": ("mały", "lewo", "prawo", "centruj", "ramka", "bez ramki", "$1 piks"),
    "de": ("miniatur", "mini", "rahmen", "rahmenlos", "links", "rechts", "zentriert", "hochkant", "hochkant=$1"),
    "bn": ("থাম্ব", "থাম্বনেইল", "বামে", "ডানে", "কেন্দ্রে"),
}


def _norm(name: str) -> str:
    """How MediaWiki compares namespace names: case-insensitive, underscores = spaces, single spaces."""
    return " ".join(name.replace("_", " ").split()).casefold()


@dataclass(frozen=True)
class SiteNames:
    """Namespace names (localised, canonical and aliases) and image options of one wiki."""

    language: str = "en"
    namespaces: dict[int, tuple[str, ...]] = field(default_factory=dict)  # key -> names as the wiki writes them
    image_options: tuple[str, ...] = ()  # magic words, ``$1`` = a value
    source: str = "canonical"  # dump | api | canonical

    @classmethod
    def build(
        cls, language: str = "en", names: dict[int, list[str]] | None = None, image_options: list[str] | None = None, source: str = "canonical"
    ) -> SiteNames:
        """Names of the wiki (``names``, e.g. from a dump) + canonical names + the known aliases of the language."""
        base = (language or "en").split("-")[0].lower()
        merged: dict[int, list[str]] = {}
        for table in ((names or {}), CANONICAL, KNOWN_ALIASES["*"], KNOWN_ALIASES.get(base, {})):
            for key, vals in table.items():
                for v in vals:
                    if v and v not in merged.setdefault(int(key), []):
                        merged[int(key)].append(v)
        opts = list(dict.fromkeys([*_EN_IMAGE_OPTIONS, *KNOWN_IMAGE_OPTIONS.get(base, ()), *(image_options or [])]))
        return cls(language=language, namespaces={k: tuple(v) for k, v in sorted(merged.items())}, image_options=tuple(opts), source=source)

    def names(self, *keys: int) -> frozenset[str]:
        """Normalised (case-folded, single-spaced) names of the given namespace keys."""
        return frozenset(_norm(n) for k in keys for n in self.namespaces.get(k, ()))

    @cached_property
    def all_names(self) -> frozenset[str]:
        """Every non-article namespace name (normalised)."""
        return frozenset(_norm(n) for k, vals in self.namespaces.items() if k != 0 for n in vals)

    @cached_property
    def drop_link_names(self) -> frozenset[str]:
        """Links whose target is no text: files, media, categories."""
        return self.names(-2, 6, 14)

    @cached_property
    def file_names(self) -> frozenset[str]:
        return self.names(-2, 6)

    @cached_property
    def category_names(self) -> frozenset[str]:
        return self.names(14)

    @cached_property
    def template_names(self) -> frozenset[str]:
        return self.names(10)

    @cached_property
    def file_link_start(self) -> re.Pattern:
        """``[[`` + a file/media namespace name + ``:`` (case-insensitive, spaces or underscores)."""
        return re.compile(r"\[\[\s*:?\s*(?:" + "|".join(_name_re(n) for n in sorted(self.file_names, key=len, reverse=True)) + r")\s*:", re.I)

    @cached_property
    def category_link(self) -> re.Pattern:
        """``[[Category:Name`` in any of the wiki's names (group 1: the category name)."""
        return re.compile(
            r"\[\[\s*(?:" + "|".join(_name_re(n) for n in sorted(self.category_names, key=len, reverse=True)) + r")\s*:\s*([^|\]]+)", re.I
        )

    @cached_property
    def prefix_residue(self) -> re.Pattern:
        """A namespace prefix (``Κατηγορία:``, ``Tập tin:``, ``File:``) written in text."""
        return re.compile(r"(?<!\w)(?:" + "|".join(_name_re(n) for n in sorted(self.all_names, key=len, reverse=True)) + r")\s*:(?=\S)", re.I)

    @cached_property
    def image_option_residue(self) -> re.Pattern:
        """An image option as it is written in a file link: ``thumb|``, ``|left|``, ``|200px``, ``μικρογραφία|``."""
        alts = []
        for o in sorted(self.image_options, key=len, reverse=True):
            if "$1" in o:
                alts.append(re.escape(o).replace(re.escape("$1"), r"[^|\]\s]*") if not o.startswith("$1") else r"\d+(?:x\d+)?" + re.escape(o[2:]))
            else:
                alts.append(re.escape(o))
        body = "|".join(alts)
        return re.compile(r"(?:(?<![\w-])(?:" + body + r")\s*\|)|(?:\|\s*(?:" + body + r")(?![\w-]))", re.I)

    def is_drop_link(self, prefix: str) -> bool:
        return _norm(prefix) in self.drop_link_names

    def is_namespace(self, prefix: str) -> bool:
        return _norm(prefix) in self.all_names

    def as_dict(self) -> dict:
        """What a manifest records."""
        return {
            "source": self.source,
            "language": self.language,
            "file": sorted(self.namespaces.get(6, ())),
            "category": sorted(self.namespaces.get(14, ())),
            "template": sorted(self.namespaces.get(10, ())),
            "namespaces": len(self.all_names),
            "image_options": len(self.image_options),
        }


def _name_re(name: str) -> str:
    return r"[ _]+".join(re.escape(w) for w in name.split(" "))


def _namespace_key(value: object, source: str) -> int:
    """A namespace key (``<namespace key="6">``, the API's namespace ids): a whole number, else E032 naming it."""
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        raise BiaskitError(
            "E032",
            f"{source}: a siteinfo namespace key is not a whole number",
            value=value,
            fix="the dump's <siteinfo><namespaces> block is damaged: download the dump again (namespace keys are numbers such as 0, 6, 14)",
        ) from None


def read_dump_siteinfo(path: str | Path) -> tuple[str, dict[int, list[str]], dict[str, str]]:
    """(language, {namespace key: [name]}, {dbname, sitename, base}) from a dump's ``<siteinfo>``; reads only
    the head of the file (stops at the first ``<page>``)."""
    p = Path(path)
    opener = bz2.open if str(p).endswith(".bz2") else open
    lang = ""
    names: dict[int, list[str]] = {}
    general: dict[str, str] = {}
    with opener(p, "rb") as fh:
        try:
            for event, el in ET.iterparse(fh, events=("start", "end")):
                tag = el.tag.rsplit("}", 1)[-1]
                if event == "start":
                    if tag == "mediawiki":
                        lang = el.get("{http://www.w3.org/XML/1998/namespace}lang") or ""
                    elif tag == "page":
                        break
                    continue
                if tag == "namespace" and el.text:
                    names.setdefault(_namespace_key(el.get("key", "0"), str(p)), []).append(el.text.strip())
                elif tag in ("dbname", "sitename", "base"):
                    general[tag] = (el.text or "").strip()
                elif tag == "siteinfo":
                    break
        except (ET.ParseError, EOFError, OSError):  # broken XML, a cut or non-bz2 stream
            pass  # a broken head: the page pass reports it (E032)
    return lang, names, general


def site_names_from_dump(path: str | Path, language: str | None = None) -> SiteNames:
    """The :class:`SiteNames` of a dump: its own namespace names (+ canonical names and known aliases)."""
    lang, names, _ = read_dump_siteinfo(path)
    return SiteNames.build(language or lang or "en", names, source="dump")


def site_names_from_api(query: dict, language: str | None = None) -> SiteNames:
    """The :class:`SiteNames` of ``meta=siteinfo&siprop=general|namespaces|namespacealiases|magicwords`` (formatversion 2)."""
    names: dict[int, list[str]] = {}
    for key, ns in (query.get("namespaces") or {}).items():
        for n in (ns.get("name"), ns.get("canonical")):
            if n:
                names.setdefault(_namespace_key(key, "the API's siteinfo"), []).append(n)
    for alias in query.get("namespacealiases") or []:
        if alias.get("alias"):
            names.setdefault(_namespace_key(alias.get("id"), "the API's namespacealiases"), []).append(alias["alias"])
    opts: list[str] = []
    for mw in query.get("magicwords") or []:
        if str(mw.get("name", "")).startswith("img_"):
            opts.extend(a for a in mw.get("aliases", []) if a)
    lang = language or (query.get("general") or {}).get("lang") or "en"
    return SiteNames.build(lang, names, [o.lower() for o in opts], source="api")


#: the names the cleaner uses for the page it is working on (set by :func:`biaskit.scrape.clean.clean_wikitext`)
CURRENT: ContextVar[SiteNames | None] = ContextVar("biaskit_site_names", default=None)
_DEFAULT: list[SiteNames] = []


def current() -> SiteNames:
    s = CURRENT.get()
    if s is not None:
        return s
    if not _DEFAULT:
        _DEFAULT.append(SiteNames.build("en"))
    return _DEFAULT[0]


#: Wikimedia project suffixes of a ``dbname`` (``elwiki``, ``viwiktionary``)
_DB_SUFFIXES = ("wiktionary", "wikibooks", "wikinews", "wikiquote", "wikisource", "wikiversity", "wikivoyage", "wiki")
#: Wikimedia subdomains / database prefixes that are not language codes as written
_DB_LANG = {"simple": "en", "be-x-old": "be-tarask", "be_x_old": "be-tarask", "zh-classical": "lzh", "zh-min-nan": "nan", "zh-yue": "yue"}
_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,8})*")
_WIKIMEDIA_HOST = re.compile(
    r"https?://([a-z0-9-]+)\.(?:m\.)?(?:wikipedia|wiktionary|wikibooks|wikinews|wikiquote|wikisource|wikiversity|wikivoyage)\.org/"
)


def _code(raw: str) -> str | None:
    c = _DB_LANG.get(raw, raw.replace("_", "-").lower())
    c = _DB_LANG.get(c, c)
    return c if _CODE.fullmatch(c) else None


def siteinfo_language(lang: str, general: dict[str, str]) -> tuple[str | None, str | None]:
    """(language code, where it came from) of a dump, from what :func:`read_dump_siteinfo` returns: the
    ``<mediawiki xml:lang>`` attribute (the wiki's content language), else the host of ``<base>`` on a Wikimedia
    project (``https://el.wikipedia.org/...`` -> ``el``), else a Wikimedia ``<dbname>`` (``viwiki`` -> ``vi``,
    ``simplewiki`` -> ``en``). (None, None) when none of them names one."""
    if lang and _code(lang):
        return _code(lang), "siteinfo:xml:lang"
    m = _WIKIMEDIA_HOST.match(general.get("base", ""))
    if m and _code(m.group(1)):
        return _code(m.group(1)), "siteinfo:base"
    db = general.get("dbname", "")
    for suf in _DB_SUFFIXES:
        if db.endswith(suf) and len(db) > len(suf) and _code(db[: -len(suf)]):
            return _code(db[: -len(suf)]), "siteinfo:dbname"
    return None, None
