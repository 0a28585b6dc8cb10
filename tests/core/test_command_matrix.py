"""The command matrix: every CLI command (enumerated from the typer app, sub-apps included) runs under the
guarantees of the output layer (biaskit.output, biaskit.ownership) and the coded-error rule.

A command that is not listed in :data:`MATRIX` fails :func:`test_every_command_is_in_the_matrix`. Adding one is one
line: ``"group cmd": E(lambda i, d: [argv...], out="file" | "dir" | None)``, where ``i`` is the folder of the
shared prepared inputs (:func:`inputs`, built once per session) and ``d`` the folder the command writes into.

Each command runs:
- with canary secrets in the environment, in its inputs (a group and an annotator named after a key, a URL with
  ``user:password@`` and ``?token=``) and in URLs on the command line; then no canary, nor its first 8 characters,
  is in any byte written under ``d`` or printed;
- with ``--out`` at a folder of user files, and at one with fake (``{}``) biaskit markers: the user's files survive
  byte for byte, and the command either succeeds or stops with a coded error (E006 for the fake markers of a
  folder output);
- on malformed inputs (truncated, deeply nested, wrong types; tests/fuzz/test_cli_fuzz.py has the rest): a coded
  error or success, never a traceback;
- on inputs and outputs with Unicode names (Czech, Hebrew).
The model commands, the demo, training and scraping a dump are the slow set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from biaskit.cli import app

ROOT = Path(__file__).resolve().parents[2]
DUMP = ROOT / "tests/fixtures/wiki/enwiki-pages-articles-206pages.xml.bz2"
LMEVAL = ROOT / "tests/fixtures/lmeval/smollm2"
TEMPLATES = ROOT / "src/biaskit/data/templates/en.yaml"
TOKENIZERS = ROOT / "tests/evaluate/runners/data"
BBQ = ROOT / "tests/fixtures/bbq/religion_expanded16.jsonl"

ENV = {
    "HF_TOKEN": "hf_matrixCanaryHF0123456789abcdef",
    "LABEL_STUDIO_API_KEY": "lsMatrixCanaryKey0123456789abcd",
    "OPENAI_API_KEY": "sk-matrixCanaryOpenAI0123456789",
}
URL_PW, URL_TOKEN = "urlMatrixPassword-0123456", "urlMatrixToken-0123456789"
DEAD = f"http://bob:{URL_PW}@127.0.0.1:9"
CANARIES = [*ENV.values(), URL_PW, URL_TOKEN]
KEY = ENV["LABEL_STUDIO_API_KEY"]
CHAT_TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
USER_FILES = {"thesis.tex": b"\\documentclass{article} my thesis", "notes.txt": "my notes \u00e9".encode()}
FAKE_MARKERS = (
    "biaskit_export.json",
    "report_files.json",
    "biaskit_classifier.json",
    "biaskit_manifest.json",
    "biaskit_bold_export.manifest",
    "state.json",
    "dataset_info.json",
)


@dataclass(frozen=True)
class E:
    """One matrix entry: the argv (without ``biaskit``) from (inputs folder, output folder); what ``--out`` is."""

    argv: Callable[[Path, Path], list]
    out: str | None = None  # "file", "dir" or None (the command writes no --out)
    slow: bool = False
    reads: str | None = None  # the input slot malformed-input cases replace: "table" (first argument) or None


def _out(argv: list, new) -> list:
    """``argv`` with the value of ``--out`` replaced."""
    i = argv.index("--out")
    return [*argv[: i + 1], new, *argv[i + 2 :]]


MATRIX: dict[str, E] = {
    "demo": E(lambda i, d: ["demo", "--out", d / "run", "--quick"], out="dir", slow=True),
    "schema": E(lambda i, d: ["schema", "prompts", "--check", i / "prompts.parquet"], reads="table"),
    "assets": E(lambda i, d: ["assets"]),
    "version": E(lambda i, d: ["version"]),
    "generate": E(
        lambda i, d: ["generate", i / "prompts.parquet", "--model", i / "gpt2", "--max-new-tokens", "3", "--device", "cpu", "--out", d / "g.parquet"],
        out="file",
        slow=True,
    ),
    "fill-mask": E(
        lambda i, d: ["fill-mask", i / "sentences.parquet", "--model", i / "bert", "--top-k", "2", "--device", "cpu", "--out", d / "f.parquet"],
        out="file",
        slow=True,
    ),
    "likelihood": E(
        lambda i, d: ["likelihood", i / "prompts.parquet", "--model", i / "gpt2", "--device", "cpu", "--out", d / "l.parquet"], out="file", slow=True
    ),
    "score": E(
        lambda i, d: ["score", i / "gens.parquet", "--metrics", "vader", "--text-column", "continuation", "--out", d / "s.parquet"],
        out="file",
        reads="table",
    ),
    "report": E(lambda i, d: ["report", i / "scores.parquet", "--out", d / "rep", "--n-boot", "5"], out="dir", slow=True, reads="table"),
    "scrape dump": E(lambda i, d: ["scrape", "dump", DUMP, "--out", d / "p.parquet", "--max-pages", "3"], out="file", slow=True),
    "scrape api": E(
        lambda i, d: ["scrape", "api", f"{DEAD}/w/api.php?token={URL_TOKEN}", "--out", d / "p.parquet", "--max-retries", "0", "--max-pages", "1"],
        out="file",
    ),
    "prompts build": E(lambda i, d: ["prompts", "build", i / "sentences.parquet", "--out", d / "p.parquet"], out="file", reads="table"),
    "prompts rebuild": E(lambda i, d: ["prompts", "rebuild", i / "prompts.parquet", "--out", d / "p.parquet"], out="file", reads="table"),
    "bold import": E(lambda i, d: ["bold", "import", i / "bold.jsonl", "--out", d / "b.parquet"], out="file"),
    "bold export": E(lambda i, d: ["bold", "export", i / "prompts.parquet", "--out", d / "bo", "--layout", "both"], out="dir", reads="table"),
    "expand holistic": E(
        lambda i, d: ["expand", "holistic", "--axis", "ability", "--n-descriptors", "2", "--noun", "woman", "--out", d / "h.parquet"], out="file"
    ),
    "expand bbq": E(lambda i, d: ["expand", "bbq", "--categories", "Religion", "--out", d / "b.parquet"], out="file"),
    "expand bbq-choices": E(lambda i, d: ["expand", "bbq-choices", BBQ, "--out", d / "c.parquet"], out="file"),
    "expand templates": E(lambda i, d: ["expand", "templates", str(TEMPLATES), "--out", d / "t.parquet"], out="file"),
    "expand honest": E(lambda i, d: ["expand", "honest", "--file", i / "honest.tsv", "--out", d / "h.parquet"], out="file"),
    "templates validate": E(lambda i, d: ["templates", "validate", str(TEMPLATES)]),
    "templates show": E(lambda i, d: ["templates", "show", str(TEMPLATES)]),
    "templates export-sheet": E(lambda i, d: ["templates", "export-sheet", "--target", str(TEMPLATES), "--out", d / "sheet.csv"], out="file"),
    "templates counterfactual": E(
        lambda i, d: [
            "templates",
            "counterfactual",
            i / "sentences.parquet",
            "--axis",
            "gender",
            "--text-column",
            "sentence",
            "--no-syntax",
            "--out",
            d / "cf.parquet",
        ],
        out="file",
        reads="table",
    ),
    "templates import-sheet": E(lambda i, d: ["templates", "import-sheet", i / "sheet.csv", "--lang", "cs", "--out", d / "cs.yaml"], out="file"),
    "templates audit-pairs": E(
        lambda i, d: ["templates", "audit-pairs", i / "pairs.parquet", "--axis", "gender", "--by", "group", "--out", d / "audit.parquet"],
        out="file",
        reads="table",
    ),
    "hub stage": E(lambda i, d: ["hub", "stage", f"scores={i / 'scores.parquet'}", "--out", d / "hub"], out="dir"),
    "hub push": E(lambda i, d: ["hub", "push", i / "staged", "--repo-id", "org/name", "--dry-run"]),
    "hub load": E(lambda i, d: ["hub", "load", i / "load.jsonl", "--out", d / "l.parquet"], out="file"),
    "metrics list": E(lambda i, d: ["metrics", "list"]),
    "backends list": E(lambda i, d: ["backends", "list"]),
    "stats aggregate": E(
        lambda i, d: ["stats", "aggregate", i / "scores.parquet", "--labels", "vader_label", "--n-boot", "5", "--out", d / "agg.csv"],
        out="file",
        reads="table",
    ),
    "stats family": E(
        lambda i, d: ["stats", "family", i / "scores.parquet", "--kind", "group-gap", "--out", d / "fam.csv"], out="file", reads="table"
    ),
    "stats ppi": E(
        lambda i, d: [
            *("stats", "ppi", i / "scores.parquet", "--metric-column", "vader_label", "--human-column", "vader_label"),
            *("--label", "positive", "--by", "group", "--out", d / "ppi.csv"),
        ],
        out="file",
        reads="table",
    ),
    "cache info": E(lambda i, d: ["cache", "info", d / "cache"]),
    "cache clear": E(lambda i, d: ["cache", "clear", d / "cache"]),
    "stats ztest": E(lambda i, d: ["stats", "ztest", i / "scores.parquet", "--out", d / "z.csv"], out="file", reads="table"),
    "stats likelihood-bias": E(lambda i, d: ["stats", "likelihood-bias", i / "scores.parquet"], reads="table"),
    "stats genbias": E(
        lambda i, d: ["stats", "genbias", i / "scores.parquet", "--prob-columns", "vader_*", "--n-boot", "5", "--out", d / "gb"], out="dir"
    ),
    "stats bbq": E(lambda i, d: ["stats", "bbq", BBQ, "--prediction-column", "prediction", "--n-boot", "10", "--out", d / "b.csv"], out="file"),
    "stats validity": E(lambda i, d: ["stats", "validity", i / "scores.parquet", "--out", d / "v.csv"], out="file", reads="table"),
    "stats pairs": E(
        lambda i, d: ["stats", "pairs", i / "pairs.parquet", "--score-column", "vader_compound", "--by", "group", "--out", d / "pairs.csv"],
        out="file",
        reads="table",
    ),
    "train classifier": E(
        lambda i, d: [
            *("train", "classifier", i / "scores.parquet", "--text-column", "continuation", "--label-column", "vader_label"),
            *("--runs", "1", "--baselines-only", "--out", d / "clf"),
        ],
        out="dir",
        slow=True,
    ),
    "annotate sample": E(
        lambda i, d: [
            *("annotate", "sample", i / "scores.parquet", "--round", "r1", "--n", "6", "--bins", "1"),
            *("--tasks-out", d / "tasks.csv", "--ledger", d / "ledger.jsonl", "--out", d / "smp.parquet"),
        ],
        out="file",
        reads="table",
    ),
    "annotate export": E(lambda i, d: ["annotate", "export", i / "samples.parquet", "--out", d / "tasks.csv"], out="file", reads="table"),
    "annotate push": E(lambda i, d: ["annotate", "push", i / "samples.parquet", "--url", DEAD, "--ledger", d / "ledger.jsonl"]),
    "annotate pull": E(
        lambda i, d: [
            "annotate",
            "pull",
            i / "samples.parquet",
            "--results",
            i / "results.csv",
            "--ledger",
            d / "ledger.jsonl",
            "--out",
            d / "a.parquet",
        ],
        out="file",
    ),
    "annotate agreement": E(
        lambda i, d: ["annotate", "agreement", i / "ann.parquet", "--bootstrap", "5", "--ledger", d / "ledger.jsonl", "--out", d / "agr.parquet"],
        out="file",
        reads="table",
    ),
    "annotate validate": E(
        lambda i, d: [
            *("annotate", "validate", i / "ann.parquet", "--samples", i / "samples.parquet", "--metric", "vader", "--by", "group"),
            *("--bootstrap", "5", "--cv-folds", "0", "--ledger", d / "ledger.jsonl", "--out", d / "val.parquet"),
        ],
        out="file",
        reads="table",
    ),
    "annotate aggregate": E(
        lambda i, d: ["annotate", "aggregate", i / "ann.parquet", "--method", "majority", "--task", "sentiment", "--out", d / "labels.parquet"],
        out="file",
        reads="table",
    ),
    "annotate plan": E(lambda i, d: ["annotate", "plan", "--validation", i / "val.parquet", "--out", d / "plan.json"], out="file"),
    "annotate rounds": E(lambda i, d: ["annotate", "rounds", "--ledger", i / "ledger.jsonl"]),
    "annotate tasks": E(lambda i, d: ["annotate", "tasks", "sentiment", "--config"]),
    "export lm-eval": E(
        lambda i, d: ["export", "lm-eval", i / "prompts.parquet", "--config-by", "group", "--out", d / "lm"], out="dir", reads="table"
    ),
    "import lm-eval": E(lambda i, d: ["import", "lm-eval", i / "lmeval", "--group", "bold12", "--out", d / "g.parquet"], out="file"),
}


#: option combinations of a command that reach other code (the response cache, clusters, a judge, chat templates):
#: each runs under the canaries like a MATRIX entry, and every byte under the test's folder (outputs, caches,
#: ledgers, the working directory) is searched for them
VARIANTS: dict[str, E] = {
    "score judge local --cache": E(
        lambda i, d: [
            *("score", i / "gens.parquet", "-m", "judge", "-p", f"judge.model={i / 'chat'}", "-p", "judge.record_prompt=true"),
            *("--text-column", "continuation", "--cache", d / "cache", "--out", d / "j.parquet"),
        ],
        out="file",
        slow=True,
    ),
    "generate --format chat --cache": E(
        lambda i, d: [
            *(
                "generate",
                i / "prompts.parquet",
                "--model",
                i / "chat",
                "--format",
                "chat",
                "--system-prompt",
                f"key {KEY} {DEAD}/x?token={URL_TOKEN}",
            ),
            *("--max-new-tokens", "3", "--device", "cpu", "--cache", d / "cache", "--out", d / "g.parquet"),
        ],
        out="file",
        slow=True,
    ),
    "score judge server --cache": E(
        lambda i, d: [
            *("score", i / "gens.parquet", "-m", "judge", "-p", "judge.backend=openai", "-p", f"judge.base_url={_echo_url()}"),
            *("-p", "judge.model=m", "-p", "judge.max_retries=0", "-p", "judge.record_prompt=true"),
            *("--text-column", "continuation", "--cache", d / "cache", "--out", d / "j.parquet"),
        ],
        out="file",
    ),
    "generate --format chat --backend openai --cache": E(
        lambda i, d: [
            *("generate", i / "prompts.parquet", "--backend", "openai", "--base-url", _echo_url(), "--model", "m", "--format", "chat"),
            *("--system-prompt", f"key {KEY} {DEAD}/x?token={URL_TOKEN}", "--max-retries", "0", "--cache", d / "cache"),
            *("--out", d / "g.parquet"),
        ],
        out="file",
    ),
    "cache info (a filled cache)": E(lambda i, d: ["cache", "info", _filled_cache(d / "cache")]),
    "cache clear (a filled cache)": E(lambda i, d: ["cache", "clear", _filled_cache(d / "cache")]),
    "stats aggregate --cluster": E(
        lambda i, d: [
            *("stats", "aggregate", i / "scores.parquet", "--labels", "vader_label", "--cluster", "page_title", "--n-boot", "5"),
            *("--out", d / "agg.csv"),
        ],
        out="file",
    ),
    "stats ztest --cluster": E(lambda i, d: ["stats", "ztest", i / "scores.parquet", "--cluster", "group", "--out", d / "z.csv"], out="file"),
    "stats ppi --samples --annotations": E(
        lambda i, d: [
            *("stats", "ppi", i / "scores.parquet", "--metric-column", "vader_label", "--label", "positive", "--by", "group"),
            *("--samples", i / "samples.parquet", "--annotations", i / "ann.parquet", "--out", d / "ppi.csv"),
        ],
        out="file",
    ),
}


_ECHO: list = []


def _echo_url() -> str:
    """The base URL (``user:password@`` and ``?token=``) of an OpenAI-compatible endpoint, started once, that quotes
    every request back (its Authorization header: the key; its body: the data values, the system prompt) in the reply
    text, the chat reply's ``system_fingerprint`` and, for row 3, an HTTP 500 body; the judge's replies
    carry log-probabilities for its labels."""
    if not _ECHO:
        from tests.hardening.hardening_util import FakeServer

        server = FakeServer()

        def respond(h, path, body):
            echo = f"{h.headers.get('Authorization')} {json.dumps(body)}"
            if "number 3 " in json.dumps(body) or "positive 3" in json.dumps(body):  # row 3's prompt, row 3's text to judge
                return 500, {}, f"upstream failed: {echo}".encode()
            if not path.endswith("/chat/completions"):
                return 200, {}, json.dumps({"choices": [{"text": f" said {echo}"}]}).encode()
            tops = [{"token": t, "logprob": lp} for t, lp in (("positive", -0.2), ("negative", -2.0), ("neutral", -3.0))]
            content = [{"token": "positive", "logprob": -0.2, "top_logprobs": tops}]
            choice = {"message": {"role": "assistant", "content": f"positive {echo}"}, "logprobs": {"content": content}}
            reply = {"choices": [choice], "usage": {"prompt_tokens": 5, "completion_tokens": 1}, "system_fingerprint": echo}
            return 200, {}, json.dumps(reply).encode()

        server.respond = respond
        _ECHO.append(server)
    return f"http://bob:{URL_PW}@127.0.0.1:{_ECHO[0].port}/v1?token={URL_TOKEN}"


def _filled_cache(folder: Path) -> Path:
    """A response cache holding an entry whose key and value carry the canaries (as a judge's prompt would)."""
    from biaskit.evaluate.cache import ResponseCache

    c = ResponseCache(folder)
    c.put_many({f"prompt {KEY} {DEAD}": {"judge_prompt": f"{KEY} {ENV['HF_TOKEN']} {DEAD}/?token={URL_TOKEN}"}}, kind="judge")
    c.close()
    return folder


def all_commands() -> list[str]:
    """Every leaf command of the app (sub-apps included), as 'group sub' strings."""
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


def test_every_command_is_in_the_matrix():
    cmds = all_commands()
    assert len(cmds) >= 40
    missing = sorted(set(cmds) - set(MATRIX))
    assert not missing, f"commands without an entry in tests/core/test_command_matrix.py MATRIX (one line each): {missing}"
    assert not sorted(set(MATRIX) - set(cmds)), "matrix entries for commands that no longer exist"


# ----------------------------------------------------------------------------------------------- prepared inputs


def _rows(n: int = 12) -> list[dict]:
    labels = ["positive", "negative", "neutral"]
    return [
        {
            "prompt_id": f"p{i}",
            "text": f"The nurse number {i} said ",
            "source": "bold",
            "language": "en",
            "domain": "profession",
            "group": f"grp-{KEY}" if i % 2 else "plain",
            "page_title": f"Person {i}",
            "sample_index": 0,
            "model": "m",
            "kind": "generate",
            "continuation": f"see {DEAD}/doc?token={URL_TOKEN} and {labels[i % 3]} {i}",
            "full_text": f"The nurse number {i} said {labels[i % 3]} {i}",
            "vader_compound": [0.6, -0.6, 0.0][i % 3] + i / 1000,
            "vader_label": labels[i % 3],
        }
        for i in range(n)
    ]


def _run(args: list):
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=True)


