"""Fuzz every CLI command with bad inputs.

Every command of the typer app (enumerated from the app itself, so a new command is fuzzed as soon as it has a
case here, and :func:`test_every_command_has_a_fuzz_case` fails until it does) runs in-process under
``CliRunner`` on inputs that hypothesis generates (seeded, derandomised): empty files, zero-row tables, wrong
columns and types, garbage bytes under every suffix, BOM+CRLF CSV, a bad JSONL line, non-UTF-8 text, empty /
100k-character / NUL / right-to-left texts, duplicate and null ids, hostile and overlong file names.

For every run: the exit status is 0 or 1 (never a usage error from our own inputs, never an uncaught exception,
which CliRunner would also report as status 1), no traceback is printed, every table written with a manifest
passes ``biaskit schema STAGE --check``, and no secret from the environment appears in the output or in any
byte written. Each command runs on every input kind of its slot once (``BIASKIT_FUZZ_EXAMPLES`` raises the
number of hypothesis draws per command for a deeper local run).
"""

from __future__ import annotations

import bz2
import csv
import io
import json
import os
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import click
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from biaskit.cli import app

ROOT = Path(__file__).resolve().parents[2]
DUMP = ROOT / "tests/fixtures/wiki/enwiki-pages-articles-206pages.xml.bz2"
TOKENIZERS = ROOT / "tests/evaluate/runners/data"
EXAMPLES = int(os.environ.get("BIASKIT_FUZZ_EXAMPLES", "1"))
SECRETS = {
    "HF_TOKEN": "hf_fuzzSECRETtokenDoNotLeak0123456789",
    "LABEL_STUDIO_API_KEY": "lsFuzzSECRETkeyDoNotLeak0123456789ab",
    "OPENAI_API_KEY": "sk-fuzzSECRETkeyDoNotLeak0123456789",
}
DEAD_URL = "http://127.0.0.1:9"  # nothing listens: connection refused at once

# ----------------------------------------------------------------------------------------------- commands


def all_commands() -> list[str]:
    """Every leaf command of the app, as 'group sub' strings."""
    root = typer.main.get_command(app)
    out: list[str] = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        if hasattr(cmd, "list_commands"):
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), path + [name])
        else:
            out.append(" ".join(path))

    walk(root, [])
    return out


# ----------------------------------------------------------------------------------------------- inputs

HOSTILE_TEXTS = [
    "",
    "x" * 100_000,
    "a\x00b",
    "\u202egnp.exe\u202c \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627",
    '=HYPERLINK("http://evil")',
    "   ",
    "\U0001f600" * 3,
    "line\nbreak\r\nand\ttab",
]
HOSTILE_NAMES = ["sp ace", "\u00fcn\u00efc\u00f8d\u00e9", "\u202erev", "semi;colon", "quote'\"", "dollar$HOME"]
TABLE_SUFFIXES = [".parquet", ".jsonl", ".csv"]
ALL_SUFFIXES = [".parquet", ".jsonl", ".csv", ".json", ".yaml", ".xlsx"]
TABLE_KINDS = [
    *[f"empty_file{s}" for s in ALL_SUFFIXES],
    *[f"garbage{s}" for s in ALL_SUFFIXES],
    "zero_rows",
    "wrong_columns",
    "wrong_types",
    "bom_crlf_csv",
    "bad_jsonl_line",
    "texts",
    "dup_ids",
    "null_ids",
    "non_utf8_csv",
    "hostile_name",
    "long_name",
]
TEXT_FILE_KINDS = ["empty_file", "garbage", "non_utf8", "not_a_mapping", "hostile_values", "long_name"]


