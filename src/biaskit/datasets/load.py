"""Load public bias datasets (and datasets staged/pushed with biaskit) into biaskit prompts tables.

Sources (``kind`` is detected when not given):

``biaskit``        a folder staged by ``biaskit hub stage`` or a Hub repo pushed with biaskit: the rows come
                   back with their original string labels (ClassLabel ids decoded)
``bold_github``    the BOLD GitHub layout: ``prompts/<domain>_prompt.json`` and ``wikipedia/<domain>_wiki.json``
                   (``{group: {name: [text, ...]}}``); every prompt is kept (HELM keeps only the first per
                   entity); the i-th Wikipedia sentence of an entity is the i-th prompt's reference
``bold_hub``       the Hub layout (``AlexaAI/bold``): one row per entity with ``domain``, ``name``,
                   ``category``, ``prompts`` (list) and ``wikipedia`` (list) in JSON Lines / Parquet / a Hub repo
``holistic_csv``   HolisticBias ``sentences.csv`` as written by ResponsibleNLP's ``generate_sentences.py``
``honest``         HONEST templates TSV (``template_masked`` with ``[M]``, ``raw``, ``identity``, ``number``,
                   ``category``, ``type``); every row is kept (the honest package drops duplicate texts)

Empty or whitespace-only prompts are dropped and counted (BOLD issue #2); the counts are returned in
``LoadResult.filtered`` and written to the output manifest.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from biaskit.errors import BiaskitError

KINDS = ("biaskit", "bold_github", "bold_hub", "holistic_csv", "honest")
BOLD_DOMAINS = ("gender", "political_ideology", "profession", "race", "religious_ideology")
_HUB_ID = re.compile(r"^(hf://datasets/)?[A-Za-z0-9][\w.\-]*/[A-Za-z0-9][\w.\-]*$")
_HOLISTIC_COLUMNS = (
    "axis", "bucket", "descriptor", "descriptor_gender", "descriptor_preference", "noun", "plural_noun", "noun_gender",
    "noun_phrase", "plural_noun_phrase", "noun_phrase_type", "template", "first_turn_only", "must_be_noun",
)
HONEST_MASK = "[M]"


@dataclass
class LoadResult:
    table: pa.Table
    kind: str
    source: str
    filtered: Counter = field(default_factory=Counter)
    facts: dict[str, Any] = field(default_factory=dict)
    stage: str | None = "prompts"


def _pid(source: str, domain: str | None, *parts: Any) -> str:
    try:  # the scrape package's id scheme, so imported BOLD ids match scraped ones
        from biaskit.scrape.prompts import prompt_id

        return prompt_id(*parts, source=source, domain=domain)
    except ImportError:  # pragma: no cover - scrape package always ships
        h = hashlib.sha1("\x1f".join("" if p is None else str(p) for p in parts).encode("utf-8")).hexdigest()[:12]
        dom = re.sub(r"[^a-z0-9]", "", (domain or "").lower())[:4] or "x"
        return f"{source}-{dom}-{h}"


def _prompts_table(rows: list[dict]) -> pa.Table:
    from biaskit.schema import PROMPTS

    present = [c for c in PROMPTS.columns if any(r.get(c.name) is not None for r in rows) or c.required]
    return pa.table({c.name: pa.array([r.get(c.name) for r in rows], type=c.type) for c in present})


# --------------------------------------------------------------------------- detection


def detect_kind(source: str) -> str:
    p = Path(source)
    if p.is_dir():
        if (p / "README.md").is_file() or (p / "biaskit_manifest.json").is_file():
            return "biaskit"
        if (p / "prompts").is_dir() and list((p / "prompts").glob("*_prompt.json")):
            return "bold_github"
        raise BiaskitError("E054", "cannot tell what dataset this folder holds", value=str(p), options=KINDS,
                           fix="give a biaskit-staged folder, a BOLD checkout (prompts/*_prompt.json), or pass --kind")
    if p.is_file():
        low = p.name.lower()
        if low.endswith(".tsv"):
            head = p.read_text(encoding="utf-8").split("\n", 1)[0]
            if "template_masked" in head:
                return "honest"
        if low.endswith(".csv"):
            head = p.read_text(encoding="utf-8").split("\n", 1)[0]
            if "descriptor" in head and "text" in head:
                return "holistic_csv"
        if low.endswith("_prompt.json"):
            return "bold_github"
        if low.endswith((".jsonl", ".json", ".parquet")):
            return "bold_hub"
        raise BiaskitError("E054", "cannot tell what dataset this file holds", value=str(p), options=KINDS,
                           fix="pass --kind, e.g. --kind holistic_csv")
    if _HUB_ID.match(source):
        return "hub"
    raise BiaskitError("E054", "source is neither an existing path nor a Hub dataset id", value=source,
                       fix="check the path, or give a Hub id such as AlexaAI/bold")


# --------------------------------------------------------------------------- BOLD


def _bold_rows(domain: str, prompts: dict, wiki: dict | None, filtered: Counter, facts: Counter) -> list[dict]:
    rows = []
    if not isinstance(prompts, dict):
        raise BiaskitError("E054", f"BOLD {domain} prompts are not a {{group: {{name: [prompt, ...]}}}} object",
                           value=type(prompts).__name__, fix="give the original BOLD prompts/<domain>_prompt.json")
    for group, names in prompts.items():
        for name, plist in names.items():
            refs = (wiki or {}).get(group, {}).get(name) if wiki else None
            if refs is not None and len(refs) != len(plist):
                facts["entities_with_unaligned_wikipedia"] += 1
                refs = None
            for i, text in enumerate(plist):
                if not isinstance(text, str) or not text.strip():
                    filtered["empty_prompt"] += 1
                    continue
                ref = refs[i] if refs is not None else None
                rows.append({
                    "prompt_id": _pid("bold", domain, domain, group, name, i, text),
                    "text": text, "source": "bold", "language": "en", "domain": domain, "group": group,
                    "term": name.replace("_", " "), "reference": ref, "page_title": name.replace("_", " "),
                    "wiki": "https://en.wikipedia.org", "license": "CC BY-SA 4.0",
                })
    return rows


def load_bold_github(path: str | Path, domains: list[str] | None = None) -> LoadResult:
    p = Path(path)
    root = p.parent.parent if p.is_file() else p
    files = [p] if p.is_file() else sorted((root / "prompts").glob("*_prompt.json"))
    if not files:
        raise BiaskitError("E054", "no BOLD prompt files found", value=str(root / "prompts"),
                           fix="point at a BOLD checkout holding prompts/<domain>_prompt.json")
    filtered: Counter = Counter()
    facts: Counter = Counter()
    rows: list[dict] = []
    for f in files:
        domain = f.name[: -len("_prompt.json")]
        if domains and domain not in domains:
            continue
        try:
            prompts = json.loads(f.read_text(encoding="utf-8"))
            wf = root / "wikipedia" / f"{domain}_wiki.json"
            wiki = json.loads(wf.read_text(encoding="utf-8")) if wf.is_file() else None
        except json.JSONDecodeError as exc:
            raise BiaskitError("E054", f"malformed BOLD JSON in {f}: {exc}", value=str(f), fix="re-download the file") from exc
        if wiki is None:
            facts["domains_without_wikipedia"] += 1
        rows += _bold_rows(domain, prompts, wiki, filtered, facts)
    return LoadResult(_prompts_table(rows), "bold_github", str(path), filtered, dict(facts))


def bold_hub_to_prompts(table: pa.Table, source: str, kind: str = "bold_hub") -> LoadResult:
    need = {"domain", "name", "category", "prompts"}
    if not need <= set(table.column_names):
        raise BiaskitError("E054", "not the BOLD Hub layout (columns domain, name, category, prompts, wikipedia)",
                           value=sorted(table.column_names), fix="pass the right --kind for this file")
    filtered: Counter = Counter()
    facts: Counter = Counter()
    rows: list[dict] = []
    for r in table.to_pylist():
        domain = r["domain"]
        prompts = {r["category"]: {r["name"]: r["prompts"] or []}}
        wiki = {r["category"]: {r["name"]: r.get("wikipedia") or []}} if r.get("wikipedia") is not None else None
        rows += _bold_rows(domain, prompts, wiki, filtered, facts)
    facts["entities"] = table.num_rows
    return LoadResult(_prompts_table(rows), kind, source, filtered, dict(facts))


def load_bold_hub_file(path: str | Path) -> LoadResult:
    p = Path(path)
    if p.name.lower().endswith(".parquet"):
        import pyarrow.parquet as pq

        t = pq.read_table(p)
    else:
        lines = [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]
        t = pa.Table.from_pylist(lines)
    return bold_hub_to_prompts(t, str(p))


# --------------------------------------------------------------------------- HolisticBias, HONEST


def _bool(v: Any) -> bool | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    raise BiaskitError("E054", "expected a boolean flag", value=v, fix="use True/False in the CSV")


def load_holistic_csv(path: str | Path) -> LoadResult:
    import pyarrow.csv as pacsv

    p = Path(path)
    t = pacsv.read_csv(p, convert_options=pacsv.ConvertOptions(strings_can_be_null=False, column_types={}))
    if "text" not in t.column_names or "descriptor" not in t.column_names:
        raise BiaskitError("E054", "not a HolisticBias sentences CSV (needs columns text and descriptor)",
                           value=sorted(t.column_names), fix="give sentences.csv from ResponsibleNLP generate_sentences.py")
    filtered: Counter = Counter()
    rows = []
    dropped_cols = [c for c in t.column_names if c == "" or c.startswith("Unnamed")]
    for r in t.to_pylist():
        text = r.get("text")
        if not isinstance(text, str) or not text.strip():
            filtered["empty_prompt"] += 1
            continue
        row = {"text": text, "source": "holistic_bias", "language": "en", "license": "CC BY-SA 4.0"}
        for c in _HOLISTIC_COLUMNS:
            v = r.get(c)
            if c in ("first_turn_only", "must_be_noun"):
                row[c] = _bool(v)
            else:
                row[c] = None if v is None or (isinstance(v, str) and v.strip() in ("", "(none)")) else str(v)
        row["prompt_id"] = _pid("holistic", row.get("axis"), text, row.get("descriptor"), row.get("noun"), row.get("template"))
        rows.append(row)
    facts = {"dropped_index_columns": dropped_cols} if dropped_cols else {}
    return LoadResult(_prompts_table(rows), "holistic_csv", str(p), filtered, facts)


def load_honest(path: str | Path, language: str | None = None) -> LoadResult:
    import csv

    from biaskit.templates.mask import MASK

    p = Path(path)
    lang = language or (p.name.split("_")[0] if re.match(r"^[a-z]{2,3}_template\.tsv$", p.name) else None)
    if not lang:
        raise BiaskitError("E054", "cannot tell the language of the HONEST file", value=p.name,
                           fix="name it <lang>_template.tsv as in the HONEST repo, or pass --language")
    with open(p, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        recs = list(reader)
    if not recs or "template_masked" not in recs[0]:
        raise BiaskitError("E054", "not a HONEST template TSV (needs column template_masked)", value=p.name,
                           fix="give resources/<kind>/<lang>_template.tsv from MilaNLProc/honest")
    filtered: Counter = Counter()
    rows = []
    variant = p.parent.name if p.parent.name in ("binary", "queer_nonqueer") else None
    for i, r in enumerate(recs):
        tm = (r.get("template_masked") or "").strip()
        if not tm:
            filtered["empty_prompt"] += 1
            continue
        if tm.count(HONEST_MASK) != 1:
            filtered["not_one_mask"] += 1
            continue
        rows.append({
            "prompt_id": _pid("honest", r.get("category"), lang, variant, i, tm, r.get("identity")),
            "text": tm.replace(HONEST_MASK, MASK), "source": "honest", "language": lang,
            "domain": r.get("type") or None, "group": r.get("category") or None, "term": r.get("identity") or None,
            "template": r.get("raw") or None, "subject_category": r.get("category") or None,
            "template_category": r.get("type") or None, "template_id": f"honest-{variant or 'x'}-{lang}-{i:04d}",
            "masked": True, "license": "MIT",
        })
    facts = {"variant": variant, "rows_in_file": len(recs), "distinct_texts": len({r["text"] for r in rows})}
    return LoadResult(_prompts_table(rows), "honest", str(p), filtered, facts)


# --------------------------------------------------------------------------- biaskit / Hub


def load_staged(source: str | Path, config: str | None = None, split: str | None = None,
                revision: str | None = None) -> LoadResult:
    """A config of a biaskit-staged folder or Hub repo, as the original table (labels decoded)."""
    import datasets as hf_datasets

    from biaskit.datasets.features import decode

    src = str(source)
    configs: list[str] | None = None
    if Path(src).is_dir():
        from biaskit.datasets.validate import load_config, read_card

        card, _ = read_card(src)
        configs = [c["config_name"] for c in card.get("configs") or []]
        name = _pick_config(configs, config, src)
        dd = load_config(src, name)
    else:
        name = config
        try:
            dd = hf_datasets.load_dataset(src.removeprefix("hf://datasets/"), name, revision=revision)
        except Exception as exc:
            from biaskit.secrets import redact

            raise BiaskitError("E054", f"could not load Hub dataset {src!r}: {redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}",
                               value=src, fix="check the id and --config; unset HF_HUB_OFFLINE/HF_DATASETS_OFFLINE to download") from exc
    splits = list(dd)
    if split is not None:
        if split not in dd:
            raise BiaskitError("E054", f"split {split!r} not in {src}", value=split, options=splits, fix="pick one of the splits")
        splits = [split]
    tables = [decode(dd[s]) for s in splits]
    t = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    from biaskit.datasets.stage import detect_stage

    return LoadResult(t, "biaskit", src, Counter(), {"config": name, "splits": splits}, stage=detect_stage(t, None, name))


def _pick_config(configs: list[str], config: str | None, src: str) -> str:
    if config is None:
        if len(configs) == 1:
            return configs[0]
        raise BiaskitError("E054", f"{src} has {len(configs)} configs; choose one", value=None, options=configs,
                           fix="pass --config NAME")
    if config not in configs:
        raise BiaskitError("E054", f"config {config!r} not in {src}", value=config, options=configs, fix="pass one of the configs with --config")
    return config


def load_source(source: str | Path, *, kind: str | None = None, config: str | None = None, split: str | None = None,
                revision: str | None = None, language: str | None = None, domains: list[str] | None = None) -> LoadResult:
    """Load ``source`` (path or Hub id) into a biaskit table; see the module docstring for the kinds."""
    src = str(source)
    if kind is not None and kind not in KINDS:
        raise BiaskitError("E054", "unknown source kind", value=kind, options=KINDS, fix="use one of the kinds or omit --kind")
    k = kind or detect_kind(src)
    if k == "hub":  # a Hub repo: biaskit-staged, or BOLD's layout
        res = load_staged(src, config, split, revision)
        if {"domain", "name", "category", "prompts"} <= set(res.table.column_names):
            return bold_hub_to_prompts(res.table, src)
        return res
    if k == "biaskit":
        return load_staged(src, config, split, revision)
    if k == "bold_github":
        return load_bold_github(src, domains)
    if k == "bold_hub":
        if Path(src).is_dir():
            raise BiaskitError("E054", "--kind bold_hub needs a JSON Lines/Parquet file or a Hub id", value=src, fix="give the file")
        if not Path(src).exists():
            res = load_staged(src, config, split, revision)
            return bold_hub_to_prompts(res.table, src)
        return load_bold_hub_file(src)
    if k == "holistic_csv":
        return load_holistic_csv(src)
    return load_honest(src, language)
