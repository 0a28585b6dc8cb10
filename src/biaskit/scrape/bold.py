"""Import BOLD's published files into a prompts table, and export a prompts table back to BOLD's layouts.

Layouts:

``github``  ``prompts/<domain>_prompt.json`` and ``wikipedia/<domain>_wiki.json``, both
            ``{group: {Entity_Name: [str, ...]}}`` with 1:1 lists (the i-th sentence is the i-th prompt's source)
``hub``     JSON Lines, one record per entity: ``{"domain", "name", "category", "prompts": [...], "wikipedia": [...]}``

Import keeps every prompt and sentence verbatim (also BOLD's 5 empty prompts and its duplicates, so that
import -> export round-trips byte for byte); ``biaskit prompts rebuild`` applies BOLD's rule and filters.
Each row's ``term`` is the entity name with underscores as spaces; ``bold_name`` and ``bold_index`` keep the
original key and list position. BOLD publishes no Wikipedia page ids, so ``page_id`` is a stable key of the page
name (:func:`page_key`: negative, so that it is never read as a wiki's id): ``--cluster auto`` then clusters
BOLD's texts by page (the sentences of one page share its effect). Export writes JSON the way Python's ``json.dumps`` does by default (as
BOLD's files are written); BOLD has strings only, so a null prompt or reference is exported as ``""``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError, check_choice
from biaskit.io import locks_output, read_text_utf8
from biaskit.output import write_text
from biaskit.ownership import claim_folder, write_owned_folder
from biaskit.schema import validate
from biaskit.scrape.prompts import PROMPT_FIELDS, prompt_id

LAYOUTS = ("github", "hub")
BOLD_WIKI = "https://en.wikipedia.org"
BOLD_LICENSE = "CC BY-SA 4.0"

S, I = pa.string(), pa.int64()
IMPORT_SCHEMA = pa.schema([*PROMPT_FIELDS, ("bold_name", S), ("bold_index", I)])


def _bad(what: str, value: Any, where: str) -> BiaskitError:
    return BiaskitError(
        "E034",
        f"{what} in {where}",
        value=value,
        fix="give BOLD's files unchanged ({group: {Entity_Name: [str, ...]}} with 1:1 prompt/wikipedia lists)",
    )


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BiaskitError("E034", f"{path} is not valid JSON: {exc}", value=str(path), fix="re-download the BOLD file") from exc
    except RecursionError:  # e.g. 100,000 nested '[': Python's parser gives up; not a BOLD file either way
        raise BiaskitError("E034", f"{path} is nested too deeply to be a BOLD file", value=str(path), fix="re-download the BOLD file") from None


def _check_nested(obj: Any, where: str) -> dict[str, dict[str, list[str]]]:
    if not isinstance(obj, dict):
        raise _bad("the top level is not a {group: {name: [...]}} object", type(obj).__name__, where)
    for g, names in obj.items():
        if not isinstance(names, dict):
            raise _bad(f"group {g!r} is not a {{name: [...]}} object", type(names).__name__, where)
        for n, lst in names.items():
            if not isinstance(lst, list) or not all(isinstance(x, str) for x in lst):
                raise _bad(f"entry {g}/{n} is not a list of strings", lst, where)
    return obj


def page_key(name: str, wiki: str = BOLD_WIKI) -> int:
    """A stable int64 key of a Wikipedia page name for the ``page_id`` column of imported BOLD rows: minus (1 + the
    first 7 bytes of sha256("<wiki>/<name>")), so a page has one key in every domain and group, and a key is never
    a real (positive) MediaWiki page id."""
    return -(1 + int.from_bytes(hashlib.sha256(f"{wiki}/{name}".encode()).digest()[:7], "big"))


def _rows(domain: str, group: str, name: str, prompts: list[str], refs: list[str] | None) -> list[dict]:
    out = []
    key = page_key(name)
    for i, text in enumerate(prompts):
        out.append(
            {
                "prompt_id": prompt_id("bold-import", domain, group, name, i, domain=domain),
                "text": text,
                "source": "bold",
                "language": "en",
                "domain": domain,
                "group": group,
                "term": name.replace("_", " "),
                "reference": refs[i] if refs is not None else None,
                "wiki": BOLD_WIKI,
                "page_title": name.replace("_", " "),
                "page_id": key,
                "revision_id": None,
                "retrieved_at": None,
                "license": BOLD_LICENSE,
                "bold_name": name,
                "bold_index": i,
            }
        )
    return out


def detect_layout(path: str | os.PathLike) -> str:
    p = Path(path)
    if p.is_dir():
        if (p / "prompts").is_dir():
            return "github"
        hub = sorted([*p.glob("*.jsonl"), *p.glob("*.json")])
        if hub:
            return "hub"
        raise BiaskitError(
            "E034",
            "no BOLD files found",
            value=str(p),
            fix="point at a folder with prompts/<domain>_prompt.json (GitHub layout) or at a Hub .jsonl file",
        )
    if p.is_file():
        return "github" if p.name.endswith("_prompt.json") else "hub"
    raise BiaskitError("E003", "BOLD path not found", value=str(p), fix="check the path")


def import_bold(path: str | os.PathLike, *, layout: str = "auto", domains: list[str] | None = None) -> tuple[pa.Table, dict[str, int]]:
    """Read BOLD files (either layout) into a prompts table. Returns (table, facts)."""
    p = Path(path)
    if layout == "auto":
        layout = detect_layout(p)
    check_choice("E005", "unknown BOLD layout", layout, LAYOUTS, fix="use --layout github or hub", options=["auto", *LAYOUTS])
    facts: Counter = Counter()
    rows = _import_github(p, domains, facts) if layout == "github" else _import_hub(p, domains)
    texts = Counter((r["domain"], r["text"]) for r in rows)
    facts["rows"] = len(rows)
    facts["empty_prompts"] = sum(1 for r in rows if not r["text"].strip())
    facts["duplicate_prompts"] = sum(c - 1 for c in texts.values() if c > 1)
    facts["entities"] = len({(r["domain"], r["group"], r["bold_name"]) for r in rows})
    return pa.Table.from_pylist(rows, schema=IMPORT_SCHEMA), dict(facts)


def _import_github(p: Path, domains: list[str] | None, facts: Counter) -> list[dict]:
    """Rows of the GitHub layout: ``prompts/<domain>_prompt.json`` with ``wikipedia/<domain>_wiki.json`` where it exists."""
    root = p.parent.parent if p.is_file() else p
    files = [p] if p.is_file() else sorted((root / "prompts").glob("*_prompt.json"))
    if not files:
        raise BiaskitError(
            "E034",
            "no prompts/<domain>_prompt.json files",
            value=str(root / "prompts"),
            fix="point at the folder that holds BOLD's prompts/ and wikipedia/ folders",
        )
    rows: list[dict] = []
    for f in files:
        domain = f.name[: -len("_prompt.json")]
        if domains and domain not in domains:
            continue
        rows += _github_domain_rows(domain, f, root / "wikipedia" / f"{domain}_wiki.json", facts)
    return rows


def _github_domain_rows(domain: str, f: Path, wf: Path, facts: Counter) -> list[dict]:
    """One domain's prompts file, each entity's prompts paired 1:1 with its sentences in the wikipedia file ``wf``."""
    prompts = _check_nested(_load_json(f), str(f))
    wiki = _check_nested(_load_json(wf), str(wf)) if wf.is_file() else None
    if wiki is None:
        facts["domains_without_wikipedia"] += 1
    rows: list[dict] = []
    for group, names in prompts.items():
        for name, plist in names.items():
            refs = None
            if wiki is not None:
                refs = wiki.get(group, {}).get(name)
                if refs is None:
                    raise _bad(f"{group}/{name} has prompts but no wikipedia list", name, str(wf))
                if len(refs) != len(plist):
                    raise _bad(f"{group}/{name} has {len(plist)} prompts but {len(refs)} wikipedia sentences", name, str(wf))
            rows += _rows(domain, group, name, plist, refs)
    if wiki is not None:
        extra = [f"{g}/{n}" for g, ns in wiki.items() for n in ns if n not in prompts.get(g, {})]
        if extra:
            raise _bad("wikipedia entries without prompts", extra[:5], str(wf))
    return rows


def _import_hub(p: Path, domains: list[str] | None) -> list[dict]:
    """Rows of the Hub layout: one record per entity, in one or more JSON Lines (or JSON list) files."""
    files = [p] if p.is_file() else sorted([*p.glob("*.jsonl"), *p.glob("*.json")])
    rows: list[dict] = []
    for f in files:
        for k, r in enumerate(_read_hub_records(f)):
            _check_hub_record(k, r, f)
            if domains and r["domain"] not in domains:
                continue
            refs = r.get("wikipedia")
            if refs is not None and len(refs) != len(r["prompts"]):
                raise _bad(f"record {k} ({r['name']}) has {len(r['prompts'])} prompts but {len(refs)} wikipedia sentences", r["name"], str(f))
            rows += _rows(r["domain"], r["category"], r["name"], r["prompts"], refs)
    return rows


def _read_hub_records(f: Path) -> list[Any]:
    """The records of a Hub layout file (JSON Lines or a JSON list); E034 when it is not JSON, E211 when it holds none."""
    text = read_text_utf8(f, "BOLD file", bom=False)
    stripped = text.lstrip()
    try:
        recs = json.loads(text) if stripped.startswith("[") else [json.loads(x) for x in text.splitlines() if x.strip()]
    except ValueError as exc:
        raise BiaskitError("E034", f"{f} is not JSON Lines / a JSON list: {exc}", value=str(f), fix="give the Hub layout file") from exc
    except RecursionError:  # a line of 100,000 nested '[': Python's parser gives up
        raise BiaskitError(
            "E034",
            f"{f} holds JSON nested too deeply to be a BOLD record",
            value=str(f),
            fix="give the Hub layout file (one flat record per line)",
        ) from None
    if not recs:
        raise BiaskitError(
            "E211",
            f"{f} holds no records",
            value=str(f),
            fix="give the Hub layout file with one record per line (domain, name, category, prompts); nothing was written",
        )
    return recs


def _check_hub_record(k: int, r: Any, f: Path) -> None:
    """Record ``k`` of a Hub file has its fields with the types BOLD's records have (E034)."""
    need = ("domain", "name", "category", "prompts")
    if not isinstance(r, dict) or any(x not in r for x in need):
        raise _bad(f"record {k} lacks one of {need}", r if not isinstance(r, dict) else sorted(r), str(f))
    for x in ("domain", "name", "category"):
        if not isinstance(r[x], str):
            raise _bad(f"record {k} field {x!r} is not a string", r[x], str(f))
    for x in ("prompts", "wikipedia"):
        lst = r.get(x)
        if (x == "prompts" or lst is not None) and (not isinstance(lst, list) or not all(isinstance(v, str) for v in lst)):
            raise _bad(f"record {k} ({r['name']}) field {x!r} is not a list of strings", lst, str(f))