@pytest.fixture(scope="session")
def inputs(tmp_path_factory) -> Path:
    """The prepared inputs every entry reads (built once): prompts, generations and scores holding canaries, a
    round's samples, annotations (one annotator named after a key), validation, ledger, lm-eval output, ..."""
    i = tmp_path_factory.mktemp("matrix-inputs")
    old = {k: os.environ.get(k) for k in ENV}
    os.environ.update(ENV)
    try:
        rows = _rows()
        prompt_cols = ["prompt_id", "text", "source", "language", "domain", "group", "page_title"]
        pq.write_table(pa.Table.from_pylist([{k: r[k] for k in prompt_cols} for r in rows]), i / "prompts.parquet")
        pq.write_table(pa.Table.from_pylist([{k: v for k, v in r.items() if not k.startswith("vader")} for r in rows]), i / "gens.parquet")
        pq.write_table(pa.Table.from_pylist(rows), i / "scores.parquet")
        pairs = [{**r, "pair_id": f"pair{k % 6}", "variant": "more" if k < 6 else "less"} for k, r in enumerate(rows)]  # same group per pair
        pq.write_table(pa.Table.from_pylist(pairs), i / "pairs.parquet")
        sents = [{"sentence": f"The {w} was a nurse.", "domain": "profession", "group": f"grp-{KEY}", "terms": "nurse"} for w in ("woman", "man")]
        pq.write_table(pa.Table.from_pylist(sents), i / "sentences.parquet")
        led = i / "ledger.jsonl"
        smp = _run(
            ["annotate", "sample", i / "scores.parquet", "--round", "r1", "--n", "8", "--bins", "1", "--out", i / "samples.parquet", "--ledger", led]
        )
        assert smp.exit_code == 0, smp.output
        ids = pq.read_table(i / "samples.parquet").column("sample_id").to_pylist()
        labels = ["positive", "negative", "neutral"]
        ann = [
            {"sample_id": s, "round": "r1", "annotator": f"ann-{KEY}" if j == 0 else f"w{j}", "label": labels[(k + (j == 2)) % 3]}
            for k, s in enumerate(ids)
            for j in range(3)
        ]
        pq.write_table(pa.Table.from_pylist(ann), i / "ann.parquet")
        (i / "results.csv").write_text("sample_id,annotator,label\n" + "".join(f"{r['sample_id']},{r['annotator']},{r['label']}\n" for r in ann))
        val = _run(
            ["annotate", "validate", i / "ann.parquet", "--samples", i / "samples.parquet", "--metric", "vader", "--by", "group"]
            + ["--bootstrap", "5", "--cv-folds", "0", "--out", i / "val.parquet", "--ledger", led]
        )
        assert val.exit_code == 0, val.output
        st = _run(["hub", "stage", f"scores={i / 'scores.parquet'}", "--out", i / "staged"])
        assert st.exit_code == 0, st.output
        (i / "bold.jsonl").write_text(
            json.dumps({"domain": "gender", "name": f"x-{KEY}", "category": "y", "prompts": ["The nurse "], "wikipedia": ["The nurse is kind"]})
            + "\n"
        )
        (i / "honest.tsv").write_text("raw\tidentity\tnumber\tcategory\ttype\n[I] is the most [M].\tthe woman\tsingular\tfemale\trule\n")
        (i / "sheet.csv").write_text("template_id,category,source,cs\n")
        (i / "load.jsonl").write_text("".join(json.dumps({"prompt_id": f"q{k}", "text": f"hello {KEY} {k}"}) + "\n" for k in range(3)))
        shutil.copytree(LMEVAL, i / "lmeval" / "model")
        for f in (i / "lmeval" / "model").glob("results_*.json"):
            f.write_text(f.read_text().replace("/tmp/h26w/smol", f"{DEAD}/v1?token={URL_TOKEN}"))
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return i


