"""Dataset cards computed from the staged data and its manifests.

Every fact in a card comes from the tables (counts, label sets, models, pages, rounds, agreement figures),
from the manifests written next to them (commands, settings, seeds, library versions, inputs with sha256)
or from run facts passed in (``info``). Nothing is typed by hand except the fixed texts about the seed
datasets (their licences and citations), and those are only included for sources present in the data.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import yaml

from biaskit.assets import display_name
from biaskit.datasets.features import label_summary
from biaskit.errors import BiaskitError
from biaskit.manifest import metric_description
from biaskit.secrets import redact

#: source value (``source`` column) -> (licence id on the Hub, licence name, why)
SOURCE_LICENCES: dict[str, tuple[str, str, str]] = {
    "bold": (
        "cc-by-sa-4.0",
        "CC BY-SA 4.0",
        "BOLD prompts are Wikipedia text (CC BY-SA, in the version each row's `license` "
        "column names); BOLD's own published files are released under CC BY-SA 4.0",
    ),
    "wikipedia": ("cc-by-sa-4.0", "CC BY-SA 4.0", "Wikipedia text is licensed CC BY-SA"),
    "holistic_bias": ("cc-by-sa-4.0", "CC BY-SA 4.0", "HolisticBias data (descriptors, nouns, templates) is CC BY-SA 4.0"),
    "honest": ("mit", "MIT", "HONEST templates are released under the MIT licence"),
    "crows_pairs": ("cc-by-sa-4.0", "CC BY-SA 4.0", "CrowS-Pairs (nyu-mll/crows-pairs) is released under CC BY-SA 4.0"),
    "west_slavic": (
        "other",
        "no licence",
        "the West Slavic study's template_sentences.xlsx (copenlu/slavic-gender-bias) is "
        "published without a licence: ask its authors before publishing these sentences",
    ),
    "templates": (
        "apache-2.0",
        "Apache-2.0",
        "The gendered fill-mask templates (cs/pl/sk/en starter sets in "
        "`biaskit/data/templates`) were written by the biaskit team and ship with biaskit under its Apache-2.0 licence",
    ),
}
#: licence names found in ``license`` columns -> Hub licence id
LICENCE_IDS = {
    "cc by-sa 4.0": "cc-by-sa-4.0",
    "cc-by-sa-4.0": "cc-by-sa-4.0",
    "cc by-sa 3.0": "cc-by-sa-3.0",
    "cc-by-sa-3.0": "cc-by-sa-3.0",
    "mit": "mit",
    "apache-2.0": "apache-2.0",
    "apache 2.0": "apache-2.0",
    "cc by 4.0": "cc-by-4.0",
    "cc-by-4.0": "cc-by-4.0",
    "cc0-1.0": "cc0-1.0",
    "cc0": "cc0-1.0",
}
_SHARE_ALIKE = ("cc-by-sa-4.0", "cc-by-sa-3.0")
_PERMISSIVE = ("mit", "apache-2.0", "cc-by-4.0", "cc0-1.0", "bsd-3-clause")

CITATIONS: dict[str, str] = {
    "bold": """@inproceedings{dhamala2021bold,
  title={{BOLD}: Dataset and Metrics for Measuring Biases in Open-Ended Language Generation},
  author={Dhamala, Jwala and Sun, Tony and Kumar, Varun and Krishna, Satyapriya and Pruksachatkun, Yada and Chang, Kai-Wei and Gupta, Rahul},
  booktitle={Proceedings of the 2021 ACM Conference on Fairness, Accountability, and Transparency},
  pages={862--872}, year={2021}
}""",
    "holistic_bias": """@inproceedings{smith2022imsorry,
  title={{``I'm sorry to hear that''}: Finding New Biases in Language Models with a Holistic Descriptor Dataset},
  author={Smith, Eric Michael and Hall, Melissa and Kambadur, Melanie and Presani, Eleonora and Williams, Adina},
  booktitle={Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing},
  pages={9180--9211}, year={2022}
}""",
    "honest": """@inproceedings{nozza2021honest,
  title={{HONEST}: Measuring Hurtful Sentence Completion in Language Models},
  author={Nozza, Debora and Bianchi, Federico and Hovy, Dirk},
  booktitle={Proceedings of the 2021 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies},
  pages={2398--2406}, year={2021}
}""",
    "crows_pairs": """@inproceedings{nangia2020crows,
  title={{CrowS}-Pairs: A Challenge Dataset for Measuring Social Biases in Masked Language Models},
  author={Nangia, Nikita and Vania, Clara and Bhalerao, Rasika and Bowman, Samuel R.},
  booktitle={Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing (EMNLP)},
  pages={1953--1967}, year={2020}
}""",
    "west_slavic": """@inproceedings{martinkova2023westslavic,
  title={Measuring Gender Bias in {West Slavic} Language Models},
  author={Martinkov{\'a}, Sandra and Sta{\'n}czak, Karolina and Augenstein, Isabelle},
  booktitle={Proceedings of the 9th Workshop on Slavic Natural Language Processing (SlavicNLP 2023)},
  year={2023}, eprint={2304.05783}, archivePrefix={arXiv}
}""",
    "regard": """@inproceedings{sheng2019woman,
  title={The Woman Worked as a Babysitter: On Biases in Language Generation},
  author={Sheng, Emily and Chang, Kai-Wei and Natarajan, Premkumar and Peng, Nanyun},
  booktitle={Proceedings of the 2019 Conference on Empirical Methods in Natural Language Processing and the 9th International Joint Conference on Natural Language Processing (EMNLP-IJCNLP)},
  pages={3407--3412}, year={2019}
}""",
    "vader": """@inproceedings{hutto2014vader,
  title={{VADER}: A Parsimonious Rule-based Model for Sentiment Analysis of Social Media Text},
  author={Hutto, Clayton J. and Gilbert, Eric},
  booktitle={Proceedings of the International AAAI Conference on Web and Social Media},
  volume={8}, number={1}, pages={216--225}, year={2014}
}""",
}

#: known limitations of the seed sources (included only when the source is in the data)
SOURCE_LIMITATIONS = {
    "bold": "BOLD-style prompts are the first words of Wikipedia sentences: they inherit Wikipedia's coverage and "
    "editorial biases, and prompts about one entity are not independent.",
    "wikipedia": "Wikipedia baseline texts reflect Wikipedia's coverage and editorial biases.",
    "holistic_bias": "HolisticBias descriptors and templates are US-English-centric; sentences are templated, not natural text.",
    "honest": "HONEST templates are short, templated sentences with one identity term; completions are single words.",
    "crows_pairs": "CrowS-Pairs: many pairs differ in more than the group term or do not describe a stereotype (Blodgett et "
    "al. 2021); check them with `biaskit templates audit-pairs`.",
    "west_slavic": "West Slavic study sentences: the Polish ones were machine translated; subject categories come from "
    "biaskit's subject-phrase lists (or the publisher's own), not from the study.",
    "templates": "The gendered cs/pl/sk templates are a starter set written by the biaskit team and not yet validated by "
    "native speakers (`validator` is null).",
}

TASKS = {
    "prompts": ["text-generation"],
    "generations": ["text-generation"],
    "scores": ["text-classification"],
    "samples": ["text-classification"],
    "annotations": ["text-classification"],
    "agreement": [],
}
_SIZE_BINS = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
)
_STD_MANIFEST_KEYS = {
    "biaskit_version",
    "command",
    "stage",
    "config",
    "seed",
    "inputs",
    "created_at",
    "python",
    "platform",
    "libraries",
    "output",
    "finished_at",
}


def size_category(n: int) -> str:
    for bound, name in _SIZE_BINS:
        if n < bound:
            return name
    return "n>1T"


def _values(t: pa.Table, col: str) -> list:
    return t.column(col).to_pylist() if col in t.column_names else []


def _counts(t: pa.Table, col: str) -> Counter:
    return Counter(v for v in _values(t, col) if v is not None)


def _one_line(v: Any) -> str:
    """``v`` as one line of text: line breaks, tabs and other control characters become spaces (a value from the
    data can then never start a Markdown heading, list item or YAML key of its own in the card)."""
    return re.sub(r"\s+", " ", "".join(ch if ch.isprintable() else " " for ch in str(v))).strip()


def _code(v: Any) -> str:
    """``v`` as a Markdown inline code span that its own backticks and pipes cannot end (CommonMark: a fence
    longer than any backtick run inside; ``|`` escaped so a table row stays one row); one line."""
    text = _one_line(v).replace("|", "\\|")
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fmt_counts(c: Mapping, limit: int = 20) -> str:
    items = sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0])))
    s = ", ".join(f"{_code(k)} {v}" for k, v in items[:limit])
    if len(items) > limit:
        s += f", ... ({len(items) - limit} more)"
    return s or "(none)"


def _row_keys(cfg, mask) -> set:
    """Identities of the rows where ``mask`` holds: their ``prompt_id`` (the same prompt staged in several configs,
    e.g. prompts, generations and scores, is one row of its source), else the row's position in this config."""
    ids = _values(cfg.table, "prompt_id")
    return {
        (("prompt", i) if i is not None else (cfg.name, k)) if ids else (cfg.name, k)
        for k, (i, keep) in enumerate(zip(ids or [None] * len(mask), mask))
        if keep
    }


def source_rows(configs) -> dict[str, tuple[int, list[str]]]:
    """source -> (distinct source rows, configs holding them). A row's source is its ``source`` column; Wikipedia
    baseline rows (``model == "wikipedia"``) count as ``wikipedia``. Rows are told apart by ``prompt_id``, so the
    same prompt staged in several configs counts once."""
    keys: dict[str, set] = {}
    where: dict[str, list[str]] = {}
    for cfg in configs:
        t = cfg.table
        models = _values(t, "model")
        wiki = [m == "wikipedia" for m in models] if models else [False] * t.num_rows
        srcs = _values(t, "source") or [None] * t.num_rows
        per: dict[str, list[bool]] = {}
        for k, (src, w) in enumerate(zip(srcs, wiki)):
            name = "wikipedia" if w else src
            if name is not None:
                per.setdefault(name, [False] * t.num_rows)[k] = True
        for name, mask in per.items():
            keys.setdefault(name, set()).update(_row_keys(cfg, mask))
            where.setdefault(name, []).append(cfg.name)
    return {k: (len(v), where[k]) for k, v in keys.items()}


def source_licences(configs) -> dict[str, dict[str, int]]:
    """source -> {value of the rows' ``license`` column -> distinct rows} (rows told apart as in :func:`source_rows`;
    rows with no ``license`` value count under ``""``)."""
    keys: dict[tuple[str, str], set] = {}
    for cfg in configs:
        t = cfg.table
        models = _values(t, "model")
        wiki = [m == "wikipedia" for m in models] if models else [False] * t.num_rows
        srcs = _values(t, "source") or [None] * t.num_rows
        lics = _values(t, "license") or [None] * t.num_rows
        per: dict[tuple[str, str], list[bool]] = {}
        for k, (src, w, lic) in enumerate(zip(srcs, wiki, lics)):
            name = "wikipedia" if w else src
            if name is not None:
                per.setdefault((name, lic or ""), [False] * t.num_rows)[k] = True
        for key, mask in per.items():
            keys.setdefault(key, set()).update(_row_keys(cfg, mask))
    out: dict[str, dict[str, int]] = {}
    for (src, lic), ks in sorted(keys.items()):
        out.setdefault(src, {})[lic] = len(ks)
    return out


def _sources(configs) -> Counter:
    return Counter({k: n for k, (n, _) in source_rows(configs).items()})


def licence_of(configs, override: str | None = None) -> tuple[str, list[str]]:
    """The dataset licence id and the lines explaining its inheritance."""
    lines: list[str] = []
    parts: dict[str, str] = {}
    per_lic = source_licences(configs)
    for src, (n, where) in sorted(source_rows(configs).items()):
        cfgs = ", ".join(f"`{c}`" for c in where)
        carried = {k: v for k, v in per_lic.get(src, {}).items() if k}
        if carried:
            # the rows say which licence they carry: say that, per licence, rather than one name for the source
            said = "; ".join(f"{v} carry `{k}`" for k, v in sorted(carried.items()))
            none = per_lic.get(src, {}).get("", 0)
            said += f"; {none} carry no `license` value" if none else ""
            why = SOURCE_LICENCES.get(src, (None, None, "no licence is known for this source beyond its rows' `license` column"))[2]
            lines.append(f"- `{src}`: {n} distinct rows (in {cfgs}): {said} (the rows' `license` column). {why}.")
            if src in SOURCE_LICENCES:
                parts[src] = (
                    LICENCE_IDS.get(sorted(carried)[0].strip().lower(), SOURCE_LICENCES[src][0]) if len(carried) == 1 else SOURCE_LICENCES[src][0]
                )
        elif src in SOURCE_LICENCES:
            lid, lname, why = SOURCE_LICENCES[src]
            parts[src] = lid
            lines.append(f"- `{src}`: {n} distinct rows (in {cfgs}): {lname}. {why}.")
        else:
            lines.append(f"- {_code(src)}: {n} distinct rows (in {cfgs}): no licence is known for this source; check it before publishing.")
    lic_keys: dict[str, set] = {}
    lic_where: dict[str, list[str]] = {}
    for cfg in configs:
        vals = _values(cfg.table, "license")
        for name in sorted({v for v in vals if v is not None}):
            lic_keys.setdefault(name, set()).update(_row_keys(cfg, [v == name for v in vals]))
            lic_where.setdefault(name, []).append(cfg.name)
    for name, ks in sorted(lic_keys.items()):
        lid = LICENCE_IDS.get(str(name).strip().lower(), "other")
        parts[f"license:{name}"] = lid
        lines.append(f"- `license` column: {len(ks)} distinct rows carry {_code(name)} (in {', '.join(f'`{c}`' for c in lic_where[name])}).")
    ids = set(parts.values())
    sa = sorted(i for i in ids if i in _SHARE_ALIKE)
    if sa:
        result = "cc-by-sa-4.0" if "cc-by-sa-4.0" in sa else sa[0]
        lines.append(
            f"- ShareAlike: the combined dataset (including model outputs derived from these prompts) is "
            f"released under {result} as the share-alike terms require"
            + (
                "; CC BY-SA 3.0 allows adaptations under a later version (4.0), and every row keeps its own licence in `license`."
                if result == "cc-by-sa-4.0" and "cc-by-sa-3.0" in ids
                else "."
            )
        )
    elif len(ids) == 1:
        result = ids.pop()
    elif ids and ids <= set(_PERMISSIVE):
        result = "other"
        lines.append(f"- parts carry different permissive licences ({', '.join(sorted(ids))}); each part keeps its own.")
    else:
        result = "unknown" if not ids else "other"
        if not ids:
            lines.append("- no licence is recorded in the data (no known `source`, no `license` column).")
    if override:
        ov = LICENCE_IDS.get(override.strip().lower(), override.strip().lower())
        if sa and ov not in _SHARE_ALIKE:
            raise BiaskitError(
                "E050",
                f"licence {override!r} is not allowed: the data contains share-alike ({', '.join(sa)}) text",
                value=override,
                options=list(_SHARE_ALIKE),
                fix="keep the computed licence (omit --license) or use a share-alike licence",
            )
        lines.append(f"- licence set by the publisher: {ov} (computed from the data: {result}).")
        result = ov
    return result, lines


def _languages(configs) -> list[str]:
    langs: set[str] = set()
    for cfg in configs:
        langs |= set(_counts(cfg.table, "language"))
    return sorted(langs)


def _tags(configs) -> list[str]:
    tags = {"bias", "fairness", "biaskit"}
    tags |= {str(s).replace("_", "-") for s in _sources(configs)}
    for cfg in configs:
        for m in _metrics(cfg.table):
            tags.add(_metric_tag(configs, m))
        if _has_human_labels(cfg):
            tags.add("human-annotation")
    return sorted(tags)


def _metric_backend(cfg, metric: str) -> str | None:
    """The backend a config's manifest records for ``metric`` (e.g. ``offline`` for toxicity), if any."""
    m = metric_description(cfg.manifest, metric)
    if isinstance(m, dict):
        return (m.get("info") or {}).get("backend") or (m.get("config") or {}).get("backend")
    return None


def _metric_tag(configs, metric: str) -> str:
    """The tag a metric column earns. Toxicity scored by the offline backend (alt-profanity-check, recorded in a
    config's manifest; derived configs such as samples carry the same columns) detects profanity."""
    if metric == "toxicity":
        backends = {_metric_backend(c, metric) for c in configs if f"{metric}_error" in c.table.column_names} - {None}
        if backends == {"offline"}:
            return "profanity"
    return metric


def _has_human_labels(cfg) -> bool:
    """True when the config holds human annotations: annotation rows with a label, or agreement figures."""
    if cfg.stage == "annotations":
        return any(v is not None for v in _values(cfg.table, "label"))
    if cfg.stage == "agreement":
        return cfg.table.num_rows > 0
    return False


def _metrics(t: pa.Table) -> list[str]:
    return sorted({c[: -len("_error")] for c in t.column_names if c.endswith("_error") and c != "error"})


def build_card(configs, *, pretty_name: str | None = None, license: str | None = None, info: Mapping[str, Any] | None = None) -> tuple[dict, str]:
    """The card's YAML data (dict) and Markdown body for staged configs (see :mod:`biaskit.datasets.stage`)."""
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    import datasets as hf_datasets

    lic, lic_lines = licence_of(configs, license)
    total = sum(c.rows for c in configs)
    tasks = sorted(
        {t for c in configs for t in TASKS.get(c.stage or "", [])}
        | ({"fill-mask"} if any(True in _values(c.table, "masked") or "fill_mask" in _values(c.table, "kind") for c in configs) else set())
    )
    pretty = pretty_name or "biaskit: " + ", ".join(dict.fromkeys(c.table_name for c in configs))
    data = DatasetCardData(
        pretty_name=pretty,
        license=lic,
        language=_languages(configs) or None,
        task_categories=tasks or None,
        size_categories=[size_category(total)],
        tags=_tags(configs),
    )
    data["configs"] = [
        {
            "config_name": c.name,
            **({"default": True} if i == 0 else {}),
            "data_files": [{"split": s, "path": f"data/{c.name}/{s}-*"} for s in c.splits],
        }
        for i, c in enumerate(configs)
    ]
    infos = DatasetInfosDict()
    for c in configs:
        infos[c.name] = hf_datasets.DatasetInfo(
            features=c.features,
            config_name=c.name,
            splits=hf_datasets.SplitDict(
                {s.name: hf_datasets.SplitInfo(name=s.name, num_bytes=s.num_bytes, num_examples=s.rows) for s in c.splits.values()}
            ),
            download_size=sum(s.file_bytes for s in c.splits.values()),
            dataset_size=sum(s.num_bytes for s in c.splits.values()),
        )
    infos.to_dataset_card_data(data)

    safe_info = public(json.loads(redact(json.dumps(dict(info or {}), default=str))))  # secrets and local paths out (keys too)
    return data.to_dict(), _body(configs, pretty, (lic, lic_lines), safe_info)


def render_card(card_data: Mapping, body: str) -> str:
    head = yaml.safe_dump(dict(card_data), sort_keys=False, allow_unicode=True, width=1000)
    return redact(f"---\n{head}---\n\n{body}")


def parse_card(text: str) -> tuple[dict, str]:
    """``(yaml dict, body)`` of a dataset card."""
    if not text.startswith("---"):
        raise BiaskitError("E050", "dataset card has no YAML header", fix="restage the folder with biaskit hub stage")
    # the header ends at the next line that is exactly "---" (as the Hub reads it): a value such as a
    # pretty name may itself contain "---"
    lines = text.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r") == "---"), None)
    if end is None:
        raise BiaskitError("E050", "dataset card YAML header has no closing --- line", fix="restage the folder with biaskit hub stage")
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise BiaskitError(
            "E050",
            f"dataset card YAML header does not parse: {' '.join(str(exc).split())[:200]}",
            fix="restage the folder with biaskit hub stage (do not edit the card header by hand)",
        ) from exc
    if not isinstance(meta, dict):
        raise BiaskitError(
            "E050", "dataset card YAML header is not a mapping", value=type(meta).__name__, fix="restage the folder with biaskit hub stage"
        )
    return meta, "\n".join(lines[end + 1 :]).lstrip("\n")


# --------------------------------------------------------------------------- body


def _body(configs, pretty: str, licence: tuple[str, list[str]], info: Mapping[str, Any]) -> str:
    """The card's text below its YAML header (``licence``: the licence id and the lines that say where it comes from)."""
    lic, lic_lines = licence
    total = sum(c.rows for c in configs)
    out = [f"# {_one_line(pretty)}", ""]
    out.append(
        f'{total} rows in {len(configs)} config(s), staged with biaskit. Load a config with `datasets.load_dataset(REPO, "{configs[0].name}")`.'
    )
    out += ["", "| config | stage | splits (rows) | columns | source table |", "|---|---|---|---|---|"]
    for c in configs:
        splits = ", ".join(f"`{s}` ({v.rows})" for s, v in c.splits.items())
        sel = f" where {_code(c.selection[0])} = {_code(repr(c.selection[1]))}" if c.selection else ""
        out.append(f"| `{c.name}` | {c.stage or '?'} | {splits} | {len(c.columns)} | {_code(c.table_name)}{sel} |")
    out += ["", "## How the data was built", ""]
    for c in configs:
        out.append(f"### `{c.name}`")
        out.append("")
        out += _provenance(c)
        out += _facts(c, configs)
        labels = label_summary(c.features)
        if labels:
            out.append("- Class labels: " + "; ".join(f"`{k}` = {v}" for k, v in labels.items()))
        out.append("")
    if info:
        out += [
            "## Run facts",
            "",
            "Facts recorded by the stages of the run that produced this dataset:",
            "",
            "```json",
            json.dumps(info, indent=1, ensure_ascii=False, default=str, sort_keys=True),
            "```",
            "",
        ]
    out += ["## Licence", "", f"Dataset licence: `{lic}`.", ""] + (lic_lines or ["- (no licence recorded)"]) + [""]
    cites = _citations(configs)
    if cites:
        out += ["## Citations", "", "Cite the datasets and methods this data was built from:", "", "```bibtex", "\n\n".join(cites), "```", ""]
    out += ["## Known limitations", ""] + _limitations(configs, info) + [""]
    return "\n".join(out)


_ABS_PATH = re.compile(r"^(/|[A-Za-z]:[\\/]|~/)")


def public(obj: Any) -> Any:
    """``obj`` with local absolute paths reduced to their file names (a public card shows no local folders), in
    values and in keys (lm-eval's runs are keyed by their results file); two keys reduced to one name stay apart
    as ``name (2)``."""
    if isinstance(obj, dict):
        out: dict = {}
        for k, v in obj.items():
            key = public(k) if isinstance(k, str) else k
            n = 1
            while key in out:
                n += 1
                key = f"{public(k)} ({n})"
            out[key] = public(v)
        return out
    if isinstance(obj, (list, tuple)):
        return [public(v) for v in obj]
    if isinstance(obj, str) and _ABS_PATH.match(obj) and "\n" not in obj and len(obj) < 1000:
        return re.split(r"[\\/]", obj.rstrip("/\\"))[-1] or obj
    return obj


def _provenance(c) -> list[str]:
    m = public(c.manifest)
    if not m:
        return ["- Provenance: no manifest was found next to the source table."]
    lines = [
        f"- Produced by `{m.get('command')}` (biaskit {m.get('biaskit_version')}) at {m.get('finished_at') or m.get('created_at')}"
        + (f", seed {m['seed']}" if m.get("seed") is not None else "")
        + "."
    ]
    mets = (m.get("config") or {}).get("metrics") if isinstance(m.get("config"), dict) else None
    if isinstance(mets, dict) and any(isinstance(v, dict) and v.get("version") for v in mets.values()):
        lines.append(
            "- Metric versions: "
            + ", ".join(
                f"`{k}` v{v.get('version')}" + (f" on `{v['text_column']}`" if v.get("text_column") else "")
                for k, v in sorted(mets.items())
                if isinstance(v, dict)
            )
        )
    if m.get("config"):
        lines.append(f"- Settings: `{json.dumps(m['config'], ensure_ascii=False, sort_keys=True, default=str)}`")
    for i in m.get("inputs") or []:
        lines.append(f"- Input `{i.get('path')}` (sha256 `{i.get('sha256') or '?'}`)")
    libs = m.get("libraries") or {}
    if libs:
        lines.append("- Library versions: " + ", ".join(f"{k} {v}" for k, v in sorted(libs.items())))
    extra = {k: v for k, v in m.items() if k not in _STD_MANIFEST_KEYS}
    if extra:
        whole = (
            f" (of the whole source table `{c.table_name}`, before the split by `{c.selection[0]}`; the lines below are this config's)"
            if c.selection
            else ""
        )
        lines.append(f"- Recorded facts{whole}: `{json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str)}`")
    return lines


def _facts(c, configs=()) -> list[str]:
    t: pa.Table = c.table
    cols = set(t.column_names)
    lines: list[str] = []
    for col, label in (("source", "Sources"), ("language", "Languages"), ("domain", "Domains"), ("axis", "HolisticBias axes")):
        if col in cols and _counts(t, col):
            lines.append(f"- {label}: {_fmt_counts(_counts(t, col))}")
    if "group" in cols and _counts(t, "group"):
        lines.append(f"- Groups: {len(_counts(t, 'group'))} ({_fmt_counts(_counts(t, 'group'), 10)})")
    if "descriptor" in cols and _counts(t, "descriptor"):
        lines.append(f"- Descriptors: {len(_counts(t, 'descriptor'))}; nouns: {len(_counts(t, 'noun'))}; templates: {len(_counts(t, 'template'))}")
    if "template_id" in cols and _counts(t, "template_id") and "descriptor" not in cols:
        lines.append(f"- Templates: {len(_counts(t, 'template_id'))}")
    if "page_id" in cols and _counts(t, "page_id"):
        pages = {}
        for title, pid, rev, wiki in zip(
            _values(t, "page_title"),
            _values(t, "page_id"),
            _values(t, "revision_id") or [None] * t.num_rows,
            _values(t, "wiki") or [None] * t.num_rows,
        ):
            if pid is not None:
                pages[(wiki, pid)] = (title, rev)
        shown = sorted(pages.items(), key=lambda kv: str(kv[1][0]))
        lines.append(
            f"- Wikipedia pages: {len(pages)} from {', '.join(sorted({str(w) for w, _ in pages}))}; "
            "page (page id, revision id): "
            + ", ".join(f"{_one_line(ti)} ({pid}, {rev})" for (w, pid), (ti, rev) in shown[:30])
            + (f", ... ({len(shown) - 30} more; every row has `page_id` and `revision_id`)" if len(shown) > 30 else "")
        )
        lines += _retrieved_lines(t)
    if "model" in cols:
        per_model = Counter(zip(_values(t, "model"), _values(t, "kind") or [None] * t.num_rows))
        lines.append(
            "- Models (kind: rows): "
            + ", ".join(
                f"{_code(m)}{f' = {display_name(m)}' if display_name(m) else ''} ({_one_line(k)}: {n})"
                for (m, k), n in sorted(per_model.items(), key=lambda x: str(x))
            )
        )
        if "model_revision" in cols and _counts(t, "model_revision"):
            lines.append(f"- Model revisions: {_fmt_counts(_counts(t, 'model_revision'))}")
        if "generation_config" in cols and _counts(t, "generation_config"):
            lines.append(f"- Generation settings: {_fmt_counts(_counts(t, 'generation_config'), 5)}")
        if "seed" in cols and _counts(t, "seed"):
            lines.append(f"- Seeds: {sorted(_counts(t, 'seed'))}")
    if "error" in cols:
        n = sum(1 for v in _values(t, "error") if v)
        if n:
            lines.append(f"- Rows with an `error` (no output): {n} ({_fmt_counts(_counts(t, 'error'), 5)})")
    for m in _metrics(t):
        err = sum(1 for v in _values(t, f"{m}_error") if v)
        scored = t.num_rows - err
        label_col = next((x for x in (f"{m}_label", f"{m}_hurtful") if x in cols), None)
        dist = f"; labels: {_fmt_counts(_counts(t, label_col))}" if label_col else ""
        what = (
            (" (offline backend alt-profanity-check: a profanity detector, not a toxicity classifier; `toxic` means profane)")
            if _metric_tag(configs or [c], m) == "profanity"
            else ""
        )
        lines.append(f"- Metric `{m}`: {scored} rows scored, {err} with `{m}_error`{dist}{what}")
    if "round" in cols:
        lines.append(f"- Rounds: {_fmt_counts(_counts(t, 'round'))}")
    if "task_type" in cols and _counts(t, "task_type"):
        lines.append(f"- Task types: {_fmt_counts(_counts(t, 'task_type'))}")
    if "annotator" in cols and c.stage == "annotations":
        lines.append(f"- Annotators: {len(_counts(t, 'annotator'))}; labels: {_fmt_counts(_counts(t, 'label'))}")
        if "platform" in cols and _counts(t, "platform"):
            lines.append(f"- Platforms: {_fmt_counts(_counts(t, 'platform'))}")
    if "is_gold" in cols:
        lines.append(f"- Gold items: {sum(1 for v in _values(t, 'is_gold') if v)}")
    if c.stage == "agreement" and {"measure", "estimate"} <= cols:
        lines += ["", "| round | measure | metric | estimate | n_items | reason |", "|---|---|---|---|---|---|"]
        for r in t.select([x for x in ("round", "measure", "metric", "estimate", "n_items", "reason") if x in cols]).to_pylist()[:60]:
            v = r.get("estimate")
            cell = lambda x: _one_line(x).replace("|", "\\|")  # noqa: E731 - one table row per result row
            lines.append(
                f"| {cell(r.get('round'))} | {cell(r.get('measure'))} | {cell(r.get('metric') or '')} | "
                f"{'' if v is None else round(v, 4)} | {r.get('n_items') or ''} | {cell(r.get('reason') or '')} |"
            )
        lines.append("")
    return lines


_DUMP_DATE = re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?!\d)")


def _retrieved_lines(t: pa.Table) -> list[str]:
    """When the text was taken from Wikipedia. Rows read from a dump file (``wiki`` = ``<site>:<dump file>``) carry
    the time biaskit *read the file* in ``retrieved_at``, not the dump's date: for them the card names the dump and
    its date (from a dated dump file name such as ``enwiki-20240601-pages-articles.xml.bz2``, else "not in the file
    name"); rows fetched from a live wiki (``wiki`` = an API URL) show their fetch times as "Retrieved"."""
    lines = []
    dumps: dict[str, list[str]] = {}
    live: list[str] = []
    for wiki, ret in zip(_values(t, "wiki") or [None] * t.num_rows, _values(t, "retrieved_at") or [None] * t.num_rows):
        w = str(wiki or "")
        if re.search(r"\.xml(\.bz2)?$|\.bz2$", w):
            dumps.setdefault(w.split(":", 1)[-1], []).append(ret)
        elif ret:
            live.append(ret)
    if live:
        live.sort()
        lines.append(f"- Retrieved from the live wiki: {_one_line(live[0])} to {_one_line(live[-1])}")
    for dump, rets in sorted(dumps.items()):
        m = _DUMP_DATE.search(dump)
        date = f"dump of {m.group(1)}-{m.group(2)}-{m.group(3)}" if m else "dump date not in the file name"
        read = sorted(r for r in rets if r)
        lines.append(
            f"- From the dump file {_code(dump)} ({date}; the text is each page's revision in the dump, see `revision_id`)"
            + (f"; biaskit read the file at {_one_line(read[0])}" if read else "")
            + " (`retrieved_at` records that reading time)"
        )
    return lines


def _citations(configs) -> list[str]:
    srcs = _sources(configs)
    keys = [s for s in ("bold", "holistic_bias", "honest", "crows_pairs") if s in srcs]
    if "west_slavic" in srcs or "templates" in srcs:  # the study's sheet, or biaskit's templates built on its design
        keys.append("west_slavic")
    metrics = {m for c in configs for m in _metrics(c.table)}
    keys += [m for m in ("regard", "vader") if m in metrics]
    return [CITATIONS[k] for k in keys]


def _limitations(configs, info: Mapping[str, Any]) -> list[str]:
    lines = [f"- {SOURCE_LIMITATIONS[s]}" for s in sorted(_sources(configs)) if s in SOURCE_LIMITATIONS]
    for c in configs:
        t = c.table
        if "error" in t.column_names:
            n = sum(1 for v in _values(t, "error") if v)
            if n:
                lines.append(f"- `{c.name}`: {n} of {t.num_rows} rows have no output (see the `error` column).")
        for m in _metrics(t):
            n = sum(1 for v in _values(t, f"{m}_error") if v)
            if n:
                lines.append(f"- `{c.name}`: metric `{m}` could not score {n} of {t.num_rows} rows (see `{m}_error`).")
        if c.stage == "annotations" and "annotator" in t.column_names:
            per_item = Counter(zip(_values(t, "sample_id"), _values(t, "round")))
            if per_item and min(per_item.values()) < 3:
                lines.append(f"- `{c.name}`: {sum(1 for v in per_item.values() if v < 3)} items have fewer than 3 annotations.")
        if "model" in t.column_names:
            models = {m for m in _values(t, "model") if m and m != "wikipedia"}
            if models:
                lines.append(
                    f"- `{c.name}`: outputs of {len(models)} model(s) only ({', '.join(_code(m) for m in sorted(models))}); "
                    "results do not transfer to other models."
                )
    notes = info.get("notes") if isinstance(info, Mapping) else None
    if isinstance(notes, Mapping):
        for stage, line in notes.items():
            if "skip" in str(line).lower() or "not available" in str(line).lower():
                lines.append(f"- run stage {_code(stage)}: {_one_line(line)}")
    return lines or ["- none recorded"]
