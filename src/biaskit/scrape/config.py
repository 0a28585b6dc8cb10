"""Domains and groups as data: which pages belong to which group, and which terms to look for.

A domain config is a YAML (or JSON) file::

    name: my-domains            # free text, recorded in the manifest
    language: en                # BCP-47 code of the wiki's language
    splitter: wiki              # wiki (rule-based, default) | senter | parser | sentencizer
    spacy_model: null           # e.g. cs_core_news_sm; default: the language's known pipeline
    license: CC BY-SA 4.0
    rule: {window: 8, n_first: 5, min_words: 6, dedupe: domain}   # or {preset: bold} (see prompts.PRESETS)
    domains:
      profession:
        term_case: lower        # title-derived terms are lower-cased ("Astronomer" -> "astronomer")
        seeds:                  # domain seeds: each linked "List of X" page becomes group X (API only)
          - lists_of: Lists_of_occupations
        groups:
          scientific_occupations:
            pages: [Astronomer, Astronaut]      # explicit page titles
            terms: [astronomer, astronaut]      # optional: terms for all pages of the group
          american_actresses:
            seeds:                              # pages linked from a page / members of a category
              - links: List_of_American_film_actresses
              - category: Category:American film actresses

Without ``terms`` a page's term is its title without a trailing ``(...)`` qualifier (person names,
professions). Terms match case-insensitively as whole words. ``max_pages`` (group or domain) caps the
pages per group (in seed order).
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from biaskit.errors import BiaskitError, check_choice, require
from biaskit.inputs import load_yaml, loads_json
from biaskit.io import read_text_utf8
from biaskit.log import get_logger
from biaskit.registry import is_path_spec, plugin_loader, scrape_presets
from biaskit.scrape.clean import SPLITTERS
from biaskit.scrape.prompts import NO_SPACE_LANGUAGES, RULE_KEYS, TERM_MATCHES, WORD_UNITS, PromptRule, preset_rule

log = get_logger("scrape")

SEED_KINDS = ("links", "category", "lists_of")
_GROUP_KEYS = {"pages", "seeds", "terms", "max_pages"}
_DOMAIN_KEYS = {"groups", "seeds", "term_case", "max_pages"}
_TOP_KEYS = {"name", "language", "splitter", "spacy_model", "license", "rule", "domains", "description", "term_match", "words"}


@dataclass
class Group:
    name: str
    pages: list[str] = field(default_factory=list)
    seeds: list[dict[str, str]] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    max_pages: int | None = None


@dataclass
class Domain:
    name: str
    groups: dict[str, Group] = field(default_factory=dict)
    seeds: list[dict[str, str]] = field(default_factory=list)
    term_case: str = "keep"
    max_pages: int | None = None


@dataclass
class DomainConfig:
    domains: dict[str, Domain]
    name: str = ""
    language: str = "en"
    splitter: str = "wiki"
    spacy_model: str | None = None
    license: str = "CC BY-SA 4.0"
    rule: PromptRule = field(default_factory=PromptRule)
    source: str = ""
    term_match: str = "exact"  # exact | prefix | lemma (simplemma): how group terms are found in a sentence
    words: str = "space"  # space | char: what the rule counts as a word (char: default for ja, zh, th, ...)
    language_named: bool = True  # the config names its language (else a dump's <siteinfo> language is used)
    words_named: bool = True  # the config names its words unit (else it follows the language)

    def settings(self) -> dict[str, object]:
        return {
            "name": self.name,
            "language": self.language,
            "splitter": self.splitter,
            "spacy_model": self.spacy_model,
            "rule": self.rule.as_dict(),
            "source": self.source,
            "term_match": self.term_match,
            "words": self.words,
        }

    def use_language(self, code: str) -> None:
        """Take ``code`` as the language (a dump's own, when the config names none); the words unit follows it
        unless the config names one."""
        self.language = code
        if not self.words_named:
            self.words = "char" if code.split("-")[0] in NO_SPACE_LANGUAGES else "space"
        self.apply_language()

    def apply_language(self) -> None:
        """Put the config's ``term_match``, ``words`` and ``language`` into its prompt rule."""
        self.rule = replace(self.rule, term_match=self.term_match, words=self.words, language=self.language.split("-")[0])


@dataclass(frozen=True)
class Assignment:
    """One page's membership in a group, with the terms to look for on it."""

    domain: str
    group: str
    terms: tuple[str, ...]


def _err(what: str, value: Any, fix: str, where: str) -> BiaskitError:
    return BiaskitError("E021", f"{what} in domain config {where}", value=value, fix=fix)


def _str_list(v: Any, what: str, where: str) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _err(f"{what} must be a list of strings", v, f"write {what} as a YAML list, e.g. [Astronomer, Astronaut]", where)
    out = []
    for x in v:
        if not x.strip():
            raise _err(f"{what} has an empty entry", v, "remove the empty entry", where)
        if x != x.strip():
            raise _err(f"{what} entry has surrounding whitespace (it could never match)", x, f"write {x.strip()!r}", where)
        out.append(x)
    dups = sorted({x for x in out if out.count(x) > 1})
    if dups:
        raise _err(f"{what} lists an entry twice", dups, "remove the duplicates", where)
    return out


def _seeds(v: Any, where: str, allowed: tuple[str, ...]) -> list[dict[str, str]]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise _err("seeds must be a list", v, "e.g. seeds: [{links: List_of_American_film_actresses}]", where)
    out = []
    for s in v:
        kinds = [k for k in s if k in allowed] if isinstance(s, dict) else []
        ok = isinstance(s, dict) and len(kinds) == 1 and set(s) <= {*allowed, "match"} and all(isinstance(x, str) for x in s.values())
        if not ok:
            raise BiaskitError(
                "E021",
                f"invalid seed in domain config {where}",
                value=s,
                options=allowed,
                fix="each seed is one key: {links: PAGE}, {category: Category:NAME}"
                + (" or {lists_of: PAGE}" if "lists_of" in allowed else "")
                + ", optionally with match: REGEX to keep only matching titles",
            )
        if "match" in s:
            try:
                re.compile(s["match"])
            except re.error as exc:
                raise _err(f"seed match is not a valid regular expression ({exc})", s["match"], "fix the regex", where) from exc
        out.append({kinds[0]: s[kinds[0]], **({"match": s["match"]} if "match" in s else {})})
    return out


def _max(v: Any, where: str) -> int | None:
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise _err("max_pages must be a positive integer", v, "e.g. max_pages: 100", where)
    return v


def parse_config(data: object, *, source: str = "<dict>") -> DomainConfig:
    """Validate a config mapping (see module docs) and build a :class:`DomainConfig`."""
    if not isinstance(data, dict):
        raise _err("the top level must be a mapping", type(data).__name__, "see docs/scrape.md for the format", source)
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise BiaskitError(
            "E021", f"unknown key(s) in domain config {source}", value=unknown, options=sorted(_TOP_KEYS), fix="remove or rename the keys"
        )
    doms = data.get("domains")
    if not isinstance(doms, dict) or not doms:
        raise _err("`domains` must be a non-empty mapping", doms, "add domains: {NAME: {groups: {...}}}", source)
    rule = _parse_rule(data.get("rule") or {}, source)
    domains: dict[str, Domain] = {}
    for dname, d in doms.items():
        dom = _parse_domain(dname, d, source)
        domains[dom.name] = dom
    splitter, lang, term_match, words = _parse_text_settings(data, source)
    cfg = DomainConfig(
        domains=domains,
        name=str(data.get("name", "")),
        language=lang,
        splitter=splitter,
        spacy_model=data.get("spacy_model"),
        license=str(data.get("license", "CC BY-SA 4.0")),
        rule=rule,
        source=source,
        term_match=term_match,
        words=words,
        language_named="language" in data,
        words_named="words" in data,
    )
    cfg.apply_language()
    return cfg


def _parse_rule(rule_d: Any, source: str) -> PromptRule:
    """The config's ``rule:`` (a preset and/or the rule's settings)."""
    if not isinstance(rule_d, dict) or set(rule_d) - set(RULE_KEYS):
        raise BiaskitError(
            "E021",
            f"invalid `rule` in domain config {source}",
            value=rule_d,
            options=list(RULE_KEYS),
            fix="e.g. rule: {window: 8, n_first: 5, min_words: 6} or rule: {preset: bold}",
        )
    return preset_rule(**rule_d)


def _parse_domain(dname: Any, d: Any, source: str) -> Domain:
    """One entry of ``domains:``: its settings, seeds and groups."""
    w = f"{source} (domain {dname!r})"
    if d is None:
        d = {}
    if not isinstance(d, dict):
        raise _err("a domain must be a mapping", d, "give it groups: {...} and/or seeds: [...]", w)
    unknown = sorted(set(d) - _DOMAIN_KEYS)
    if unknown:
        raise BiaskitError("E021", f"unknown key(s) in {w}", value=unknown, options=sorted(_DOMAIN_KEYS), fix="remove or rename the keys")
    case = d.get("term_case", "keep")
    check_choice("E021", f"invalid term_case in {w}", case, ("keep", "lower"), fix="use keep or lower", options=["keep", "lower"])
    dom = Domain(str(dname), seeds=_seeds(d.get("seeds"), w, SEED_KINDS), term_case=case, max_pages=_max(d.get("max_pages"), w))
    groups = d.get("groups") or {}
    if not isinstance(groups, dict):
        raise _err("groups must be a mapping", groups, "groups: {GROUP: {pages: [...]}}", w)
    for gname, g in groups.items():
        grp = _parse_group(dname, gname, g, source)
        dom.groups[grp.name] = grp
    if not dom.groups and not dom.seeds:
        raise _err("a domain needs groups or seeds", dname, "add groups: {...} or seeds: [{lists_of: PAGE}]", w)
    return dom


def _parse_group(dname: Any, gname: Any, g: Any, source: str) -> Group:
    """One group of a domain: a mapping, or a list of its pages."""
    wg = f"{source} (group {dname}/{gname})"
    if g is None:
        g = {}
    if isinstance(g, list):
        g = {"pages": g}
    if not isinstance(g, dict):
        raise _err("a group must be a mapping or a list of pages", g, "e.g. {pages: [Astronomer]}", wg)
    unknown = sorted(set(g) - _GROUP_KEYS)
    if unknown:
        raise BiaskitError("E021", f"unknown key(s) in {wg}", value=unknown, options=sorted(_GROUP_KEYS), fix="remove or rename the keys")
    grp = Group(
        str(gname),
        pages=_str_list(g.get("pages"), "pages", wg),
        seeds=_seeds(g.get("seeds"), wg, ("links", "category")),
        terms=_str_list(g.get("terms"), "terms", wg),
        max_pages=_max(g.get("max_pages"), wg),
    )
    if not grp.pages and not grp.seeds:
        raise _err("a group needs pages or seeds", gname, "add pages: [...] or seeds: [{links: PAGE}]", wg)
    return grp


def _parse_text_settings(data: dict, source: str) -> tuple[str, str, str, str]:
    """The config's ``splitter``, ``language``, ``term_match`` and ``words`` (checked in that order; term_match
    lemma needs simplemma with a dictionary for the language)."""
    splitter = data.get("splitter", "wiki")
    check_choice(
        "E021",
        f"unknown splitter in domain config {source}",
        splitter,
        SPLITTERS,
        fix="wiki (rule-based, fast, default), senter or parser (trained spaCy pipeline) or sentencizer (spaCy rules)",
    )
    lang = data.get("language", "en")
    if not isinstance(lang, str) or not re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]+)*", lang):
        raise _err("language must be a BCP-47 code", lang, "e.g. language: en", source)

    term_match = data.get("term_match", "exact")
    check_choice(
        "E230",
        f"unknown term_match in domain config {source}",
        term_match,
        TERM_MATCHES,
        fix="term_match: exact (default), prefix, or lemma (inflected forms, via simplemma)",
    )
    words = data.get("words", "char" if lang.split("-")[0] in NO_SPACE_LANGUAGES else "space")
    check_choice(
        "E231",
        f"unknown words unit in domain config {source}",
        words,
        WORD_UNITS,
        fix="words: space (split at spaces, as BOLD) or char (the character rule for ja, zh, th)",
    )
    if term_match == "lemma":
        require("simplemma", "scrape", "term_match: lemma")  # a clear error here beats one per page
        from simplemma.strategies.dictionaries.dictionary_factory import DefaultDictionaryFactory

        try:
            DefaultDictionaryFactory().get_dictionary(lang.split("-")[0])
        except (ValueError, KeyError) as exc:
            raise BiaskitError(
                "E232", "simplemma has no lemma dictionary for this language", value=lang, fix="use term_match: prefix or exact for this language"
            ) from exc
    return splitter, lang, term_match, words