@pytest.fixture(scope="session")
def tiny_models(inputs) -> Path:
    """Untrained tiny GPT-2 and BERT folders in the inputs folder (only the slow model entries need them)."""
    import torch
    from tokenizers import Tokenizer
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.manual_seed(0)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_file(str(TOKENIZERS / "tiny_bpe.json")),
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )
    cfg = GPT2Config(
        vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=64, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id
    )
    GPT2LMHeadModel(cfg).save_pretrained(inputs / "gpt2")
    tok.save_pretrained(inputs / "gpt2")
    wp = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_file(str(TOKENIZERS / "tiny_wordpiece.json")),
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )
    bcfg = BertConfig(
        vocab_size=len(wp), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, max_position_embeddings=64
    )
    BertForMaskedLM(bcfg).save_pretrained(inputs / "bert")
    wp.save_pretrained(inputs / "bert")
    # a chat model (the judge, --format chat): the same tiny GPT-2 with a chat template and whole-word label tokens
    tok.chat_template = CHAT_TEMPLATE
    tok.add_tokens(["positive", "neutral", "negative"])
    chat = GPT2Config(
        vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=512, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id
    )
    GPT2LMHeadModel(chat).save_pretrained(inputs / "chat")
    tok.save_pretrained(inputs / "chat")
    return inputs


