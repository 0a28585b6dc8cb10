"""Every number in a staged dataset card, recomputed from the staged files alone (the parquet shards
and the card), independently of the card code: row and column counts, byte sizes, per-config facts, licence
row counts (each source once, no double counting) and tags."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from biaskit.assets import display_name
from biaskit.datasets.card import parse_card, size_category
from biaskit.datasets.features import decode
from biaskit.datasets.stage import TableSpec, stage_tables
from biaskit.datasets.validate import load_config

_CODE = re.compile(r"`[^`]*`")


def _counts_text(c: Counter, limit: int) -> str:
    items = sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0])))
    s = ", ".join(f"`{k}` {v}" for k, v in items[:limit])
    return s + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def _col(t: pa.Table, c: str) -> list:
    return t.column(c).to_pylist() if c in t.column_names else []


def _cnt(t: pa.Table, c: str) -> Counter:
    return Counter(v for v in _col(t, c) if v is not None)


def check_card(folder: Path) -> dict:
    """Recompute every number of ``folder``'s card from its parquet files; fail on any line with a number the
    check does not know. Returns the staged tables (config -> decoded pa.Table)."""
    meta, body = parse_card((folder / "README.md").read_text(encoding="utf-8"))
    configs = [c["config_name"] for c in meta["configs"]]
    tables = {}
    for info in meta["dataset_info"]:
        name = info["config_name"]
        dd = load_config(folder, name)
        tables[name] = pa.concat_tables([decode(dd[s["name"]]) for s in info["splits"]])
        total_nbytes = 0
        for s in info["splits"]:
            files = sorted((folder / "data" / name).glob(f"{s['name']}-*.parquet"))
            nb = sum(pq.read_table(f).nbytes for f in files)
            assert s["num_bytes"] == nb and s["num_examples"] == sum(pq.read_metadata(f).num_rows for f in files) == dd[s["name"]].num_rows
            total_nbytes += nb
        files = list((folder / "data" / name).glob("*.parquet"))
        assert info["download_size"] == sum(f.stat().st_size for f in files)  # exact bytes on disk
        assert info["dataset_size"] == total_nbytes
    tables = {c: tables[c] for c in configs}  # card order
    total = sum(t.num_rows for t in tables.values())
    assert meta["size_categories"] == [size_category(total)]
    lines = body.split("\n")
    checked: set[int] = set()

    def ok(i):
        checked.add(i)

    section, cfg, in_code = None, None, False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            in_code = not in_code
            ok(i)
            continue
        if line.startswith("## ") and not in_code:
            section = line[3:]
            ok(i)
            continue
        if line.startswith("### `") and not in_code:
            cfg = line[5:-1]
            ok(i)
            continue
        if in_code or not re.search(r"\d", _CODE.sub("", line)):
            ok(i)
            continue
        if line.startswith("# "):
            ok(i)
            continue
        if section is None and line.startswith(f"{total} rows in {len(configs)} config(s)"):
            ok(i)
        elif section is None and line.startswith("| `"):
            name = line.split("`")[1]
            t = tables[name]
            splits = {s["name"]: s["num_examples"] for s in next(x for x in meta["dataset_info"] if x["config_name"] == name)["splits"]}
            assert ", ".join(f"`{k}` ({v})" for k, v in splits.items()) in line
            assert f"| {len(t.column_names)} |" in line
            ok(i)
        elif section == "How the data was built":
            t = tables[cfg]
            for label, col, limit in (
                ("Sources", "source", 20),
                ("Languages", "language", 20),
                ("Domains", "domain", 20),
                ("HolisticBias axes", "axis", 20),
                ("Rounds", "round", 20),
                ("Task types", "task_type", 20),
                ("Model revisions", "model_revision", 20),
            ):
                if line.startswith(f"- {label}: "):
                    assert line == f"- {label}: {_counts_text(_cnt(t, col), limit)}"
                    ok(i)
            if line.startswith("- Groups: "):
                g = _cnt(t, "group")
                assert line == f"- Groups: {len(g)} ({_counts_text(g, 10)})"
                ok(i)
            elif line.startswith("- Descriptors: "):
                assert line == f"- Descriptors: {len(_cnt(t, 'descriptor'))}; nouns: {len(_cnt(t, 'noun'))}; templates: {len(_cnt(t, 'template'))}"
                ok(i)
            elif line.startswith("- Templates: "):
                assert line == f"- Templates: {len(_cnt(t, 'template_id'))}"
                ok(i)
            elif line.startswith("- Wikipedia pages: "):
                pages = {(w, p) for w, p in zip(_col(t, "wiki") or [None] * t.num_rows, _col(t, "page_id")) if p is not None}
                assert line.startswith(f"- Wikipedia pages: {len(pages)} from ")
                for title, pid, rev in zip(_col(t, "page_title"), _col(t, "page_id"), _col(t, "revision_id")):
                    if pid is not None and len(pages) <= 30:
                        assert f"{title} ({pid}, {rev})" in line
                ok(i)
            elif line.startswith("- Models (kind: rows): "):
                per = Counter(zip(_col(t, "model"), _col(t, "kind") or [None] * t.num_rows))
                for (m, k), n in per.items():
                    named = f" = {display_name(m)}" if display_name(m) else ""  # a packaged model by its exact name
                    assert f"`{m}`{named} ({k}: {n})" in line
                assert len(re.findall(r"\(\w+: \d+\)", line)) == len(per)
                assert "SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to fp32)" in line or "smollm2-135m" not in line
                ok(i)
            elif line.startswith("- Metric `"):
                m = line.split("`")[1]
                err = sum(1 for v in _col(t, f"{m}_error") if v)
                assert line.startswith(f"- Metric `{m}`: {t.num_rows - err} rows scored, {err} with `{m}_error`")
                lab = f"{m}_label" if f"{m}_label" in t.column_names else f"{m}_hurtful"
                if "; labels: " in line:
                    labels = line.split("; labels: ")[1].split(" (offline backend")[0]
                    assert labels == _counts_text(_cnt(t, lab), 20)
                ok(i)
            elif line.startswith("- Seeds: "):
                assert line == f"- Seeds: {sorted(_cnt(t, 'seed'))}"
                ok(i)
            elif line.startswith("- Rows with an `error`"):
                n = sum(1 for v in _col(t, "error") if v)
                assert line.startswith(f"- Rows with an `error` (no output): {n} (")
                ok(i)
            elif line.startswith("- Annotators: "):
                assert line == f"- Annotators: {len(_cnt(t, 'annotator'))}; labels: {_counts_text(_cnt(t, 'label'), 20)}"
                ok(i)
            elif line.startswith("- Gold items: "):
                assert line == f"- Gold items: {sum(1 for v in _col(t, 'is_gold') if v)}"
                ok(i)
            elif line.startswith(
                (
                    "- Produced by",
                    "- Settings:",
                    "- Input ",
                    "- Library versions:",
                    "- Recorded facts",
                    "- Metric versions:",
                    "- Generation settings:",
                    "- Retrieved from the live wiki:",
                    "- From the dump file",
                    "- Class labels:",
                )
            ):
                ok(i)  # provenance: recorded in the manifests, not a count of the staged rows
        elif section == "Licence":
            if line.startswith(("Dataset licence", "- ShareAlike", "- licence set by")):
                ok(i)  # licence ids, no counts
            m = re.match(r"- `(\w+)`: (\d+) distinct rows \(in (.*?)\)", line)
            if m:
                src, n, where = m.group(1), int(m.group(2)), re.findall(r"`([^`]+)`", m.group(3))
                ids, holders = set(), []
                for name, t in tables.items():
                    models = _col(t, "model") or [None] * t.num_rows
                    srcs = _col(t, "source") or [None] * t.num_rows
                    pids = _col(t, "prompt_id") or [None] * t.num_rows
                    hit = [
                        (pid if pid is not None else (name, k))
                        for k, (s, mo, pid) in enumerate(zip(srcs, models, pids))
                        if ((mo == "wikipedia") if src == "wikipedia" else (s == src and mo != "wikipedia"))
                    ]
                    if hit:
                        holders.append(name)
                        ids |= set(hit)
                assert (n, where) == (len(ids), holders), line
                # "N carry `LICENCE`" per licence the source's rows carry, recounted from their license column
                for k, lic in re.findall(r"(\d+) carry `([^`]+)`", line):
                    lids = set()
                    for name, t in tables.items():
                        models = _col(t, "model") or [None] * t.num_rows
                        srcs = _col(t, "source") or [None] * t.num_rows
                        pids = _col(t, "prompt_id") or [None] * t.num_rows
                        lics = _col(t, "license") or [None] * t.num_rows
                        lids |= {
                            (pid if pid is not None else (name, j))
                            for j, (s, mo, pid, li) in enumerate(zip(srcs, models, pids, lics))
                            if li == lic and ((mo == "wikipedia") if src == "wikipedia" else (s == src and mo != "wikipedia"))
                        }
                    assert int(k) == len(lids), line
                ok(i)
            m = re.match(r"- `license` column: (\d+) distinct rows carry `([^`]+)`", line)
            if m:
                ids = set()
                for name, t in tables.items():
                    pids = _col(t, "prompt_id") or [None] * t.num_rows
                    ids |= {(p if p is not None else (name, k)) for k, (p, v) in enumerate(zip(pids, _col(t, "license") or [])) if v == m.group(2)}
                assert int(m.group(1)) == len(ids), line
                ok(i)
        elif section == "Known limitations":
            m = re.match(r"- `([^`]+)`: metric `(\w+)` could not score (\d+) of (\d+) rows", line)
            if m:
                t = tables[m.group(1)]
                assert (int(m.group(3)), int(m.group(4))) == (sum(1 for v in _col(t, f"{m.group(2)}_error") if v), t.num_rows)
                ok(i)
            m = re.match(r"- `([^`]+)`: (\d+) of (\d+) rows have no output", line)
            if m:
                t = tables[m.group(1)]
                assert (int(m.group(2)), int(m.group(3))) == (sum(1 for v in _col(t, "error") if v), t.num_rows)
                ok(i)
            m = re.match(r"- `([^`]+)`: outputs of (\d+) model\(s\) only", line)
            if m:
                assert int(m.group(2)) == len({x for x in _col(tables[m.group(1)], "model") if x and x != "wikipedia"})
                ok(i)
            if line.startswith("- run stage `") or re.match(r"- (BOLD|Wikipedia|HolisticBias|HONEST|The gendered)", line):
                ok(i)
        elif section in ("Run facts", "Citations"):
            ok(i)
    unknown = [lines[i] for i in range(len(lines)) if i not in checked]
    assert unknown == [], "card lines with numbers the check does not recompute:\n" + "\n".join(unknown)
    # tags say only what is true
    has_labels = any("annotator" in t.column_names and any(v is not None for v in _col(t, "label")) for t in tables.values())
    assert ("human-annotation" in meta["tags"]) == has_labels
    return tables


PROMPTS = pa.table(
    {
        "prompt_id": ["b1", "b2", "b3", "b4"],
        "text": ["A is ", "B is ", "C is ", "D is "],
        "source": ["bold"] * 4,
        "language": ["en"] * 4,
        "domain": ["profession", "profession", "gender", "gender"],
        "group": ["n", "n", "m", "w"],
        "page_title": ["A", "B", "C", "D"],
        "page_id": [1, 2, 3, 4],
        "revision_id": [11, 12, 13, 14],
        "wiki": ["enwiki"] * 4,
        "reference": ["A is x.", "B is y.", "C is z.", "D is w."],
        "license": ["CC BY-SA 4.0"] * 4,
    }
)
SLAVIC = pa.table(
    {
        "prompt_id": ["s1", "s2", "s3"],
        "text": ["Ten muž je <mask>.", "Ta žena je <mask>.", "Ten muž jest <mask>."],
        "source": ["templates"] * 3,
        "language": ["cs", "cs", "pl"],
        "template_id": ["a", "a", "a"],
        "masked": [True] * 3,
    }
)
SCORES = pa.table(
    {  # two generations of b1/b2 plus the Wikipedia baselines of all four prompts: same prompt ids again
        "prompt_id": ["b1", "b2", "b1", "b2", "b3", "b4"],
        "text": ["A is ", "B is ", "A is ", "B is ", "C is ", "D is "],
        "source": ["bold"] * 6,
        "license": ["CC BY-SA 4.0"] * 6,
        "domain": ["profession"] * 4 + ["gender"] * 2,
        "sample_index": [0] * 6,
        "model": ["gpt", "gpt", "wikipedia", "wikipedia", "wikipedia", "wikipedia"],
        "kind": ["generate"] * 6,
        "continuation": ["x", None, "x", "y", "z", "w"],
        "vader_label": ["neutral", None, "neutral", "positive", "neutral", "negative"],
        "vader_error": [None, "empty", None, None, None, None],
    }
)
SAMPLES = pa.table(
    {
        "sample_id": ["x1", "x2"],
        "round": ["r1", "r1"],
        "prompt_id": ["b1", "b3"],
        "text": ["A is x", "C is z"],
        "task_type": ["sentiment", "sentiment"],
        "source": ["bold", "bold"],
        "model": ["gpt", "wikipedia"],
    }
)


def test_every_number_of_a_multi_config_card_is_recomputed_from_the_staged_files(tmp_path):
    specs = [
        TableSpec("prompts_bold", PROMPTS, "prompts"),
        TableSpec("prompts_slavic", SLAVIC, "prompts"),
        TableSpec("scores", SCORES, "scores"),
        TableSpec("samples", SAMPLES, "samples", split_by="round"),
    ]
    res = stage_tables(specs, tmp_path / "hub")
    check_card(tmp_path / "hub")
    body = res.card
    # each source once, no double counting: 4 BOLD prompts (not 4 + 6 + 1), 4 Wikipedia baselines, 3 templates
    assert "- `bold`: 4 distinct rows (in `prompts_bold`, `scores`, `samples`)" in body
    assert "- `wikipedia`: 4 distinct rows (in `scores`, `samples`)" in body  # sample x2 is baseline b3 again
    assert "- `templates`: 3 distinct rows (in `prompts_slavic`): Apache-2.0" in body
    assert "- `license` column: 4 distinct rows carry `CC BY-SA 4.0` (in `prompts_bold`, `scores`)" in body
    # samples without human labels: no human-annotation tag
    assert "human-annotation" not in res.card_data["tags"]


def test_config_by_sections_state_that_configs_facts(tmp_path):
    res = stage_tables([TableSpec("bold", PROMPTS, "prompts", config_by="domain")], tmp_path / "hub")
    check_card(tmp_path / "hub")
    sec = res.card.split("### `bold-gender`")[1].split("\n## ")[0]
    assert "- Domains: `gender` 2" in sec and "profession" not in sec and "- Wikipedia pages: 2 from" in sec


def test_demo_card_numbers_are_recomputed_from_its_files(quick_demo):
    run_dir, _ = quick_demo
    tables = check_card(run_dir / "hub")
    body = (run_dir / "hub" / "README.md").read_text(encoding="utf-8")
    assert "prompts_slavic" in tables and "- `templates`: " in body  # the cs/pl/sk prompts' source is listed
    assert len(re.findall(r"^- `bold`: ", body, flags=re.M)) == 1
    # the offline toxicity backend is tagged and described as profanity; no human labels in the quick demo
    meta, _ = parse_card(body)
    assert "profanity" in meta["tags"] and "toxicity" not in meta["tags"] and "human-annotation" not in meta["tags"]
    assert "offline backend alt-profanity-check: a profanity detector" in body


def test_card_licences_per_row_full_sha256_dump_date_slavic_citation_no_null_columns(tmp_path):
    # licences per row, the full sha256, the dump date, the Slavic citation and no null columns, on a table whose rows carry two licence versions (an old dump revision is CC BY-SA 3.0)
    sha = "a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d"
    prompts = PROMPTS.set_column(
        PROMPTS.schema.get_field_index("license"), "license", pa.array(["CC BY-SA 3.0", "CC BY-SA 3.0", "CC BY-SA 3.0", "CC BY-SA 4.0"])
    )
    prompts = prompts.set_column(prompts.schema.get_field_index("wiki"), "wiki", pa.array(["enwiki:enwiki-20240601-pages-articles.xml.bz2"] * 4))
    prompts = prompts.append_column("retrieved_at", pa.array(["2026-12-01T16:15:14Z"] * 4))
    manifest = {"command": "biaskit scrape dump x", "stage": "prompts", "inputs": [{"path": "/data/x.xml.bz2", "sha256": sha}]}
    samples = SAMPLES.append_column("note", pa.nulls(2))  # a null-typed (never filled) column
    assert pa.types.is_null(samples.schema.field("note").type)
    res = stage_tables(
        [
            TableSpec("prompts_bold", prompts, "prompts", manifest=manifest),
            TableSpec("prompts_slavic", SLAVIC, "prompts"),
            TableSpec("samples", samples, "samples"),
        ],
        tmp_path / "hub",
    )
    tables = check_card(tmp_path / "hub")
    body = res.card
    # which rows carry which licence (b1-b3 are 3.0, b4 is 4.0; sample x1 is b1, x2 is b3: no new rows)
    assert "- `bold`: 4 distinct rows (in `prompts_bold`, `samples`): 3 carry `CC BY-SA 3.0`; 1 carry `CC BY-SA 4.0`" in body
    assert "released under CC BY-SA 4.0 (dataset)" not in body and "the BOLD dataset is released under CC BY-SA 4.0" not in body
    assert "CC BY-SA 3.0 allows adaptations under a later version (4.0)" in body
    assert f"(sha256 `{sha}`)" in body  # all 64 hex digits, not a 16-digit prefix
    # the dump's date from its file name; the reading time is not called "Retrieved"
    assert (
        "- From the dump file `enwiki-20240601-pages-articles.xml.bz2` (dump of 2024-06-01; the text is each page's revision "
        "in the dump, see `revision_id`); biaskit read the file at 2026-12-01T16:15:14Z"
    ) in body
    assert "- Retrieved" not in body
    # templates from the West Slavic study's design: its paper is cited
    assert "@inproceedings{martinkova2023westslavic" in body and "Measuring Gender Bias in {West Slavic} Language Models" in body
    # no null-typed Arrow column in any staged file; the column's values stay null
    for f in (tmp_path / "hub" / "data").rglob("*.parquet"):
        assert not any(pa.types.is_null(fld.type) for fld in pq.read_schema(f)), f
    assert tables["samples"].column("note").to_pylist() == [None, None]
