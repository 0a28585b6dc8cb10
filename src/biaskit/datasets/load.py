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
``lm_eval``        lm-evaluation-harness ``--log_samples`` output (a ``samples_<task>_<date>.jsonl`` file or the
                   ``--output_path`` folder) of a task written by ``biaskit export lm-eval``: a generations table
                   (:func:`biaskit.interop.lmeval.import_lmeval`)
``bbq_jsonl``      BBQ's published ``data/<Category>.jsonl`` (a file or the folder): the table of ``biaskit expand
                   bbq`` (:func:`biaskit.templates.bbq_io.read_published`), other keys such as predictions kept
``crows_pairs``    CrowS-Pairs ``crows_pairs_anonymized.csv`` (Nangia et al. 2020): a pairs table, two rows per pair
                   (``pair_id``, ``variant`` more/less, ``text``, ``bias_type``, ``stereo_antistereo``, the
                   annotators' labels); read by :func:`biaskit.templates.crows.read_crows_pairs`
``westslavic_xlsx`` the West Slavic study's ``template_sentences.xlsx`` layout (sheets Czech/Polish/Slovak, one
                   column of finished sentences with an inflected ``<maska>``-style slot); read by
                   :func:`biaskit.templates.westslavic.import_westslavic`; rows it cannot use are listed in
                   ``LoadResult.facts["problems"]`` (sheet, row, reason) and counted in ``filtered``

BOLD files are read by :func:`biaskit.scrape.bold.import_bold` (the ``biaskit bold import`` code) and HONEST
files by :func:`biaskit.templates.honest.import_honest`, so ids and columns match those commands. Empty or
whitespace-only BOLD prompts are then dropped and counted (BOLD issue #2) unless ``keep_empty``; the counts
are returned in ``LoadResult.filtered`` and written to the output manifest.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv

from biaskit.assets import online_step, prepare_hub
from biaskit.datasets.features import decode
from biaskit.datasets.validate import load_config, read_card
from biaskit.errors import BiaskitError, check_choice
from biaskit.interop.lmeval import import_lmeval
from biaskit.io import decode_utf8, read_table
from biaskit.schema import PROMPTS
from biaskit.scrape.bold import import_bold
from biaskit.scrape.prompts import prompt_id
from biaskit.secrets import redact
from biaskit.templates.bbq_io import is_bbq_jsonl, read_published
from biaskit.templates.crows import is_crows_header, read_crows_pairs
from biaskit.templates.holistic_data import TEMPLATE_FLAGS
from biaskit.templates.holistic_phrases import NP_COLUMNS
from biaskit.templates.honest import KINDS as HONEST_KINDS
from biaskit.templates.honest import import_honest
from biaskit.templates.westslavic import import_westslavic, is_westslavic_workbook

KINDS = ("biaskit", "bold_github", "bold_hub", "holistic_csv", "honest", "westslavic_xlsx", "lm_eval", "bbq_jsonl", "crows_pairs")
_HUB_ID = re.compile(r"^(hf://datasets/)?[A-Za-z0-9][\w.\-]*/[A-Za-z0-9][\w.\-]*$")
#: the HolisticBias columns a sentences CSV carries: the noun phrase's, the template and its flags
_HOLISTIC_COLUMNS = (*NP_COLUMNS, "template", *TEMPLATE_FLAGS)


@dataclass
class LoadResult:
    table: pa.Table
    kind: str
    source: str
    filtered: Counter = field(default_factory=Counter)
    facts: dict[str, Any] = field(default_factory=dict)
    stage: str | None = "prompts"


def _pid(source: str, domain: str | None, *parts: Any) -> str:
    return prompt_id(*parts, source=source, domain=domain)


def _prompts_table(rows: list[dict]) -> pa.Table:
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
        if next(p.rglob("samples_*.jsonl"), None) is not None:
            return "lm_eval"
        if is_bbq_jsonl(p):
            return "bbq_jsonl"
        raise BiaskitError(
            "E054",
            "cannot tell what dataset this folder holds",
            value=str(p),
            options=KINDS,
            fix="give a biaskit-staged folder, a BOLD checkout (prompts/*_prompt.json), or pass --kind",
        )
    if p.is_file():
        low = p.name.lower()
        if low.endswith((".tsv", ".csv")):
            with open(p, "rb") as fh:
                head = decode_utf8(fh.readline(), p, "table", bom=False, code="E054")
        if low.endswith(".tsv"):
            if "template_masked" in head:
                return "honest"
        if low.endswith(".csv"):
            if "descriptor" in head and "text" in head:
                return "holistic_csv"
            if is_crows_header(head):
                return "crows_pairs"
        if low.endswith("_prompt.json"):
            return "bold_github"
        if low.startswith("samples_") and low.endswith(".jsonl"):
            return "lm_eval"
        if low.endswith(".xlsx"):
            if is_westslavic_workbook(p):
                return "westslavic_xlsx"
            raise BiaskitError(
                "E054",
                "cannot tell what dataset this spreadsheet holds (no sheet named Czech, Polish or Slovak)",
                value=str(p),
                options=KINDS,
                fix="name the sheets after their language (Czech, Polish, Slovak), or pass --kind",
            )
        if low.endswith(".jsonl") and is_bbq_jsonl(p):
            return "bbq_jsonl"
        if low.endswith((".jsonl", ".json", ".parquet")):
            return "bold_hub"
        raise BiaskitError(
            "E054", "cannot tell what dataset this file holds", value=str(p), options=KINDS, fix="pass --kind, e.g. --kind holistic_csv"
        )
    if _HUB_ID.match(source):
        return "hub"
    raise BiaskitError(
        "E054", "source is neither an existing path nor a Hub dataset id", value=source, fix="check the path, or give a Hub id such as AlexaAI/bold"
    )


# --------------------------------------------------------------------------- BOLD (biaskit.scrape.bold)


def _drop_empty(table: pa.Table, keep_empty: bool, filtered: Counter) -> pa.Table:
    """Drop empty / whitespace-only prompts (BOLD issue #2) and count them, unless ``keep_empty``."""
    import pyarrow.compute as pc

    if keep_empty or table.num_rows == 0:
        return table
    empty = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(table.column("text")), ""), True)
    n = pc.sum(empty).as_py() or 0
    if n:
        filtered["empty_prompt"] += n
        table = table.filter(pc.invert(empty))
    return table