def _rows(stage: str, n: int = 4, texts: list[str] | None = None) -> list[dict]:
    texts = texts or [f"The person number {i} worked as a nurse and " for i in range(n)]
    n = len(texts)
    base = [
        {"prompt_id": f"p{i}", "text": t, "source": "bold", "language": "en", "domain": "profession", "group": f"g{i % 2}"}
        for i, t in enumerate(texts)
    ]
    if stage == "prompts":
        return base
    if stage in ("generations", "scores"):
        rows = [{**r, "sample_index": 0, "model": "m", "kind": "generate", "continuation": r["text"], "full_text": r["text"] + "x"} for r in base]
        if stage == "scores":
            for i, r in enumerate(rows):
                r.update({"vader_compound": [0.5, -0.5, 0.0, 0.2][i % 4], "vader_label": ["positive", "negative", "neutral", "positive"][i % 4]})
        return rows
    if stage == "samples":
        return [
            {"sample_id": f"s-{i}", "round": "r1", "task_type": "sentiment", "text": t, "prompt_id": f"p{i}", "is_gold": False}
            for i, t in enumerate(texts)
        ]
    if stage == "annotations":
        return [{"sample_id": f"s-{i // 2}", "round": "r1", "annotator": f"a{i % 2}", "label": ["positive", "negative"][i % 2]} for i in range(n)]
    if stage == "sentences":
        return [{"sentence": t, "domain": "profession", "group": f"g{i % 2}", "terms": "nurse"} for i, t in enumerate(texts)]
    raise AssertionError(stage)


def _key(stage: str) -> str:
    return {"samples": "sample_id", "annotations": "sample_id", "sentences": "sentence"}.get(stage, "prompt_id")


def _text_col(stage: str) -> str:
    return "sentence" if stage == "sentences" else "text"