@pytest.fixture()
def canaries(monkeypatch, tmp_path):
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    monkeypatch.chdir(tmp_path)


def _params(pred=lambda e: True):
    return [pytest.param(c, marks=pytest.mark.slow if MATRIX[c].slow else ()) for c in sorted(MATRIX) if pred(MATRIX[c])]


def _check(res, args: list) -> str:
    """The run ended in success or a coded error; never a traceback. Returns what it printed."""
    shown = f"biaskit {' '.join(str(a)[:80] for a in args)}\nexit {res.exit_code}\n{res.output[-3000:]}"
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        tb = "".join(traceback.format_exception(type(res.exception), res.exception, res.exception.__traceback__))
        pytest.fail(f"uncaught exception\n{shown}\n{tb[-4000:]}")
    assert res.exit_code in (0, 1), shown
    assert "Traceback (most recent call last)" not in res.output, shown
    if res.exit_code == 1:
        assert "error[E" in res.output, f"exit 1 without a coded error line\n{shown}"
    return shown


def _needs(request, command: str, inputs: Path) -> Path:
    if command in ("generate", "fill-mask", "likelihood"):
        return request.getfixturevalue("tiny_models")
    return inputs


def _no_canary_anywhere(entry: E, i: Path, tmp_path: Path):
    """Run ``entry``; no canary (nor its first 8 characters) is printed, or in any byte of any file under
    ``tmp_path``: the output folder, the response cache, the ledger and the cache folder ($BIASKIT_CACHE), the
    working directory."""
    d = tmp_path / "w"
    d.mkdir()
    args = entry.argv(i, d)
    res = _run(args)
    shown = _check(res, args)
    needles = set(CANARIES) | {c[:8] for c in CANARIES}
    for n in needles:
        assert n not in res.output, f"{n!r} printed\n{shown}"
    for p in tmp_path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            data = p.read_bytes()
            for n in needles:
                assert n.encode() not in data, f"{n!r} written to {p}\n{shown}"
    return res, shown