def load_bold(
    path: str | Path, *, layout: str = "auto", domains: list[str] | None = None, keep_empty: bool = False, kind: str = "bold_github"
) -> LoadResult:
    """BOLD files through the scrape package's importer (``biaskit bold import``), which keeps every prompt
    verbatim and checks the prompt/Wikipedia lists align; then empty prompts are dropped and counted."""
    table, facts = import_bold(path, layout=layout, domains=domains)
    filtered: Counter = Counter()
    table = _drop_empty(table, keep_empty, filtered)
    return LoadResult(table, kind, str(path), filtered, facts)


def bold_hub_to_prompts(table: pa.Table, source: str, *, domains: list[str] | None = None, keep_empty: bool = False) -> LoadResult:
    """A table in the BOLD Hub layout (one row per entity, e.g. from ``load_dataset("AlexaAI/bold")``)."""
    need = {"domain", "name", "category", "prompts"}
    if not need <= set(table.column_names):
        raise BiaskitError(
            "E054",
            "not the BOLD Hub layout (columns domain, name, category, prompts, wikipedia)",
            value=sorted(table.column_names),
            fix="pass the right --kind for this source",
        )
    with tempfile.TemporaryDirectory(prefix="biaskit-bold-") as d:
        f = Path(d) / "bold.jsonl"
        f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in table.to_pylist()), encoding="utf-8")
        res = load_bold(f, layout="hub", domains=domains, keep_empty=keep_empty, kind="bold_hub")
    res.source = source
    return res