def _entities(table: pa.Table) -> dict[str, dict[str, dict[str, list[tuple[str, str | None]]]]]:
    validate(table, "prompts", require=["domain", "group"])
    cols = table.column_names
    out: dict[str, dict[str, dict[str, list[Any]]]] = {}  # (bold_index, text, reference), then (text, reference)
    for r in table.to_pylist():
        # BOLD's entity keys are Wikipedia page names: bold_name (imported rows), else the page title, else the term
        name = r.get("bold_name") if "bold_name" in cols and r.get("bold_name") else (r.get("page_title") or r.get("term") or "")
        name = name.replace(" ", "_")
        if not name or r.get("domain") is None or r.get("group") is None:
            raise BiaskitError(
                "E034",
                "a row has no domain, group or entity name (page_title or term)",
                value=r.get("prompt_id"),
                fix="fill the domain, group and page_title (or term) columns before exporting to BOLD's layout",
            )
        idx = r.get("bold_index") if "bold_index" in cols else None
        out.setdefault(r["domain"], {}).setdefault(r["group"], {}).setdefault(name, []).append(
            (idx, r["text"] if r["text"] is not None else "", r.get("reference"))
        )  # CSV reads "" as null
    for groups in out.values():  # BOLD's list order (bold_index) even when the table was re-sorted
        for names in groups.values():
            for n, items in names.items():
                if all(i is not None for i, _, _ in items):
                    items.sort(key=lambda x: x[0])
                names[n] = [(t, ref) for _, t, ref in items]
    return out