#: the folder (of package ``biaskit.data``) whose ``*.yaml`` files are the shipped presets, each named by its
#: file's stem: a file put there is a preset, no list to edit
SHIPPED_FOLDER = "bold"
#: the entry-point group through which other packages add presets: ``name = "package:path/inside/it.yaml"``
PRESET_ENTRY_POINTS = "biaskit.scrape_presets"


def _register_shipped_presets() -> None:
    base = Path(__file__).resolve().parent.parent / "data" / SHIPPED_FOLDER
    for f in sorted(base.glob("*.yaml")):
        scrape_presets.register(f.stem, f"biaskit.data:{SHIPPED_FOLDER}/{f.name}", help="shipped with biaskit")


_register_shipped_presets()
scrape_presets.add_loader(plugin_loader(scrape_presets, PRESET_ENTRY_POINTS))  # plugins on the first lookup


def preset_names() -> list[str]:
    """The scrape presets: the shipped ones and those of installed plugins (``biaskit.scrape_presets``)."""
    return scrape_presets.names()


def shipped_config_path(name: str) -> Path:
    """The YAML file of the preset ``name``: its ``"package:path"`` resolved inside the package's folder(s) (the
    package is found, not imported). E021 for an unknown name or a file the package does not hold."""
    check_choice(
        "E021",
        "unknown scrape preset (shipped domain config)",
        name,
        preset_names(),
        fix="pass a path to your own YAML config or one of the preset names",
        options=preset_names(),
    )
    target = str(scrape_presets.target(name))
    package, _, rel = target.partition(":")
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    for root in list(spec.submodule_search_locations or []) if spec is not None else []:
        if (Path(root) / rel).is_file():
            return Path(root) / rel
    raise BiaskitError(
        "E021",
        f"the scrape preset {name!r} of {scrape_presets.origin(name)} names a file its package does not hold",
        value=target,
        fix=f'ship the YAML file inside the package and point the entry point at "package:path/inside/it.yaml" ({PRESET_ENTRY_POINTS})',
    )


