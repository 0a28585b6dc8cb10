"""Streaming reader for MediaWiki ``pages-articles`` XML dumps (``.xml`` or ``.xml.bz2``).

Pages are read one at a time with ``xml.etree.ElementTree.iterparse`` (memory stays flat for multi-GB
dumps); elements are cleared as soon as a page is yielded. Any export schema version works (the XML
namespace is read from the root element). A malformed or truncated dump raises E032 naming the file,
the position and the last good page, after every page before it has been yielded.
"""

from __future__ import annotations

import bz2
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from biaskit.errors import BiaskitError


@dataclass
class Page:
    """One page's latest text with its provenance."""

    title: str
    page_id: int | None
    revision_id: int | None
    timestamp: str | None
    text: str
    ns: int = 0
    redirect: str | None = None
    wiki: str = ""
    retrieved_at: str | None = None
    license: str = "CC BY-SA 4.0"
    requested: list[str] = field(default_factory=list)  # titles asked for that led here (redirects)


@dataclass
class SiteInfo:
    dbname: str = ""
    sitename: str = ""
    base: str = ""


def _open(path: Path):
    if str(path).endswith(".bz2"):
        return bz2.open(path, "rb")
    return open(path, "rb")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def dump_wiki_name(path: str | os.PathLike, site: SiteInfo | None = None) -> str:
    name = Path(path).name
    return f"{site.dbname}:{name}" if site and site.dbname else name


def iter_dump(
    path: str | os.PathLike, *, namespaces: tuple[int, ...] | None = (0,), include_redirects: bool = False, site: SiteInfo | None = None
) -> Iterator[Page]:
    """Yield the pages of a dump (namespace 0 by default, redirects skipped unless asked for).

    ``site`` (optional) is filled from the dump's ``<siteinfo>``.
    """
    p = Path(path)
    if not p.is_file():
        raise BiaskitError("E003", "dump file not found", value=str(p), fix="check the path of the pages-articles .xml/.xml.bz2 file")
    with _open(p) as fh:
        yield from iter_dump_file(fh, p, namespaces=namespaces, include_redirects=include_redirects, site=site)


def iter_dump_file(
    fh, p: Path, *, namespaces: tuple[int, ...] | None = (0,), include_redirects: bool = False, site: SiteInfo | None = None
) -> Iterator[Page]:
    """:func:`iter_dump` on an open binary file (``p`` names it in errors), e.g. one stream of a multistream dump."""
    last = None
    try:
        ctx = ET.iterparse(fh, events=("start", "end"))
        root = None
        in_rev = False
        cur: dict = {}
        for event, el in ctx:
            tag = _local(el.tag)
            if root is None and event == "start":
                root = el
                if tag != "mediawiki":
                    raise BiaskitError(
                        "E032",
                        f"{p.name} is not a MediaWiki XML export (root element <{tag}>)",
                        value=str(p),
                        fix="give a pages-articles dump (.xml or .xml.bz2) from dumps.wikimedia.org or Special:Export",
                    )
                continue
            if event == "start":
                if tag == "page":
                    cur = {"redirect": None}
                    in_rev = False
                elif tag == "revision":
                    in_rev = True
                continue
            # end events
            if tag == "siteinfo":
                if site is not None:
                    for child in el:
                        c = _local(child.tag)
                        if c in ("dbname", "sitename", "base"):
                            setattr(site, c, (child.text or "").strip())
                assert root is not None  # the first start event set it
                root.clear()
            elif tag == "title" and not in_rev:
                cur["title"] = el.text or ""
            elif tag == "ns" and not in_rev:
                cur["ns"] = _int(el.text)
            elif tag == "id":
                if in_rev:
                    cur.setdefault("revision_id", _int(el.text))
                elif "page_id" not in cur:
                    cur["page_id"] = _int(el.text)
            elif tag == "redirect" and not in_rev:
                cur["redirect"] = el.get("title")
            elif tag == "timestamp" and in_rev:
                cur["timestamp"] = el.text
            elif tag == "text" and in_rev:
                cur["text"] = el.text or ""
            elif tag == "revision":
                in_rev = False
            elif tag == "page":
                ns = cur.get("ns", 0)
                page = Page(
                    title=cur.get("title", ""),
                    page_id=cur.get("page_id"),
                    revision_id=cur.get("revision_id"),
                    timestamp=cur.get("timestamp"),
                    text=cur.get("text", ""),
                    ns=ns if ns is not None else 0,
                    redirect=cur.get("redirect"),
                )
                assert root is not None
                root.clear()  # free the finished page
                last = page.title
                if namespaces is not None and page.ns not in namespaces:
                    continue
                if page.redirect and not include_redirects:
                    continue
                yield page
    except ET.ParseError as exc:
        after = f"after page {last!r}" if last else "before the first page"
        raise BiaskitError(
            "E032", f"malformed dump {p.name} at line {exc.position[0]}, column {exc.position[1]} ({after}): {exc}", value=str(p), fix=_TRUNCATED_FIX
        ) from exc
    except (EOFError, OSError) as exc:
        after = f"after page {last!r}" if last else "before the first page"
        raise BiaskitError("E032", f"truncated or unreadable dump {p.name} ({after}): {exc}", value=str(p), fix=_TRUNCATED_FIX) from exc


_TRUNCATED_FIX = (
    "re-download the dump and check it against the dump's md5sums/sha1sums file; `biaskit scrape dump` "
    "reads the whole file in its first pass, so it writes nothing from a dump that does not read to the end"
)


def read_redirects(path: str | os.PathLike, *, namespaces: tuple[int, ...] | None = (0,)) -> dict[str, str]:
    """Map of redirect title -> target title (one cheap pass over the dump)."""
    out: dict[str, str] = {}
    for page in iter_dump(path, namespaces=namespaces, include_redirects=True):
        if page.redirect:
            out[page.title] = page.redirect
    return out


def resolve_title(title: str, redirects: dict[str, str], max_hops: int = 5) -> str:
    """Follow redirects (at most ``max_hops``, so a loop cannot hang)."""
    seen = {title}
    for _ in range(max_hops):
        nxt = redirects.get(title)
        if nxt is None or nxt in seen:
            break
        seen.add(nxt)
        title = nxt
    return title


def normalize_title(title: str) -> str:
    """MediaWiki title normalisation for first-letter wikis: underscores -> spaces, first letter upper."""
    t = " ".join(title.replace("_", " ").split())
    return t[:1].upper() + t[1:] if t else t