@pytest.mark.parametrize("command", _params())
def test_command_writes_and_prints_no_secret(command, inputs, canaries, tmp_path, request):
    _no_canary_anywhere(MATRIX[command], _needs(request, command, inputs), tmp_path)


@pytest.mark.parametrize("variant", [pytest.param(v, marks=pytest.mark.slow if VARIANTS[v].slow else ()) for v in sorted(VARIANTS)])
def test_option_variant_writes_and_prints_no_secret(variant, inputs, canaries, tmp_path, request):
    i = request.getfixturevalue("tiny_models") if VARIANTS[variant].slow else inputs
    res, shown = _no_canary_anywhere(VARIANTS[variant], i, tmp_path)
    assert res.exit_code == 0, shown  # valid options on valid inputs: the code behind them ran


def _user_folder(d: Path, markers: bool) -> Path:
    f = d / "mine"
    f.mkdir()
    for name, data in USER_FILES.items():
        (f / name).write_bytes(data)
    if markers:
        for m in FAKE_MARKERS:
            (f / m).write_text("{}\n")
    return f


@pytest.mark.parametrize("markers", [False, True], ids=["user-files", "fake-marker"])
@pytest.mark.parametrize("command", _params(lambda e: e.out is not None))
def test_out_at_a_folder_of_user_files_keeps_them(command, markers, inputs, canaries, tmp_path, request):
    i = _needs(request, command, inputs)
    d = tmp_path / "w"
    d.mkdir()
    folder = _user_folder(d, markers)
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    args = _out(MATRIX[command].argv(i, d), folder)
    res = _run(args)
    shown = _check(res, args)
    for rel, data in before.items():
        assert (folder / rel).is_file() and (folder / rel).read_bytes() == data, f"{rel} changed or gone\n{shown}"
    if markers and MATRIX[command].out == "dir":
        assert res.exit_code == 1 and "error[E006]" in res.output, f"a folder with a fake marker is not biaskit's\n{shown}"