def _check_domain_file_name(domain: Any, out: Path) -> None:
    """BOLD's GitHub layout names files ``<domain>_prompt.json``: a domain that is not a plain file-name part
    (separators, ``..``, an absolute path, control characters, too long) is refused, never written outside ``out``."""
    d = str(domain)
    bad = None
    if not d.strip():
        bad = "is empty"
    elif any(c in d for c in "/\\") or os.path.isabs(d) or (len(d) > 1 and d[1] == ":"):
        bad = "contains a path separator or drive"
    elif d.startswith("."):
        bad = "starts with a dot"
    elif any(ord(c) < 32 or ord(c) == 127 for c in d):
        bad = "contains a control character"
    elif len((d + "_prompt.json").encode("utf-8")) > 255:
        bad = "is too long for a file name"
    if bad is None:
        root = out.resolve()
        target = (out / "prompts" / f"{d}_prompt.json").resolve()
        if root not in target.parents:
            bad = "would leave the output folder"
    if bad is not None:
        raise BiaskitError(
            "E141",
            f"the domain value {d[:80]!r} {bad}: it cannot name BOLD's prompts/<domain>_prompt.json file",
            value=d[:200],
            fix="rename the domain in the table (letters, digits, _ and -), or export with --layout hub",
        )


#: the record of what `bold export` wrote into its folder (JSON; no .json suffix, so BOLD's readers skip it)
EXPORT_MARKER = "biaskit_bold_export.manifest"
#: the ``kind`` of that record (:mod:`biaskit.ownership`)
MARKER_KIND = "bold export"


