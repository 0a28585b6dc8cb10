"""Multistream dumps: ``pages-articles-multistream.xml.bz2`` + its index, read stream by stream in parallel.

Wikimedia's multistream dump is a concatenation of independent bzip2 streams: the first holds the XML head
(``<mediawiki>`` and ``<siteinfo>``), each following one holds up to 100 ``<page>`` elements, the last closes
``</mediawiki>``. The index (``...-multistream-index.txt.bz2``) has one line per page, ``offset:page_id:title``,
where ``offset`` is the byte position of the stream that holds the page. So any stream can be decompressed and
parsed alone: :func:`stream_spans` lists them, :func:`read_stream` reads the compressed bytes of one (cheap, in
the driver), :func:`iter_stream_pages` parses them (in a worker process or a Ray task).

:func:`write_multistream` builds such a dump and index from any dump (tests, and to try the parallel path on the
bundled dumps).
"""

from __future__ import annotations

import bz2
import logging
import os
import re
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

from biaskit.errors import BiaskitError
from biaskit.output import atomic_path
from biaskit.scrape.dump import Page, iter_dump_file


def find_index(dump: str | os.PathLike) -> Path | None:
    """The index next to a multistream dump (Wikimedia's name: ``X-multistream.xml.bz2`` ->
    ``X-multistream-index.txt.bz2``; also ``.txt``), or None."""
    p = Path(dump)
    name = p.name
    for suffix in (".xml.bz2", ".xml"):
        if name.endswith(suffix):
            stem = name[: -len(suffix)]
            for cand in (f"{stem}-index.txt.bz2", f"{stem}-index.txt"):
                if (p.parent / cand).is_file():
                    return p.parent / cand
    return None