def load_bold_hub_file(path: str | Path, *, domains: list[str] | None = None, keep_empty: bool = False) -> LoadResult:
    p = Path(path)
    if p.name.lower().endswith(".parquet"):
        return bold_hub_to_prompts(read_table(p), str(p), domains=domains, keep_empty=keep_empty)
    return load_bold(p, layout="hub", domains=domains, keep_empty=keep_empty, kind="bold_hub")


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
    p = Path(path)
    try:
        t = pacsv.read_csv(p, convert_options=pacsv.ConvertOptions(strings_can_be_null=False, column_types={}))
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise BiaskitError(
            "E054",
            f"{p} is not a readable CSV: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
            value=str(p),
            fix="give sentences.csv from ResponsibleNLP generate_sentences.py, unchanged",
        ) from exc
    if "text" not in t.column_names or "descriptor" not in t.column_names:
        raise BiaskitError(
            "E054",
            "not a HolisticBias sentences CSV (needs columns text and descriptor)",
            value=sorted(t.column_names),
            fix="give sentences.csv from ResponsibleNLP generate_sentences.py",
        )
    filtered: Counter = Counter()
    rows = []
    dropped_cols = [c for c in t.column_names if c == "" or c.startswith("Unnamed")]
    for r in t.to_pylist():
        text = r.get("text")
        if not isinstance(text, str) or not text.strip():
            filtered["empty_prompt"] += 1
            continue
        row: dict[str, Any] = {"text": text, "source": "holistic_bias", "language": "en", "license": "CC BY-SA 4.0"}
        for c in _HOLISTIC_COLUMNS:
            v = r.get(c)
            if c in TEMPLATE_FLAGS:
                row[c] = _bool(v)
            else:
                row[c] = None if v is None or (isinstance(v, str) and v.strip() in ("", "(none)")) else str(v)
        row["prompt_id"] = _pid("holistic", row.get("axis"), text, row.get("descriptor"), row.get("noun"), row.get("template"))
        rows.append(row)
    facts = {"dropped_index_columns": dropped_cols} if dropped_cols else {}
    return LoadResult(_prompts_table(rows), "holistic_csv", str(p), filtered, facts)


def load_honest(path: str | Path, language: str | None = None) -> LoadResult:
    """HONEST templates through the templates package's importer (every row kept, ``[M]`` -> ``<mask>``)."""
    p = Path(path)
    lang = language or (p.name.split("_")[0] if re.match(r"^[a-z]{2,3}_template\.tsv$", p.name) else None)
    if not lang:
        raise BiaskitError(
            "E054",
            "cannot tell the language of the HONEST file",
            value=p.name,
            fix="name it <lang>_template.tsv as in the HONEST repo, or pass --language",
        )
    variant = p.parent.name if p.parent.name in HONEST_KINDS else "binary"
    table = import_honest(p, language=lang, kind=variant)
    facts = {"variant": variant, "rows": table.num_rows, "distinct_texts": len(set(table.column("text").to_pylist()))}
    return LoadResult(table, "honest", str(p), Counter(), facts)


def load_westslavic(path: str | Path, *, subjects: str | Path | None = None, languages: list[str] | None = None) -> LoadResult:
    """The West Slavic study's sentence spreadsheet (see :mod:`biaskit.templates.westslavic`)."""
    try:
        res = import_westslavic(path, subjects=subjects, languages=languages)
    except BiaskitError:
        raise
    except (SyntaxError, EOFError, KeyError, ValueError, OSError, zlib.error, zipfile.BadZipFile) as exc:
        # openpyxl reads sheets lazily: a truncated sheet XML fails while the rows are read (xml ParseError, a
        # SyntaxError), after the workbook opened fine
        raise BiaskitError(
            "E121",
            f"{path} is not a readable .xlsx workbook: a sheet is damaged ({type(exc).__name__}: {str(exc)[:120]})",
            value=str(path),
            fix="open and re-save it in Excel/LibreOffice, or download the spreadsheet again",
        ) from None
    filtered = Counter(pr.kind for pr in res.problems if not pr.kept)
    facts = {**res.facts, "problems": [pr.as_dict() for pr in res.problems], "subjects": str(subjects) if subjects is not None else "bundled"}
    return LoadResult(res.table, "westslavic_xlsx", str(path), filtered, facts)


# --------------------------------------------------------------------------- biaskit / Hub