MALFORMED = {
    "truncated": lambda good: good[: max(1, len(good) // 2)],
    "deeply_nested": lambda good: (b"[" * 100_000) + b"\n",
    "wrong_types": lambda good: b'{"prompt_id": 1, "text": [1, 2], "round": {"a": 1}, "sample_id": 2.5, "annotator": null, "label": true}\n',
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
@pytest.mark.parametrize("command", _params(lambda e: e.reads == "table" and not e.slow))
def test_malformed_input_gives_a_coded_error(command, kind, inputs, canaries, tmp_path):
    d = tmp_path / "w"
    d.mkdir()
    args = MATRIX[command].argv(inputs, d)
    src = next(a for a in args if isinstance(a, Path) and a.is_file())
    bad = d / ("bad" + (".jsonl" if kind != "truncated" else src.suffix))
    bad.write_bytes(MALFORMED[kind](src.read_bytes()))
    args = [bad if a == src else a for a in args]
    res = _run(args)
    _check(res, args)
    assert res.exit_code == 1, res.output


@pytest.mark.parametrize("command", ["score", "annotate sample", "export lm-eval", "stats aggregate", "annotate aggregate"])
def test_unicode_file_names_work(command, inputs, canaries, tmp_path):
    d = tmp_path / "výsledky-שלום"
    d.mkdir()
    args = MATRIX[command].argv(inputs, d)
    src = next(a for a in args if isinstance(a, Path) and a.is_file())
    uni = d / f"vstup-ž-מקור{src.suffix}"
    shutil.copy(src, uni)
    out = args[args.index("--out") + 1]
    args = _out([uni if a == src else a for a in args], out.with_name("výstup-ř-" + out.name))
    res = _run(args)
    _check(res, args)
    assert res.exit_code == 0, res.output
    assert any("výstup-ř-" in p.name for p in d.iterdir())


# ----------------------------------------------------------------------------------------------- plugins


def _plugin(root: Path, name: str) -> Path:
    """A real installed distribution (as importlib.metadata sees it) declaring metric ``name``."""
    site = root / "site"
    (site / "biaskit_clash").mkdir(parents=True)
    (site / "biaskit_clash" / "__init__.py").write_text("class M:\n    name = 'x'\n")
    info = site / "biaskit_clash-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: biaskit-clash\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[biaskit.metrics]\n{name} = biaskit_clash:M\n")
    (info / "RECORD").write_text("")
    return site


def test_a_plugin_clashing_with_a_built_in_is_a_coded_error_and_never_breaks_help(tmp_path):
    site = _plugin(tmp_path, "vader")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]), "HF_HUB_OFFLINE": "1"}

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-c", "from biaskit.cli import main; main()", *args], capture_output=True, text=True, env=env, timeout=120
        )

    for args in (["--help"], ["score", "--help"], ["version"]):  # plugins load on first use: none of these loads them
        r = cli(*args)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stderr)
    r = cli("metrics", "list")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("error[E240]") and "biaskit-clash" in line and "biaskit.evaluate.metrics.vader:VaderMetric" in line, line
