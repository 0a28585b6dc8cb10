"""Wikitext -> clean prose paragraphs -> sentences.

The cleaner walks the mwparserfromhell node tree and keeps only running prose:

* dropped: templates without prose (infoboxes, citations, ``{{DEFAULTSORT:...}}``), ``<ref>`` tags *with their
  text*, tables, comments, files/images/media, categories, interlanguage links, headings, list items,
  ``<math>``/``<gallery>``/``<timeline>``/... blocks, template arguments, bare external links;
* rendered: inline templates that carry prose (``{{convert}}``, ``{{val}}``, dates, ``{{lang}}``, ``{{nowrap}}``,
  ``{{sic}}``, dashes, ...: :mod:`biaskit.scrape.wikitemplates`); a template that cannot be rendered leaves a
  mark, and :func:`clean_sentences` drops the sentences it would break (``template_dropped``);
* kept: the visible text of wiki links (``[[A|b]]`` -> ``b``), of bracketed external links with a label,
  and of formatting tags (bold, italic, ``<small>``...); HTML entities are decoded;
* whitespace is normalised: no newlines or double spaces inside a paragraph, no space before
  punctuation, no empty ``()`` left behind by removed templates.

Sentence splitting (:func:`load_splitter`): the rule-based Wikipedia splitter ``wiki``
(:mod:`biaskit.scrape.sentences`, the default, no model), or spaCy: an installed pipeline's ``senter``, its
dependency parser, or the rule-based ``sentencizer`` on a blank pipeline.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from biaskit.assets import load_spacy
from biaskit.errors import BiaskitError, check_choice, require
from biaskit.log import get_logger
from biaskit.scrape import siteinfo as _siteinfo
from biaskit.scrape.abbrev import Learned, learn_from_dump, learn_from_paragraphs, needs_learning
from biaskit.scrape.sentences import WikiSplitter
from biaskit.scrape.siteinfo import site_names_from_dump
from biaskit.scrape.wikitemplates import BROKEN, DROPPED, REFERENCE_DATE, is_silent, render_template, resolve_dropped

log = get_logger("scrape")

#: tags whose whole content is dropped
DROP_TAGS = frozenset(
    {
        "ref",
        "references",
        "math",
        "chem",
        "ce",
        "gallery",
        "timeline",
        "imagemap",
        "score",
        "hiero",
        "graph",
        "mapframe",
        "maplink",
        "templatedata",
        "syntaxhighlight",
        "source",
        "pre",
        "table",
        "tr",
        "td",
        "th",
        "caption",
        "noinclude",
        "includeonly",
        "onlyinclude",
        "inputbox",
        "categorytree",
        "div",
    }
)
#: wiki markup that starts a list item / definition / indentation line (the line is dropped)
LIST_MARKUP = frozenset({"*", "#", ";", ":"})
#: namespaces whose links are not text
DROP_LINK_NAMESPACES = frozenset(
    {"file", "image", "media", "category", "datei", "bild", "kategorie", "soubor", "plik", "kategoria", "súbor", "fichier", "catégorie"}
)
_INTERLANG = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]+)*$|^simple$|^be-x-old$|^zh-min-nan$|^zh-yue$|^zh-classical$")
_LINE_DROP = "\x01"  # marks a line to drop (list item, definition, heading)

#: strings that must never survive cleaning (checked on every sentence; a hit is a counted drop)
RESIDUE = ("{{", "}}", "[[", "]]", "<ref", "</ref", "File:", "Image:", "thumb|", "__", "==", "''", DROPPED, BROKEN)
#: a ``|`` is dropped as markup only when it is table or template markup (anything else is prose: a pipe typed for
#: the danda ``খাই |``, a title ``«Тіні | Світло»``, a formula ``f|S(s)``, ``P(A|B)``):
#: table syntax (``{|``, ``|}``, ``||``, ``|-``, ``|+``, a row opening the text), a parameter (``| name =``), a pipe
#: glued to the next word after a space (``(Pashto |افغانستان)``, `` |200px``: a template or link argument), a pipe
#: between two words of which one is longer than a letter (``đầu người|bình quân``, ``μικρογραφία|``: a link or image
#: option that lost its brackets), or two or more spaced pipes (a navigation bar ``A | B | C``)
_TABLE_PIPE = re.compile(r"\{\||\|\}|\|\||\|[-+]|^\s*\|")
_PARAM_PIPE = re.compile(r"\|\s*[\w-]+\s*=|(?:^|\s)\|(?=[^\s|])")
_GLUED_PIPE = re.compile(r"(\w+)\|(?=(\w+))")
_SPACED_PIPE = re.compile(r"\s\|(?=\s|$)")
#: HTML entities and tags left in text (``&amp;``, ``&#160;``, ``<span class=x>``, ``</div>``, ``<br/>``)
_RESIDUE_RE = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});|</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")

_WS = re.compile(r"[\s\u200b]+")  # every Unicode space (incl. no-break, thin) and zero-width space
_SPACE_BEFORE_PUNCT = re.compile(r" +([,.;:!?%)\]])")
_SPACE_AFTER_OPEN = re.compile(r"([(\[]) +")
_EMPTY_PARENS = re.compile(r"\(\s*[,;:.\u2013\u2014-]*\s*\)")
_LEADING_SEP_IN_PARENS = re.compile(r"\(\s*[,;:]+\s*")
_TRAILING_SEP_IN_PARENS = re.compile(r"\s*[,;:]+\s*\)")
_DOUBLE_COMMA = re.compile(r"[,;]\s*(?=[,;])")  # ",;" left where templates were removed
_SEP_BEFORE_DASH = re.compile(r"[,;]\s+(?=[\u2013\u2014] )")
_MAGIC = re.compile(r"__[^\W\d_a-z]+__")  # behaviour switches, also localised ones (__NOTOC__, __ΕΥΡΕΤΗΡΙΟ__)
# refs and comments are removed from the raw text first: an unbalanced bracket inside a ref otherwise
# makes the parser give up on the ref and leave its text in the prose
_RAW_REF_SELF = re.compile(r"<ref\b[^>]*/>", re.I)
_RAW_REF = re.compile(r"<ref\b[^>]*>.*?</ref\s*>", re.I | re.S)
_RAW_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
# ''Iliad'''s: an italic title followed by an apostrophe (MediaWiki shows "Iliad's"; the parser keeps the quotes)
_ITALIC_APOSTROPHE = re.compile(r"''([^'\n]{1,200})'''(?=s\b)")


#: the wiki names of the page being cleaned (:class:`~biaskit.scrape.siteinfo.SiteNames`; None: the names above)
_site_names = _siteinfo.CURRENT
# a page whose newlines were lost: headings run into the text ("... in 1800. == History == The town ...")
_HEADING_RUN = re.compile(r"(={2,6})[ \t]*([^=\n|{}\[\]<>]{1,120}?)[ \t]*\1(?!=)")
# after rendering: runs of 2+ apostrophes are bold/italic markup the parser could not pair (MediaWiki never shows them)
_STRAY_QUOTES = re.compile(r"'{2,}")
# after rendering: a citation template left open ("{{cite web |url=... " with no "}}"): shown as raw text, dropped to the line end
_BROKEN_CITE = re.compile(r"\{\{\s*(?:cite|citation|sfn|harv|efn|refn)\b[^{}\n]*(?:\}\}?|$)", re.I | re.M)

_FILE_START = re.compile(r"\[\[\s*:?\s*(?:file|image|media|datei|bild|soubor|plik|súbor|fichier)\s*:", re.I)


def strip_file_links(raw: str, start: re.Pattern | None = None) -> str:
    """Remove ``[[File:...]]`` links by bracket matching on the raw text.

    Captions may hold broken markup (e.g. an unbalanced bold quote) that makes the parser give up on the
    link and leave it as text. An unclosed link is removed to the end of the text. ``start`` (a
    :class:`~biaskit.scrape.siteinfo.SiteNames` ``file_link_start``) also finds the wiki's localised names.
    """
    out: list[str] = []
    pos = 0
    while True:
        m = _FILE_START.search(raw, pos)
        if start is not None:
            m2 = start.search(raw, pos)
            if m2 and (not m or m2.start() < m.start()):
                m = m2
        if not m:
            out.append(raw[pos:])
            return "".join(out)
        out.append(raw[pos : m.start()])
        depth, i = 0, m.start()
        while i < len(raw):
            if raw.startswith("[[", i):
                depth += 1
                i += 2
            elif raw.startswith("]]", i):
                depth -= 1
                i += 2
                if depth == 0:
                    break
            else:
                i += 1
        pos = i


_BRACES = re.compile(r"\{\{|\}\}|\{\||\|\}(?!\})")


def strip_silent_blocks(raw: str) -> str:
    """Cut out, on the raw text, top-level templates that show no prose (citations, infoboxes, navboxes...:
    :func:`~biaskit.scrape.wikitemplates.is_silent`) and tables (``{| ... |}``).

    The parser would drop them too; cutting them first saves most of its time. Unbalanced braces stop the
    cutting there (the parser sees the rest as it is).
    """
    out: list[str] = []
    pos = 0
    depth = 0
    start = 0
    kind = ""
    for m in _BRACES.finditer(raw):
        tok = m.group()
        if depth == 0:
            if tok == "{{":
                if raw.startswith("{{{", m.start()):  # a template argument: leave it to the parser
                    continue
                depth, start, kind = 1, m.start(), "t"
            elif tok == "{|" and (m.start() == 0 or raw[m.start() - 1] == "\n"):
                depth, start, kind = 1, m.start(), "table"
            continue
        if tok in ("{{", "{|"):
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                end = m.end()
                if kind == "table" or is_silent(raw[start + 2 : end]):
                    out.append(raw[pos:start])
                    pos = end
    out.append(raw[pos:])
    return "".join(out)


_NODES: list = []


def _nodes():
    if not _NODES:
        import mwparserfromhell.nodes

        _NODES.append(mwparserfromhell.nodes)
    return _NODES[0]


_LIST_LINE = re.compile(r"^[*#:;][^\n]*", re.M)


def _drop_list_line(m: re.Match) -> str:
    line = m.group()
    if line.count("{{") != line.count("}}") or line.count("[[") != line.count("]]") or "<" in line or "{|" in line:
        return line  # a construct that continues on the next lines: left to the parser
    return ""


def strip_list_lines(raw: str) -> str:
    """Empty the list, definition and indentation lines (``*``, ``#``, ``;``, ``:``) on the raw text: the
    renderer drops them anyway, and the parser need not build them. Lines whose markup goes on to the next
    line are kept for the parser."""
    return _LIST_LINE.sub(_drop_list_line, raw)


def is_interlanguage(prefix: str) -> bool:
    return bool(_INTERLANG.match(prefix))


def _render(code: Any) -> str:
    """Visible prose of a Wikicode object (recursive)."""
    n = _nodes()

    out: list[str] = []
    for node in code.nodes:
        if isinstance(node, n.Text):
            out.append(str(node.value))
        elif isinstance(node, n.Template):
            out.append(render_template(node, _render, lambda: "".join(out)))
        elif isinstance(node, (n.Comment, n.Argument)):
            continue
        elif isinstance(node, n.Heading):
            out.append("\n" + _LINE_DROP + "\n")
        elif isinstance(node, n.HTMLEntity):
            try:
                out.append(node.normalize())
            except Exception:  # an unknown entity name
                continue
        elif isinstance(node, n.Wikilink):
            out.append(_render_link(node))
        elif isinstance(node, n.ExternalLink):
            if node.brackets and node.title is not None:
                out.append(_render(node.title))
        elif isinstance(node, n.Tag):
            tag = str(node.tag).strip().lower()
            markup = node.wiki_markup
            if markup is not None and str(markup) in LIST_MARKUP:
                out.append("\n" + _LINE_DROP)
            elif tag in ("br", "hr"):
                out.append(" " if tag == "br" else "\n\n")
            elif tag in DROP_TAGS:
                continue
            elif node.contents is not None and not node.self_closing:
                out.append(_render(node.contents))
        else:  # unknown node types: keep their plain text
            out.append(str(node))
    return "".join(out)


def _render_link(node: Any) -> str:
    title = str(node.title).strip()
    inline = title.startswith(":")
    if inline:
        title = title[1:].strip()
    prefix, sep, rest = title.partition(":")
    pl = prefix.strip().lower()
    if sep:
        site = _site_names.get()
        if pl in DROP_LINK_NAMESPACES or (site is not None and site.is_drop_link(pl)):
            if not inline:
                return ""
            return _render(node.text) if node.text is not None else rest.strip()
        if is_interlanguage(pl) and not inline:
            return ""
    if node.text is not None:
        return _render(node.text)
    return html.unescape(title)  # [[35&nbsp;mm film]] shows "35 mm film"


def _split_heading_runs(raw: str) -> str:
    """Put headings that run into the text on lines of their own (a page whose newlines were lost): a heading is
    only a heading alone on its line, so ``text. == History == More text`` would otherwise keep its ``==``."""

    def fix(m: re.Match) -> str:
        a, b = m.start(), m.end()
        at_start = a == 0 or raw[a - 1] == "\n"
        at_end = b == len(raw) or raw[b] == "\n" or raw[b:].split("\n", 1)[0].strip() == ""
        if at_start and at_end:
            return m.group(0)  # already a heading line
        return f"\n{m.group(1)} {m.group(2).strip()} {m.group(1)}\n"

    return _HEADING_RUN.sub(fix, raw)


def normalize_space(text: str) -> str:
    """One line, single spaces, no space before punctuation or after an opening bracket."""
    s = text.replace("\n", " ").replace("\r", " ")
    s = _WS.sub(" ", s)
    for _ in range(2):  # each regex only runs when the characters it needs are there (same result, less time)
        before = s
        if "(" in s:
            s = _EMPTY_PARENS.sub("", s)
            s = _LEADING_SEP_IN_PARENS.sub("(", s)
            s = _TRAILING_SEP_IN_PARENS.sub(")", s)
            if "  " in s:
                s = _WS.sub(" ", s)
        if " " in s:
            s = _SPACE_BEFORE_PUNCT.sub(r"\1", s)
            if "(" in s or "[" in s:
                s = _SPACE_AFTER_OPEN.sub(r"\1", s)
        if "," in s or ";" in s:
            s = _DOUBLE_COMMA.sub("", s)
            s = _SEP_BEFORE_DASH.sub(" ", s)
        if s == before:
            break
    return s.strip()


def _is_nav_line(line: str) -> bool:
    """A navigation bar written as text: ``[[May]] | [[June]] | [[July]]`` (3+ short items between pipes).
    Not prose in any language; prose that holds a pipe (``f|S``) has no spaced item list."""
    if line.count("|") < 2:
        return False
    parts = line.split("|")
    return all(len(p.split()) <= 6 and not p.strip().endswith((".", "!", "?", ";")) for p in parts) and sum(1 for p in parts if p.strip()) >= 3


def clean_wikitext(wikitext: str, *, title: str = "", keep_marks: bool = False, ref_date: Any = None, site: Any = None) -> list[str]:
    """Clean one page's wikitext into prose paragraphs (one string each, single-spaced).

    Inline templates that carry prose are rendered (:mod:`biaskit.scrape.wikitemplates`). A template whose
    text cannot be produced leaves the mark :data:`DROPPED` when ``keep_marks`` (so that
    :func:`clean_sentences` can drop the sentences it breaks); without ``keep_marks`` the mark is removed.
    ``ref_date``: the date ages are computed at (``{{birth date and age}}``: a ``datetime.date``, an ISO date or
    timestamp string, or (y, m, d)); the scrape pipeline passes the revision's timestamp. None: no ages.

    Raises :class:`BiaskitError` E032 when mwparserfromhell cannot parse the text (callers count the page
    as skipped and name it).

    ``site`` (:class:`~biaskit.scrape.siteinfo.SiteNames`, e.g. from the dump's ``<siteinfo>``) names the wiki's
    own file and category namespaces, so ``[[Αρχείο:...|μικρογραφία|...]]`` and ``[[Thể loại:...]]`` are dropped
    like ``[[File:...]]`` and ``[[Category:...]]``.
    """
    import mwparserfromhell

    token = REFERENCE_DATE.set(_as_date(ref_date))
    site_token = _site_names.set(site)
    try:
        raw = _RAW_COMMENT.sub("", wikitext or "")
        if "==" in raw:
            raw = _split_heading_runs(raw)
        raw = strip_file_links(_RAW_REF.sub("", _RAW_REF_SELF.sub("", raw)), site.file_link_start if site is not None else None)
        raw = strip_list_lines(strip_silent_blocks(raw))
        if "'''s" in raw:
            raw = _ITALIC_APOSTROPHE.sub(r"''\1''{{'}}", raw)
        code = mwparserfromhell.parse(raw)
        text = _render(code)
    except Exception as exc:  # mwparserfromhell errors are rare but possible on pathological input
        raise BiaskitError(
            "E032",
            f"could not parse the wikitext of page {title!r}: {exc}",
            value=title,
            fix="the page is skipped and counted; report it if it looks like valid wikitext",
        ) from exc
    finally:
        REFERENCE_DATE.reset(token)
        _site_names.reset(site_token)
    text = _MAGIC.sub("", text)
    if "''" in text:
        text = _STRAY_QUOTES.sub("", text)
    if "{{" in text:
        text = _BROKEN_CITE.sub("", text)
    if not keep_marks:
        text = text.replace(DROPPED, "").replace(BROKEN, "")
    paragraphs: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped.strip(DROPPED + BROKEN + " \t"):  # blank, or only templates on their own line (infobox, navbox)
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        if stripped[0] in ":;" and not current:
            # an indent or definition marker that opens a paragraph is stripped (one after prose is punctuation
            # left where a formula or template was removed: "... written as; however, ...")
            stripped = stripped.lstrip(":; \t")
            if not stripped:
                continue
        if stripped.startswith(_LINE_DROP) or stripped[0] in "|!{}=*#" or _is_nav_line(stripped):
            # list items (also a literal * or # left at a line start), headings, leftover table rows: not running
            # prose; also ends a paragraph
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(stripped)
    if current:
        paragraphs.append(" ".join(current))
    out = []
    for p in paragraphs:
        p = normalize_space(p.replace(_LINE_DROP, " "))
        if p and not _is_nav_line(p):
            out.append(p)
    return out


def _as_date(value: Any) -> tuple[int, int, int] | None:
    """(y, m, d) of a date, an ISO date/timestamp string ("2016-01-19T20:18:31Z") or a tuple; None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, tuple):
        return tuple(int(x) for x in value)  # type: ignore[return-value]
    if hasattr(value, "year"):
        return (value.year, value.month, value.day)
    m = re.match(r"^(\d{4})-(\d{2})-(\d{2})", str(value).strip())
    if not m:
        raise BiaskitError("E005", "reference date for ages is not an ISO date", value=value, fix="pass e.g. 2016-01-19")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def is_markup_pipe(sentence: str) -> bool:
    """Whether a ``|`` of ``sentence`` is table or template markup (see :data:`_TABLE_PIPE` and the rules above it);
    a pipe in prose (``খাই |``, ``«Тіні | Світло»``, ``f|S``) is not."""
    if _TABLE_PIPE.search(sentence) or _PARAM_PIPE.search(sentence):
        return True
    if any(len(m.group(1)) > 1 or len(m.group(2)) > 1 for m in _GLUED_PIPE.finditer(sentence)):
        return True
    return len(_SPACED_PIPE.findall(sentence)) >= 2


def has_residue(sentence: str, site: Any = None) -> bool:
    """True when the sentence still carries wiki markup (never expected after :func:`clean_wikitext`).

    With ``site`` (:class:`~biaskit.scrape.siteinfo.SiteNames` of a non-English wiki) also the wiki's own
    namespace prefixes (``Κατηγορία:``, ``Tập tin:``); image options (``μικρογραφία|``, ``|200px``) hold a ``|``."""
    if any(r in sentence for r in RESIDUE) or _RESIDUE_RE.search(sentence) is not None:
        return True
    if "|" in sentence and is_markup_pipe(sentence):
        return True
    if sentence[:1] in "*#:;":  # a list or indent marker the cleaner did not remove
        return True
    # image options need a "|", which RESIDUE already catches; a namespace prefix needs a ":"
    return site is not None and ":" in sentence and site.prefix_residue.search(sentence) is not None


# --------------------------------------------------------------------------- sentence splitting

SPLITTERS = ("wiki", "senter", "parser", "sentencizer")


def load_splitter(
    language: str = "en",
    *,
    splitter: str = "wiki",
    model: str | None = None,
    abbreviations: frozenset = frozenset(),
    learn_from: str | Path | Sequence[str] | None = None,
):
    """A sentence splitter: the rule-based :class:`~biaskit.scrape.sentences.WikiSplitter` or a spaCy pipeline.

    ``wiki`` (default) needs nothing; ``senter``/``parser`` use a trained pipeline (``model``, default: the
    language's known asset, e.g. en_core_web_sm); ``sentencizer`` needs no model (``spacy.blank(language)`` +
    spaCy's rule-based sentencizer). ``abbreviations``: more words the ``wiki`` splitter never ends a sentence
    after (learnt from a dump: :mod:`biaskit.scrape.abbrev`).

    ``learn_from``: for a language the ``wiki`` splitter has no list for (Ukrainian, ...), a dump (path) or
    paragraphs of the edition's prose to learn its abbreviations from, exactly as ``scrape dump`` does
    (:func:`~biaskit.scrape.abbrev.learn_from_dump`); the splitter's ``learned`` holds what was learnt. Without it
    (and without ``abbreviations``) such a language gets a warning: the splitter will end sentences after the
    edition's abbreviations (``ім.``, ``проф.``).
    """
    check_choice(
        "E021", "unknown sentence splitter", splitter, SPLITTERS, fix="set `splitter:` in the domain config (or --splitter) to one of the options"
    )
    if splitter == "wiki":
        learned = None
        if learn_from is not None and needs_learning(language, splitter):
            if isinstance(learn_from, str | Path):
                site = site_names_from_dump(learn_from, language)
                learned = learn_from_dump(learn_from, language, site, clean=clean_wikitext)
            else:
                paras = list(learn_from)
                learned = Learned(learn_from_paragraphs(paras, language), 0, sum(len(p) for p in paras))
            abbreviations = frozenset(abbreviations) | learned.words
        elif needs_learning(language, splitter) and not abbreviations:
            log.warning(
                "the wiki splitter has no abbreviation list for %r and learnt none: it will end sentences after the "
                "edition's abbreviations; pass learn_from=<dump or paragraphs> to learn them as `scrape dump` does",
                language,
            )
        nlp = WikiSplitter(language, extra_abbreviations=abbreviations)
        nlp.learned = learned
        return nlp
    spacy = require("spacy", "scrape", "sentence splitting")
    if splitter == "sentencizer":
        try:
            nlp = spacy.blank(language)
        except Exception as exc:
            raise BiaskitError(
                "E021", f"spaCy has no language {language!r}", value=language, fix="use a spaCy language code (en, cs, pl, sk, de, ...)"
            ) from exc
        nlp.add_pipe("sentencizer")
        return nlp

    nlp = load_spacy(model or language)
    if splitter == "senter" and "senter" in nlp.component_names:
        keep = {"senter"} | ({"tok2vec"} if "tok2vec" in nlp.pipe_names else set())
        nlp.enable_pipe("senter")
        for name in list(nlp.pipe_names):
            if name not in keep:
                nlp.disable_pipe(name)
    else:
        keep = {"tok2vec", "parser", "senter", "sentencizer"}
        for name in list(nlp.pipe_names):
            if name not in keep:
                nlp.disable_pipe(name)
        if not any(p in nlp.pipe_names for p in ("parser", "senter", "sentencizer")):
            nlp.add_pipe("sentencizer")
    return nlp


def split_sentences(paragraphs: Sequence[str], nlp, *, batch_size: int = 64) -> list[str]:
    """Sentences of the paragraphs, in order, each whitespace-normalised."""
    out: list[str] = []
    if hasattr(nlp, "split"):  # the rule-based splitter cuts single-spaced paragraphs at spaces: nothing to normalise
        for p in paragraphs:
            out.extend(nlp.split(p))
        return out
    for doc in nlp.pipe(paragraphs, batch_size=batch_size):
        for sent in doc.sents:
            s = normalize_space(sent.text)
            if s:
                out.append(s)
    return out


def clean_sentences(wikitext: str, nlp, *, title: str = "", ref_date: Any = None, site: Any = None) -> tuple[list[str], int]:
    """One page's wikitext -> (clean sentences, number of sentences dropped because a template in them could
    not be rendered: ``template_dropped``). ``ref_date``, ``site``: see :func:`clean_wikitext`."""
    out: list[str] = []
    dropped = 0
    for s in split_sentences(clean_wikitext(wikitext, title=title, keep_marks=True, ref_date=ref_date, site=site), nlp):
        if DROPPED not in s and BROKEN not in s:
            out.append(s)
            continue
        kept, broken = resolve_dropped(s)
        if broken:
            dropped += 1
        elif kept:
            kept = normalize_space(kept)
            if kept:
                out.append(kept)
    return out, dropped