def load_config(path_or_name: str | os.PathLike | dict, *, rule_overrides: dict | None = None) -> DomainConfig:
    """Load a config file (YAML/JSON), a shipped name (``bold``, ``demo``) or a mapping.

    ``rule_overrides`` (None values ignored) change the config's rule; a ``preset`` among them replaces the
    config's rule with that preset first (the other overrides then apply on top).
    """
    if isinstance(path_or_name, dict):
        data, src = path_or_name, "<dict>"
    else:
        p = Path(path_or_name)
        if not is_path_spec(str(path_or_name)) and str(path_or_name) in scrape_presets:
            # a shipped name is never shadowed by a local file or folder of that name (e.g. `demo --out demo`)
            p = shipped_config_path(str(path_or_name))
        if not p.is_file():
            raise BiaskitError(
                "E021",
                "domain config not found" + (" (it is a folder)" if p.is_dir() else ""),
                value=str(path_or_name),
                options=preset_names(),
                fix="pass the path of a YAML/JSON domain config (--config-file FILE, or a path with a / or a suffix) or a shipped name",
            )

        text = read_text_utf8(p, "domain config")  # E150 with the line of the first bad byte

        try:  # the input layer: depth limit (E380), BOM, the file and line in the error
            if p.suffix == ".json":
                data = loads_json(text, source=str(p), nonfinite=True, code="E021", fix="fix the syntax")
            else:
                data = load_yaml(text, source=str(p), code="E021", fix="fix the syntax")
        except BiaskitError:
            raise
        except Exception as exc:
            raise BiaskitError("E021", f"domain config {p} is not valid YAML/JSON: {exc}", value=str(p), fix="fix the syntax") from exc
        src = str(p)
    cfg = parse_config(data, source=src)
    over = {k: v for k, v in (rule_overrides or {}).items() if v is not None}
    if over.get("preset"):
        cfg.rule = preset_rule(**over)
    elif over:
        d = cfg.rule.as_dict()
        if "window" in over and "within" not in over:
            d["within"] = "window"  # an explicit window is what counts
        d.update(over)
        cfg.rule = PromptRule(**d)
    cfg.apply_language()
    return cfg