def load_staged(source: str | Path, config: str | None = None, split: str | None = None, revision: str | None = None) -> LoadResult:
    """A config of a biaskit-staged folder or Hub repo, as the original table (labels decoded)."""
    import datasets as hf_datasets

    src = str(source)
    configs: list[str] | None = None
    name: str | None  # the config to load
    if Path(src).is_dir():
        card, _ = read_card(src)
        configs = [c["config_name"] for c in card.get("configs") or []]
        name = _pick_config(configs, config, src)
        dd = load_config(src, name)
    else:
        name = config

        prepare_hub()  # no network: one probe, then offline at once (no retries for ~50 s)
        try:
            dd = hf_datasets.load_dataset(src.removeprefix("hf://datasets/"), name, revision=revision)
        except Exception as exc:
            raise BiaskitError(
                "E054",
                f"could not load Hub dataset {src!r}: {redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}",
                value=src,
                fix=_load_fix(),
            ) from exc
    splits = list(dd)
    if split is not None:
        check_choice("E054", f"split {split!r} not in {src}", split, dd, fix="pick one of the splits", options=splits)
        splits = [split]
    tables = [decode(dd[s]) for s in splits]
    t = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    from biaskit.datasets.stage import detect_stage

    return LoadResult(t, "biaskit", src, Counter(), {"config": name, "splits": splits}, stage=detect_stage(t, None, name))


def _pick_config(configs: list[str], config: str | None, src: str) -> str:
    if config is None:
        if len(configs) == 1:
            return configs[0]
        raise BiaskitError("E054", f"{src} has {len(configs)} configs; choose one", value=None, options=configs, fix="pass --config NAME")
    check_choice("E054", f"config {config!r} not in {src}", config, configs, fix="pass one of the configs with --config")
    return config


def load_source(
    source: str | Path,
    *,
    kind: str | None = None,
    config: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    language: str | None = None,
    domains: list[str] | None = None,
    keep_empty: bool = False,
    subjects: str | Path | None = None,
) -> LoadResult:
    """Load ``source`` (path or Hub id) into a biaskit table; see the module docstring for the kinds.

    ``subjects``: West Slavic spreadsheet only, a subject-list file replacing the bundled list for the
    languages it names; ``language`` then keeps only that language's sheet."""
    src = str(source)
    if kind is not None and kind not in KINDS:
        raise BiaskitError("E054", "unknown source kind", value=kind, options=KINDS, fix="use one of the kinds or omit --kind")
    k = kind or detect_kind(src)
    if subjects is not None and k != "westslavic_xlsx":
        raise BiaskitError(
            "E120",
            "--subjects applies only to a West Slavic template spreadsheet",
            value=str(subjects),
            fix="drop --subjects, or load a template_sentences.xlsx-style workbook",
        )
    if k == "hub":  # a Hub repo: biaskit-staged, or BOLD's layout
        res = load_staged(src, config, split, revision)
        if {"domain", "name", "category", "prompts"} <= set(res.table.column_names):
            return bold_hub_to_prompts(res.table, src, domains=domains, keep_empty=keep_empty)
        return res
    if k == "biaskit":
        return load_staged(src, config, split, revision)
    if k == "bold_github":
        return load_bold(src, layout="github", domains=domains, keep_empty=keep_empty)
    if k == "bold_hub":
        if Path(src).is_dir():
            raise BiaskitError("E054", "--kind bold_hub needs a JSON Lines/Parquet file or a Hub id", value=src, fix="give the file")
        if not Path(src).exists():
            res = load_staged(src, config, split, revision)
            return bold_hub_to_prompts(res.table, src, domains=domains, keep_empty=keep_empty)
        return load_bold_hub_file(src, domains=domains, keep_empty=keep_empty)
    if k == "holistic_csv":
        return load_holistic_csv(src)
    if k == "lm_eval":  # lm-evaluation-harness --log_samples output of a `biaskit export lm-eval` task
        imported = import_lmeval(src)
        return LoadResult(imported.table, k, src, facts=imported.facts, stage="generations")
    if k == "bbq_jsonl":  # BBQ's published data/<Category>.jsonl (a file or the folder), extra keys kept
        return LoadResult(read_published(src), k, src, stage=None)
    if k == "crows_pairs":
        table, filtered, facts = read_crows_pairs(src)
        return LoadResult(table, k, src, filtered, facts)
    if k == "westslavic_xlsx":
        return load_westslavic(src, subjects=subjects, languages=[language] if language else None)
    return load_honest(src, language)


def _load_fix() -> str:
    """The fix for a Hub dataset that did not load: names only offline variables the user really set."""
    set_vars = [v for v in ("HF_DATASETS_OFFLINE",) if os.environ.get(v, "").strip().lower() in {"1", "true", "yes"}]
    extra = f"; unset {'/'.join(set_vars)} (set here) to download" if set_vars else ""
    return "check the id and --config; or " + online_step("it") + extra