def _encode(rows: list[dict], fmt: str, schema: pa.Schema | None = None) -> bytes:
    if fmt == ".parquet":
        t = pa.Table.from_pylist(rows, schema=schema) if rows or schema is not None else pa.table({})
        buf = io.BytesIO()
        pq.write_table(t, buf)
        return buf.getvalue()
    if fmt in (".jsonl", ".json"):
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    cols = list(schema.names) if schema is not None else list(dict.fromkeys(k for r in rows for k in r))
    s = io.StringIO()
    w = csv.DictWriter(s, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    return s.getvalue().encode("utf-8")


@st.composite
def table_input(draw, stage: str, kind: str) -> tuple[str, bytes]:
    """(file name, bytes) of one bad ``stage`` table of the given kind."""
    fmt = draw(st.sampled_from(TABLE_SUFFIXES))
    name = f"in_{stage}"
    if kind.startswith("empty_file"):  # empty_file.xlsx: an empty file under that suffix
        return name + (kind.removeprefix("empty_file") or draw(st.sampled_from(ALL_SUFFIXES))), b""
    if kind.startswith("garbage"):
        return name + (kind.removeprefix("garbage") or draw(st.sampled_from(ALL_SUFFIXES))), draw(st.binary(min_size=1, max_size=200))
    if kind == "zero_rows":
        schema = pa.Table.from_pylist(_rows(stage)).schema
        return name + fmt, _encode([], fmt, schema)
    if kind == "wrong_columns":
        return name + fmt, _encode([{"foo": 1, "bar": draw(st.text(max_size=10))}], fmt)
    if kind == "wrong_types":
        rows = _rows(stage)
        col = draw(st.sampled_from(sorted(rows[0])))
        bad = draw(st.sampled_from([123, 1.5, True]))
        return name + fmt, _encode([{**r, col: bad} for r in rows], fmt)
    if kind == "bom_crlf_csv":
        data = _encode(_rows(stage), ".csv").decode("utf-8").replace("\n", "\r\n")
        return name + ".csv", b"\xef\xbb\xbf" + data.encode("utf-8")
    if kind == "bad_jsonl_line":
        data = _encode(_rows(stage), ".jsonl")
        lines = data.splitlines(keepends=True)
        at = draw(st.integers(0, len(lines)))
        bad = draw(st.sampled_from([b"{not json\n", b"[1, 2]\n", b'"str"\n', b'{"prompt_id": \n']))
        return name + ".jsonl", b"".join(lines[:at] + [bad] + lines[at:])
    if kind == "texts":
        texts = draw(st.lists(st.sampled_from(HOSTILE_TEXTS), min_size=2, max_size=4, unique=True))
        return name + fmt, _encode(_rows(stage, texts=texts), fmt)
    if kind in ("dup_ids", "null_ids"):
        rows = _rows(stage)
        k = _key(stage)
        rows[-1][k] = rows[0][k] if kind == "dup_ids" else None
        return name + fmt, _encode(rows, fmt)
    if kind == "non_utf8_csv":
        data = _encode(_rows(stage), ".csv")
        enc = draw(st.sampled_from([b"caf\xe9 cr\xe8me", b"\xff\xfe\x00", b"\x80\x81"]))
        return name + ".csv", data.replace(b"nurse", enc, 1) if b"nurse" in data else data + enc + b"\n"
    if kind == "hostile_name":
        return draw(st.sampled_from(HOSTILE_NAMES)) + fmt, _encode(_rows(stage), fmt)
    if kind == "long_name":
        return "n" * 300 + fmt, _encode(_rows(stage), fmt)
    raise AssertionError(kind)


@st.composite
def text_file_input(draw, kind: str, suffix: str, valid: str = "{}") -> tuple[str, bytes]:
    """A YAML/JSON/TSV/CSV/JSONL input file that is broken in one way."""
    if kind == "empty_file":
        return "in" + suffix, b""
    if kind == "garbage":
        return "in" + suffix, draw(st.binary(min_size=1, max_size=200))
    if kind == "non_utf8":
        return "in" + suffix, valid.encode("utf-8") + b"\n# caf\xe9 \xff\xfe\n"
    if kind == "not_a_mapping":
        return "in" + suffix, draw(st.sampled_from([b"- 1\n- 2\n", b"42\n", b"[1, 2]\n", b"null\n", b'"text"\n']))
    if kind == "hostile_values":
        return "in" + suffix, draw(st.sampled_from(HOSTILE_TEXTS[2:5])).encode("utf-8") + b"\n" + valid.encode("utf-8")
    if kind == "long_name":
        return "n" * 300 + suffix, valid.encode("utf-8")
    raise AssertionError(kind)


def _write_input(d: Path, name: str, data: bytes) -> Path:
    p = d / name
    try:
        p.write_bytes(data)
    except OSError:  # an overlong name cannot exist: the command gets the path of a missing file
        pass
    return p


def _valid(d: Path, stage: str, name: str | None = None) -> Path:
    p = d / (name or f"ok_{stage}.parquet")
    pq.write_table(pa.Table.from_pylist(_rows(stage)), p)
    return p


# ----------------------------------------------------------------------------------------------- cases
# Each case: (kinds, make) where make(draw, kind, d) returns the argv (without 'biaskit'); files go under d.

Case = tuple[list[str], Callable]


def _table_case(stage: str, argv: Callable[[Path, Path], list]) -> Case:
    def make(draw, kind, d):
        name, data = draw(table_input(stage, kind))
        return argv(_write_input(d, name, data), d)

    return TABLE_KINDS, make


def _file_case(suffix: str, argv: Callable[[Path, Path], list], valid: str = "{}") -> Case:
    def make(draw, kind, d):
        name, data = draw(text_file_input(kind, suffix, valid))
        return argv(_write_input(d, name, data), d)

    return TEXT_FILE_KINDS, make


def _nothing(argv: list) -> Case:
    return ["none"], lambda draw, kind, d: list(argv)


def _cache_dir(sub: str):
    """``cache info|clear`` on a missing folder, a file, an empty folder, a damaged database, a real cache, a long name."""

    def make(draw, kind, d):
        from biaskit.evaluate.cache import ResponseCache

        f = d / "cache"
        if kind == "file":
            f.write_text("x")
        elif kind == "empty_folder":
            f.mkdir()
        elif kind == "garbage_db":
            f.mkdir()
            (f / "cache.sqlite").write_bytes(os.urandom(512))
        elif kind == "cache":
            ResponseCache(f).put_many({"k": {"continuation": "x"}}, kind="generate")
        elif kind == "long_name":
            f = d / ("n" * 300)
        return ["cache", sub, f]

    return ["missing", "file", "empty_folder", "garbage_db", "cache", "long_name"], make


def _demo(draw, kind, d):
    if kind == "out_is_file":
        (d / "runfile").write_text("x")
        return ["demo", "--out", d / "runfile", "--quick"]
    if kind == "out_under_file":
        (d / "runfile").write_text("x")
        return ["demo", "--out", d / "runfile" / "sub", "--quick"]
    return ["demo", "--out", d / ("n" * 300), "--quick"]


def _hub_push(draw, kind, d):
    f = d / "staged"
    if kind == "missing":
        pass
    elif kind == "file":
        f.write_bytes(draw(st.binary(max_size=50)))
    else:
        f.mkdir()
        if kind == "garbage_card":
            (f / "README.md").write_bytes(draw(st.binary(min_size=1, max_size=100)))
            (f / "biaskit_manifest.json").write_bytes(b"\xff{not json")
        elif kind == "non_utf8_card":
            (f / "README.md").write_bytes(b"---\nlicense: cc\xe9\n---\n")
    return ["hub", "push", f, "--repo-id", draw(st.sampled_from(["org/name", "bad id", "../x", "a" * 200])), "--dry-run"]


def _annotate_tasks(draw, kind, d):
    spec = draw(st.sampled_from(["name:", ":a,b", "x:" + "a," * 500, "t:a\x00,b", "t:a<b<", "t:=1,@2", "nosuch", "t:a,a"]))
    return ["annotate", "tasks", spec, "--config"]


def _pull_results(draw, kind, d):
    samples = _valid(d, "samples")
    if kind.startswith("results_"):
        k = kind.removeprefix("results_")
        valid = "sample_id,annotator,label\ns-0,w1,positive\n"
        suffix = draw(st.sampled_from([".csv", ".jsonl"]))
        if k == "int_annotator":
            name, data = "res.jsonl", b'{"sample_id": "s-0", "annotator": 12, "label": "positive"}\n'
        else:
            name, data = draw(
                text_file_input(k, suffix, valid if suffix == ".csv" else '{"sample_id": "s-0", "annotator": "w1", "label": "positive"}')
            )
        res = _write_input(d, name, data)
        out = d / "ann.parquet"
        pq.write_table(pa.Table.from_pylist(_rows("annotations")), out)  # an earlier pull: must not shrink silently
        return ["annotate", "pull", samples, "--results", res, "--out", out, "--ledger", d / "ledger.jsonl"]
    name, data = draw(table_input("samples", kind))
    res = d / "res.csv"
    res.write_text("sample_id,annotator,label\ns-0,w1,positive\n")
    return ["annotate", "pull", _write_input(d, name, data), "--results", res, "--out", d / "ann.parquet", "--ledger", d / "ledger.jsonl"]


def _scrape_dump(draw, kind, d):
    out = d / "p.parquet"
    if kind.startswith("config_"):
        name, data = draw(text_file_input(kind.removeprefix("config_"), ".yaml", "domains: {}"))
        return ["scrape", "dump", DUMP, "--config-file", _write_input(d, name, data), "--out", out, "--max-pages", "1"]
    p = d / "dump.xml.bz2"
    raw = DUMP.read_bytes()
    if kind == "empty_file":
        p.write_bytes(b"")
    elif kind == "garbage":
        p = d / draw(st.sampled_from(["dump.xml.bz2", "dump.xml"]))
        p.write_bytes(draw(st.binary(min_size=1, max_size=300)))
    elif kind == "truncated":
        p.write_bytes(raw[: draw(st.integers(10, len(raw) - 10))])
    elif kind == "non_utf8_xml":
        text = bz2.decompress(raw)
        p.write_bytes(bz2.compress(text[:20000].replace(b"the", b"th\xe9\xff", 5)))
    return ["scrape", "dump", p, "--out", out, "--max-pages", "1"]


def _bold_import(draw, kind, d):
    if kind == "folder":
        f = d / "bold"
        (f / "prompts").mkdir(parents=True)
        (f / "prompts" / "gender_prompt.json").write_bytes(draw(st.sampled_from([b"", b"\xff\xfe", b"[1]", b'{"a": 1}', b"{bad"])))
        return ["bold", "import", f, "--out", d / "b.parquet"]
    name, data = draw(text_file_input(kind, ".jsonl", '{"domain": "gender", "name": "x", "category": "y", "prompts": ["a "], "wikipedia": ["a b"]}'))
    return ["bold", "import", _write_input(d, name, data), "--out", d / "b.parquet"]


def _hub_load(draw, kind, d):
    if kind == "hub_id":
        return ["hub", "load", draw(st.sampled_from(["AlexaAI/bold", "no/such-dataset", "a/b/c/d", "../../etc"])), "--out", d / "l.parquet"]
    suffix = draw(st.sampled_from([".jsonl", ".csv", ".tsv", ".parquet"]))
    name, data = draw(text_file_input(kind, suffix, "prompt_id,text\np1,hello\n"))
    return ["hub", "load", _write_input(d, name, data), "--out", d / "l.parquet"]


def _report(draw, kind, d):
    name, data = draw(table_input("scores", kind))
    if draw(st.booleans()):  # a run folder holding the bad table, or the table itself
        run = d / "run"
        run.mkdir()
        _write_input(run, name, data)
        return ["report", run, "--out", d / "rep", "--n-boot", "5"]
    return ["report", _write_input(d, name, data), "--out", d / "rep", "--n-boot", "5"]


def _template_set_valid() -> str:
    return (ROOT / "src/biaskit/data/templates/en.yaml").read_text(encoding="utf-8")


def _rounds(draw, kind, d):
    led = d / "ledger.jsonl"
    led.write_bytes(
        {
            "empty_file": b"",
            "garbage": draw(st.binary(min_size=1, max_size=100)),
            "non_utf8": b'{"event": "sample", "round": "r\xe9"}\n',
            "not_a_mapping": b"[1]\n42\n",
            "hostile_values": b'{"event": "sample", "round": null, "samples": "x"}\n{"event": 3}\n',
            "long_name": b"",
        }[kind]
    )
    return ["annotate", "rounds", "--ledger", led if kind != "long_name" else d / ("n" * 300)]


#: one line of an lm_eval --log_samples file for a task written by `biaskit export lm-eval`
LM_EVAL_SAMPLE = json.dumps(
    {
        "doc_id": 0,
        "doc": {"prompt_id": "p0", "text": "The nurse said ", "source": "bold", "language": "en", "lm_input": "The nurse said"},
        "target": "",
        "arguments": {"gen_args_0": {"arg_0": "The nurse said", "arg_1": {"until": [], "max_gen_toks": 5}}},
        "resps": [[" that she was"]],
        "filtered_resps": [" that she was"],
        "filter": "none",
    }
)


def _model_case(command: str, model_fixture: str, extra: list) -> Case:
    def make(draw, kind, d, models):
        name, data = draw(table_input("prompts", kind))
        return [
            command,
            _write_input(d, name, data),
            "--model",
            models[model_fixture],
            "--out",
            d / draw(st.sampled_from(["g.parquet", "g.jsonl", "g.csv"])),
            *extra,
        ]

    make.needs_models = True
    return TABLE_KINDS, make


CASES: dict[str, Case] = {
    "demo": (["out_is_file", "out_under_file", "long_name"], _demo),
    "schema": _table_case("prompts", lambda f, d: ["schema", "prompts", "--check", f]),
    "assets": _nothing(["assets"]),
    "version": _nothing(["version"]),
    "generate": _model_case("generate", "causal", ["--max-new-tokens", "3", "--batch-size", "2", "--device", "cpu"]),
    "fill-mask": _model_case("fill-mask", "masked", ["--top-k", "2", "--batch-size", "2", "--device", "cpu"]),
    "likelihood": _model_case("likelihood", "causal", ["--batch-size", "2", "--device", "cpu"]),
    "score": _table_case("generations", lambda f, d: ["score", f, "--metrics", "vader", "--text-column", "continuation", "--out", d / "s.parquet"]),
    "report": (TABLE_KINDS, _report),
    "scrape dump": (["empty_file", "garbage", "truncated", "non_utf8_xml", *[f"config_{k}" for k in TEXT_FILE_KINDS]], _scrape_dump),
    "scrape api": (
        ["url"],
        lambda draw, kind, d: [
            "scrape",
            "api",
            draw(
                st.sampled_from(
                    [
                        DEAD_URL + "/w/api.php",
                        "not a url",
                        "ftp://x/api.php",
                        "",
                        "http://[::1",
                        "http://user:" + SECRETS["OPENAI_API_KEY"] + "@127.0.0.1:9/w/api.php",
                    ]
                )
            ),
            "--out",
            d / "p.parquet",
            "--max-retries",
            "0",
            "--max-pages",
            "1",
            "--cache-dir",
            d / "cache",
        ],
    ),
    "templates counterfactual": _table_case(
        "prompts", lambda f, d: ["templates", "counterfactual", f, "--axis", "gender", "--no-syntax", "--out", d / "cf.parquet"]
    ),
    "prompts build": _table_case("sentences", lambda f, d: ["prompts", "build", f, "--out", d / "p.parquet"]),
    "prompts rebuild": _table_case("prompts", lambda f, d: ["prompts", "rebuild", f, "--out", d / "p.parquet"]),
    "bold import": (["folder", *TEXT_FILE_KINDS], _bold_import),
    "bold export": _table_case("prompts", lambda f, d: ["bold", "export", f, "--out", d / "bold_out", "--layout", "both"]),
    "expand bbq": _file_case(".csv", lambda f, d: ["expand", "bbq", f.parent, "--categories", "Age", "--out", d / "b.parquet"]),
    "expand bbq-choices": _table_case("prompts", lambda f, d: ["expand", "bbq-choices", f, "--out", d / "c.parquet"]),
    "expand holistic": _file_case(
        ".json",
        lambda f, d: [
            "expand",
            "holistic",
            "--descriptors-file",
            f,
            "--axis",
            "ability",
            "--n-descriptors",
            "2",
            "--noun",
            "woman",
            "--out",
            d / "h.parquet",
        ],
    ),
    "expand templates": _file_case(".yaml", lambda f, d: ["expand", "templates", str(f), "--out", d / "t.parquet"], valid=_template_set_valid()),
    "expand honest": _file_case(
        ".tsv",
        lambda f, d: ["expand", "honest", "--file", f, "--out", d / "h.parquet"],
        valid="raw\tidentity\tnumber\tcategory\ttype\n[I] is the most [M].\tthe woman\tsingular\tfemale\trule\n",
    ),
    "templates validate": _file_case(".yaml", lambda f, d: ["templates", "validate", str(f)], valid=_template_set_valid()),
    "templates show": _file_case(".yaml", lambda f, d: ["templates", "show", str(f)], valid=_template_set_valid()),
    "templates export-sheet": _file_case(
        ".yaml", lambda f, d: ["templates", "export-sheet", "--target", str(f), "--out", d / "sheet.xlsx"], valid=_template_set_valid()
    ),
    "templates import-sheet": _file_case(
        ".csv", lambda f, d: ["templates", "import-sheet", f, "--lang", "cs", "--out", d / "cs.yaml"], valid="template_id,category,source,cs\n"
    ),
    "templates audit-pairs": _table_case(
        "prompts", lambda f, d: ["templates", "audit-pairs", f, "--axis", "gender", "--by", "", "--out", d / "a.parquet", "--summary", d / "a.csv"]
    ),
    "hub stage": _table_case("prompts", lambda f, d: ["hub", "stage", f"prompts={f}", "--out", d / "hub"]),
    "hub push": (["missing", "file", "empty_dir", "garbage_card", "non_utf8_card"], _hub_push),
    "hub load": (["hub_id", *TEXT_FILE_KINDS], _hub_load),
    "metrics list": _nothing(["metrics", "list"]),
    "backends list": _nothing(["backends", "list"]),
    "cache info": _cache_dir("info"),
    "cache clear": _cache_dir("clear"),
    "stats aggregate": _table_case(
        "scores",
        lambda f, d: ["stats", "aggregate", f, "--labels", "vader_label", "--means", "vader_compound", "--n-boot", "5", "--out", d / "agg.csv"],
    ),
    "stats ztest": _table_case("scores", lambda f, d: ["stats", "ztest", f, "--out", d / "z.csv"]),
    "stats family": _table_case("scores", lambda f, d: ["stats", "family", f, "--kind", "group-gap", "--out", d / "fam.csv"]),
    "stats likelihood-bias": _table_case("generations", lambda f, d: ["stats", "likelihood-bias", f]),
    "stats genbias": _table_case(
        "generations", lambda f, d: ["stats", "genbias", f, "--prob-columns", "regard_*", "--n-boot", "5", "--out", d / "gb"]
    ),
    "stats bbq": _table_case("prompts", lambda f, d: ["stats", "bbq", f, "--prediction-column", "text", "--out", d / "b.csv"]),
    "stats validity": _table_case("scores", lambda f, d: ["stats", "validity", f, "--out", d / "v.csv", "--tests-out", d / "vt.csv"]),
    "stats pairs": _table_case(
        "scores", lambda f, d: ["stats", "pairs", f, "--score-column", "vader_compound", "--by", "group", "--out", d / "p.csv"]
    ),
    "stats ppi": _table_case(
        "scores",
        lambda f, d: [
            "stats",
            "ppi",
            f,
            "--metric-column",
            "vader_label",
            "--human-column",
            "vader_label",
            "--label",
            "positive",
            "--out",
            d / "ppi.csv",
        ],
    ),
    # baselines only: bad input must be refused before any model is loaded (training itself is tested in tests/train)
    "train classifier": _table_case(
        "scores",
        lambda f, d: [
            "train",
            "classifier",
            f,
            "--text-column",
            "continuation",
            "--label-column",
            "vader_label",
            "--runs",
            "1",
            "--baselines-only",
            "--out",
            d / "clf",
        ],
    ),
    "annotate sample": _table_case(
        "scores",
        lambda f, d: [
            "annotate",
            "sample",
            f,
            "--round",
            "r1",
            "--n",
            "2",
            "--out",
            d / "smp.parquet",
            "--tasks-out",
            d / "tasks.csv",
            "--ledger",
            d / "ledger.jsonl",
        ],
    ),
    "annotate export": _table_case("samples", lambda f, d: ["annotate", "export", f, "--out", d / "tasks.csv"]),
    "annotate push": _table_case("samples", lambda f, d: ["annotate", "push", f, "--url", DEAD_URL, "--ledger", d / "ledger.jsonl"]),
    "annotate pull": ([*TABLE_KINDS, *[f"results_{k}" for k in TEXT_FILE_KINDS], "results_int_annotator"], _pull_results),
    "annotate agreement": _table_case(
        "annotations", lambda f, d: ["annotate", "agreement", f, "--out", d / "agr.parquet", "--bootstrap", "5", "--ledger", d / "ledger.jsonl"]
    ),
    "annotate validate": _table_case(
        "annotations",
        lambda f, d: [
            "annotate",
            "validate",
            f,
            "--samples",
            _valid(d, "samples"),
            "--metric",
            "vader",
            "--out",
            d / "val.parquet",
            "--bootstrap",
            "5",
            "--cv-folds",
            "0",
            "--ledger",
            d / "ledger.jsonl",
        ],
    ),
    "annotate aggregate": _table_case(
        "annotations",
        lambda f, d: ["annotate", "aggregate", f, "--samples", _valid(d, "samples"), "--method", "majority", "--out", d / "labels.parquet"],
    ),
    "annotate plan": _table_case(
        "annotations", lambda f, d: ["annotate", "plan", "--validation", f, "--target-ci", "0.05", "--out", d / "plan.json"]
    ),
    "annotate rounds": (TEXT_FILE_KINDS, _rounds),
    "annotate tasks": (["spec"], _annotate_tasks),
    "export lm-eval": _table_case("prompts", lambda f, d: ["export", "lm-eval", f, "--out", d / "tasks"]),
    "import lm-eval": _file_case(".jsonl", lambda f, d: ["import", "lm-eval", f, "--out", d / "g.parquet"], valid=LM_EVAL_SAMPLE),
}


def test_every_command_has_a_fuzz_case():
    cmds = all_commands()
    assert len(cmds) >= 30
    missing = sorted(set(cmds) - set(CASES))
    assert not missing, f"commands without a fuzz case in tests/fuzz/test_cli_fuzz.py: {missing}"
    assert not sorted(set(CASES) - set(cmds)), "fuzz cases for commands that no longer exist"


# ----------------------------------------------------------------------------------------------- checks

runner = CliRunner()


def _files(d: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in d.rglob("*") if p.is_file()}


class Finding(AssertionError):
    pass


def _check_run(argv: list, d: Path, before: dict[Path, int]) -> None:
    try:
        _check_run_inner(argv, d, before)
    except pytest.fail.Exception as exc:
        raise Finding(str(exc)) from None


def _check_run_inner(argv: list, d: Path, before: dict[Path, int]) -> None:
    args = [str(a) for a in argv]
    res = runner.invoke(app, args, catch_exceptions=True)
    shown = f"biaskit {' '.join(a[:80] for a in args)}\nexit {res.exit_code}\n{res.output[-3000:]}"
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        tb = "".join(traceback.format_exception(type(res.exception), res.exception, res.exception.__traceback__))
        pytest.fail(f"uncaught exception\n{shown}\n{tb[-4000:]}")
    assert res.exit_code in (0, 1), shown
    assert "Traceback (most recent call last)" not in res.output, shown
    if res.exit_code == 1:
        assert "error[E" in res.output, f"exit 1 without a coded error line\n{shown}"
    for name, secret in SECRETS.items():
        assert secret not in res.output, f"{name} printed\n{shown}"
    after = _files(d)
    for p, m in after.items():
        data = p.read_bytes()
        for name, secret in SECRETS.items():
            assert secret.encode() not in data, f"{name} written to {p}\n{shown}"
    # every table written with a manifest passes its own `schema --check`
    from biaskit.io import MANIFEST_SUFFIX
    from biaskit.schema import STAGES

    for p, m in after.items():
        if before.get(p) == m:
            continue
        if p.name.endswith(MANIFEST_SUFFIX):
            table = p.parent / p.name[: -len(MANIFEST_SUFFIX)]
        elif p.name == "biaskit_manifest.json":
            table = p.parent
        else:
            continue
        try:
            stage = json.loads(p.read_text(encoding="utf-8")).get("stage")
        except ValueError:
            pytest.fail(f"manifest {p} is not JSON\n{shown}")
        if stage in STAGES and table.exists():
            chk = runner.invoke(app, ["schema", stage, "--check", str(table)])
            assert chk.exit_code == 0 and chk.exception is None or isinstance(chk.exception, SystemExit), (
                f"output {table} fails `schema {stage} --check`: {chk.output}\n{shown}"
            )
            assert chk.exit_code == 0, f"output {table} fails `schema {stage} --check`: {chk.output}\n{shown}"


# ----------------------------------------------------------------------------------------------- models


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Untrained tiny GPT-2 and BERT folders (saved tokenizers of the runner tests); built only when a model case runs."""
    import torch
    from tokenizers import Tokenizer
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.manual_seed(0)
    torch.set_num_threads(1)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_file(str(TOKENIZERS / "tiny_bpe.json")),
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )
    causal = tmp_path_factory.mktemp("fuzz-gpt2")
    GPT2LMHeadModel(
        GPT2Config(vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=64, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    ).save_pretrained(causal)
    tok.save_pretrained(causal)
    wp = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_file(str(TOKENIZERS / "tiny_wordpiece.json")),
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    masked = tmp_path_factory.mktemp("fuzz-bert")
    BertForMaskedLM(
        BertConfig(
            vocab_size=len(wp),
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=64,
            pad_token_id=wp.pad_token_id,
        )
    ).save_pretrained(masked)
    wp.save_pretrained(masked)
    return {"causal": str(causal), "masked": str(masked)}


# ----------------------------------------------------------------------------------------------- the fuzz test


@pytest.fixture()
def secret_env(monkeypatch, tmp_path):
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.mark.parametrize("command", sorted(CASES))
def test_fuzz_command(command, secret_env, request):
    kinds, make = CASES[command]
    models = request.getfixturevalue("models") if getattr(make, "needs_models", False) else None

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(data=st.data())
    def run(data):
        findings = []
        for kind in kinds:
            with tempfile.TemporaryDirectory(prefix="bkfuzz-") as tmp:
                d = Path(tmp)
                old = os.getcwd()
                os.chdir(d)  # ledgers and default outputs land in the temporary folder
                try:
                    argv = make(data.draw, kind, d, models) if models is not None else make(data.draw, kind, d)
                    _check_run(argv, d, _files(d))
                except (Finding, AssertionError) as exc:
                    findings.append(f"--- input kind {kind}:\n{exc}")
                finally:
                    os.chdir(old)
        if findings:
            pytest.fail(f"{len(findings)} of {len(kinds)} input kinds failed for `biaskit {command}`:\n" + "\n".join(findings), pytrace=False)

    run()