def title_term(title: str, case: str = "keep") -> str:
    """A page title as a term: underscores -> spaces, trailing ``(qualifier)`` dropped."""
    t = re.sub(r"\s*\([^)]*\)\s*$", "", title.replace("_", " ")).strip()
    return t.lower() if case == "lower" else t


def snake(title: str) -> str:
    """``List of scientific occupations`` -> ``scientific_occupations``."""
    t = re.sub(r"^(lists?|index) of ", "", title.replace("_", " ").strip(), flags=re.I)
    return re.sub(r"[^\w]+", "_", t).strip("_")


def seed_kind(seed: dict[str, str]) -> tuple[str, str]:
    kind = next(k for k in seed if k != "match")
    return kind, seed[kind]


def resolve_assignments(
    cfg: DomainConfig,
    *,
    links: Callable[[str], Iterable[str]] | None = None,
    category: Callable[[str], Iterable[str]] | None = None,
    normalize: Callable[[str], str] = lambda t: t,
) -> tuple[dict[str, list[Assignment]], dict[str, int]]:
    """Expand seeds into pages: ``{page title: [Assignment, ...]}`` plus per-group page counts.

    ``links(page)`` returns the article titles a page links to; ``category(cat)`` the members of a
    category. A seed kind whose function is missing raises E021 (e.g. category seeds with a dump that
    has no category links).
    """
    out: dict[str, list[Assignment]] = {}
    per_group: dict[str, int] = {}
    missing_seeds: list[str] = []
    discovered: set[str] = set()

    def need(fn, kind):
        if fn is None:
            raise BiaskitError(
                "E021",
                f"seed kind {kind!r} cannot be resolved with this source",
                value=kind,
                fix="list the pages explicitly (pages: [...]) or scrape through the API (biaskit scrape api)",
            )
        return fn

    for dom in cfg.domains.values():
        groups = dict(dom.groups)
        for seed in dom.seeds:
            kind, page = seed_kind(seed)
            if kind == "lists_of":
                for t in need(links, "links")(page):
                    if re.match(r"^lists? of ", t, re.I) and snake(t) not in groups and (not seed.get("match") or re.search(seed["match"], t)):
                        groups[snake(t)] = Group(snake(t), seeds=[{"links": t}], max_pages=dom.max_pages)
                        discovered.add(snake(t))
            elif kind == "links":
                groups.setdefault(snake(page), Group(snake(page), seeds=[{"links": page}]))
            else:
                groups.setdefault(snake(page.split(":", 1)[-1]), Group(snake(page.split(":", 1)[-1]), seeds=[{"category": page}]))
        for g in groups.values():
            titles: list[str] = list(g.pages)
            for seed in g.seeds:
                kind, page = seed_kind(seed)
                fn = need(links, "links") if kind == "links" else need(category, "category")
                try:
                    found = list(fn(page))
                except BiaskitError as exc:
                    if exc.code != "E033" or g.name not in discovered:
                        raise  # a seed the user named must exist
                    missing_seeds.append(page)  # a list page discovered through lists_of that is gone: counted skip
                    continue
                if "match" in seed:
                    found = [t for t in found if re.search(seed["match"], t)]
                log.info("seed %s %r -> %d pages for %s/%s", kind, page, len(found), dom.name, g.name)
                titles.extend(found)
            cap = g.max_pages or dom.max_pages
            seen: list[str] = []
            for t in titles:
                t = normalize(t)
                if t and t not in seen:
                    seen.append(t)
            if cap:
                seen = seen[:cap]
            per_group[f"{dom.name}/{g.name}"] = len(seen)
            for t in seen:
                terms = tuple(g.terms) if g.terms else (title_term(t, dom.term_case),)
                out.setdefault(t, []).append(Assignment(dom.name, g.name, terms))
    if missing_seeds:
        log.warning("%d discovered list pages not found (skipped): %s", len(missing_seeds), ", ".join(missing_seeds[:10]))
    return out, per_group


def cap_pages(cfg: DomainConfig, max_pages: int | None) -> DomainConfig:
    """Cap every group at ``max_pages`` pages (for trial runs); None leaves the config as it is."""
    if max_pages is None:
        return cfg
    if not isinstance(max_pages, int) or max_pages < 1:
        raise BiaskitError("E005", "max pages per group must be a positive integer", value=max_pages, fix="e.g. --max-pages 20")
    for dom in cfg.domains.values():
        dom.max_pages = min(dom.max_pages or max_pages, max_pages)
        for g in dom.groups.values():
            g.max_pages = min(g.max_pages or max_pages, max_pages)
    return cfg