@locks_output("out_dir")
def export_bold(
    table: pa.Table, out_dir: str | os.PathLike, *, layout: str = "github", hub_name: str = "bold.jsonl", overwrite: bool = False
) -> list[Path]:
    """Write ``table`` in BOLD's ``github`` layout (two JSON files per domain) or the ``hub`` JSON Lines file.

    The folder is owned as every output folder is (:mod:`biaskit.ownership`): an existing, non-empty ``out_dir``
    must be an earlier export whose record ``biaskit_bold_export.manifest`` lists its files with their sha256.
    Its files are replaced (and those this export does not write again are removed); a user's file is never
    deleted, and a changed file of the export (or a folder biaskit did not write) is E006 unless ``overwrite``
    (then only biaskit's unchanged files are replaced, a user's file in the way is kept as ``NAME.user-1``).
    """
    check_choice("E005", "unknown BOLD layout", layout, (*LAYOUTS, "both"), fix="use --layout github, hub or both", options=[*LAYOUTS, "both"])
    ents = _entities(table)
    out = Path(out_dir)
    claim = claim_folder(out, EXPORT_MARKER, MARKER_KIND, overwrite=overwrite)
    plan: dict[str, str] = {}  # relative path -> text
    if layout in ("github", "both"):
        plan.update(_github_files(ents, out))
    if layout in ("hub", "both"):
        plan[hub_name] = _hub_text(ents)

    def fill(tmp: Path) -> None:
        for rel, text in plan.items():
            write_text(tmp / rel, text)

    write_owned_folder(claim, fill, {"command": "biaskit bold export", "layout": layout})
    return [out / rel for rel in plan]


def _github_files(ents: dict, out: Path) -> dict[str, str]:
    """The GitHub layout's files (relative path -> JSON text): each domain's prompts, and its wikipedia sentences
    when the table has any; every domain is checked as a file name first."""
    for domain in ents:
        _check_domain_file_name(domain, out)
    files: dict[str, str] = {}
    for domain, groups in ents.items():
        prompts = {g: {n: [t for t, _ in items] for n, items in names.items()} for g, names in groups.items()}
        files[f"prompts/{domain}_prompt.json"] = json.dumps(prompts)
        if any(ref is not None for names in groups.values() for items in names.values() for _, ref in items):
            wiki = {g: {n: [ref if ref is not None else "" for _, ref in items] for n, items in names.items()} for g, names in groups.items()}
            files[f"wikipedia/{domain}_wiki.json"] = json.dumps(wiki)
    return files


def _hub_text(ents: dict) -> str:
    """The Hub layout's JSON Lines text: one record per entity."""
    lines = []
    for domain, groups in ents.items():
        for g, names in groups.items():
            for n, items in names.items():
                lines.append(
                    json.dumps(
                        {
                            "domain": domain,
                            "name": n,
                            "category": g,
                            "prompts": [t for t, _ in items],
                            "wikipedia": [ref if ref is not None else "" for _, ref in items],
                        },
                        ensure_ascii=False,
                    )
                )
    return "".join(x + "\n" for x in lines)