def read_index(index: str | os.PathLike) -> list[int]:
    """The sorted distinct stream offsets of an index file (``offset:page_id:title`` lines, ``.bz2`` or plain)."""
    p = Path(index)
    if not p.is_file():
        raise BiaskitError(
            "E003",
            "multistream index not found",
            value=str(p),
            fix="give the ...-multistream-index.txt.bz2 that came with the dump (or leave --index out)",
        )
    opener = bz2.open if p.name.endswith(".bz2") else open
    offsets: set[int] = set()
    try:
        with opener(p, "rt", encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                head = line.split(":", 1)[0]
                if not head.isdigit():
                    raise BiaskitError(
                        "E233",
                        f"line {n} of the multistream index {p.name} is not offset:page_id:title",
                        value=line[:80],
                        fix="give the index file that belongs to the dump (…-multistream-index.txt.bz2)",
                    )
                offsets.add(int(head))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise BiaskitError(
            "E233",
            f"unreadable multistream index {p.name}: {exc}",
            value=str(p),
            fix="re-download the index and check it against the dump's checksums",
        ) from exc
    if not offsets:
        raise BiaskitError("E233", f"the multistream index {p.name} is empty", value=str(p), fix="give the index that belongs to the dump")
    return sorted(offsets)


def stream_spans(dump: str | os.PathLike, offsets: list[int]) -> list[tuple[int, int]]:
    """(start, end) byte spans of the page streams: from each offset to the next (the last to the end of the file).

    The index is cross-checked against the streams, so that no page is left out: the bytes before its first offset
    (normally the head stream alone) are read too when they hold pages, i.e. when the head stream also holds
    pages or the index lacks the lines of the first page streams (a warning says how many pages). A span that
    covers several streams (the index lacks a stream in the middle) is read whole (bzip2 streams concatenate)."""
    size = Path(dump).stat().st_size
    if offsets[-1] >= size:
        raise BiaskitError(
            "E233",
            f"the index points past the end of {Path(dump).name} (offset {offsets[-1]}, size {size})",
            value=offsets[-1],
            fix="the index belongs to another dump: give the matching one",
        )
    ends = [*offsets[1:], size]
    spans = list(zip(offsets, ends))
    if offsets[0] > 0:
        head = read_stream(dump, (0, offsets[0]))
        try:
            n = bz2.decompress(head).count(b"<page>")
        except (OSError, ValueError, EOFError) as exc:
            raise BiaskitError(
                "E385",
                f"the bytes before the first stream the index names (offset {offsets[0]}) of {Path(dump).name} are not whole bzip2 streams: {exc}",
                value=offsets[0],
                fix="the index does not match the dump: give the index that came with it",
            ) from exc
        if n:
            logging.getLogger("biaskit").warning(
                "%s: %d page(s) lie before the first stream the index names (offset %d): a head stream holding pages, "
                "or streams missing from the index; they are read too",
                Path(dump).name,
                n,
                offsets[0],
            )
            spans.insert(0, (0, offsets[0]))
    return spans


def read_stream(dump: str | os.PathLike, span: tuple[int, int]) -> bytes:
    with open(dump, "rb") as fh:
        fh.seek(span[0])
        return fh.read(span[1] - span[0])


_CLOSE = re.compile(rb"</mediawiki>\s*$")


def iter_stream_pages(
    data: bytes, name: str = "stream", *, include_redirects: bool = False, namespaces: tuple[int, ...] | None = (0,)
) -> Iterator[Page]:
    """Pages of one compressed stream (a run of ``<page>`` elements; the last stream's ``</mediawiki>`` is allowed)."""
    try:
        xml = bz2.decompress(data)
    except (OSError, ValueError, EOFError) as exc:
        raise BiaskitError(
            "E032",
            f"stream {name} of the multistream dump is not a whole bzip2 stream: {exc}",
            value=name,
            fix="the index does not match the dump: give the index that came with it",
        ) from exc
    if b"<siteinfo" in xml[:4096] or b"<mediawiki" in xml[:4096]:
        # the head stream: its pages, if it holds any (the index cross-check in stream_spans reads it then)
        end = xml.find(b"</siteinfo>")
        xml = xml[end + len(b"</siteinfo>") :] if end >= 0 else xml[xml.find(b">", xml.find(b"<mediawiki")) + 1 :]
        if b"<page>" not in xml:
            return
    xml = _CLOSE.sub(b"", xml)
    yield from iter_dump_file(BytesIO(b"<mediawiki>" + xml + b"</mediawiki>"), Path(name), namespaces=namespaces, include_redirects=include_redirects)


def write_multistream(
    src: str | os.PathLike, out: str | os.PathLike, index: str | os.PathLike | None = None, pages_per_stream: int = 100
) -> tuple[Path, Path]:
    """Write ``src`` (a ``pages-articles`` dump) as a multistream dump + index, as Wikimedia lays them out:
    the head in its own stream, ``pages_per_stream`` pages per stream, ``</mediawiki>`` in the last one."""
    src, out = Path(src), Path(out)
    index = Path(index) if index else out.with_name(out.name.replace(".xml.bz2", "") + "-index.txt.bz2")
    raw = (bz2.open(src, "rb") if src.name.endswith(".bz2") else open(src, "rb")).read()
    first = raw.find(b"<page>")
    end = raw.rfind(b"</mediawiki>")
    head, body, tail = raw[:first], raw[first:end], raw[end:]
    pages = re.findall(rb"[ \t]*<page>.*?</page>\s*", body, re.S)
    lines: list[str] = []
    with atomic_path(out) as tmp_out, open(tmp_out, "wb") as fh:  # atomically (the output layer)
        fh.write(bz2.compress(head))
        for i in range(0, len(pages), pages_per_stream):
            offset = fh.tell()
            chunk = b"".join(pages[i : i + pages_per_stream])
            fh.write(bz2.compress(chunk))
            for pg in pages[i : i + pages_per_stream]:
                pid = re.search(rb"<id>(\d+)</id>", pg)
                title = re.search(rb"<title>(.*?)</title>", pg, re.S)
                lines.append(f"{offset}:{pid.group(1).decode() if pid else ''}:{title.group(1).decode('utf-8') if title else ''}")
        fh.write(bz2.compress(tail))
    with atomic_path(index) as tmp_index, bz2.open(tmp_index, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return out, index
