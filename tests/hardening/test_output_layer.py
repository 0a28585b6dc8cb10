"""The output layer (biaskit.output, biaskit.ownership): its data-loss and leak cases.

Data loss: an lm-eval export into a folder with a ``{}`` marker, a re-export into an earlier export folder (a
user's notes file, an edited README), ``annotate aggregate`` over a user's ``<stem>.annotators.parquet``.
Leaks: a known secret inside data values (a group named ``grp-<LABEL_STUDIO_API_KEY>``, an annotator named after
it) reaches no byte of any output or listing; two secrets sharing a long prefix are both masked in full; a model
URL with ``user:password@...?token=`` never reaches the ``model`` column or a staged dataset.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app

ROOT = Path(__file__).resolve().parents[2]
LMEVAL_FIX = ROOT / "tests" / "fixtures" / "lmeval" / "smollm2"
KEY = "lsOutLayerCanary0123456789abcdef"
HF = "hf_outLayerCanaryHF0123456789abcd"


def _cli(*args):
    return CliRunner().invoke(app, ["--quiet", *[str(a) for a in args]])


def _prompts(path: Path, n: int = 6) -> Path:
    rows = [
        {
            "prompt_id": f"p{i}",
            "text": f"The nurse number {i} said ",
            "source": "bold",
            "language": "en",
            "domain": "profession",
            "group": f"g{i % 2}",
        }
        for i in range(n)
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


# ----------------------------------------------------------------------------------------------- data loss


def test_export_into_a_folder_with_an_empty_marker_is_refused_and_keeps_the_users_files(tmp_path):
    src = _prompts(tmp_path / "prompts.parquet")
    uf = tmp_path / "uf"
    uf.mkdir()
    (uf / "biaskit_export.json").write_text("{}\n")
    (uf / "thesis.tex").write_text("my thesis")
    r = _cli("export", "lm-eval", src, "--out", uf, "--name", "bold")
    assert r.exit_code == 1 and r.output.startswith("error[E006]"), r.output
    assert (uf / "thesis.tex").read_text() == "my thesis" and (uf / "biaskit_export.json").read_text() == "{}\n"
    assert sorted(p.name for p in uf.iterdir()) == ["biaskit_export.json", "thesis.tex"]
    # with --overwrite biaskit writes its files there, and the user's file stays
    r = _cli("export", "lm-eval", src, "--out", uf, "--name", "bold", "--overwrite")
    assert r.exit_code == 0, r.output
    assert (uf / "thesis.tex").read_text() == "my thesis" and (uf / "bold.yaml").is_file()


def test_re_export_keeps_a_notes_file_and_refuses_to_overwrite_an_edited_readme(tmp_path):
    src = _prompts(tmp_path / "prompts.parquet")
    out = tmp_path / "tasks"
    assert _cli("export", "lm-eval", src, "--out", out, "--name", "bold").exit_code == 0
    marker = json.loads((out / "biaskit_export.json").read_text())
    assert marker["written_by"] == "biaskit" and "README.md" in marker["files"] and "data/bold_profession.parquet" in marker["files"]
    (out / "notes.txt").write_text("my notes")
    r = _cli("export", "lm-eval", src, "--out", out, "--name", "bold", "--max-new-tokens", "7")
    assert r.exit_code == 0, r.output
    assert (out / "notes.txt").read_text() == "my notes"  # main: the whole folder was replaced, notes deleted
    assert "max_gen_toks: 7" in (out / "bold_profession.yaml").read_text()
    (out / "README.md").write_text("my edited README")
    r = _cli("export", "lm-eval", src, "--out", out, "--name", "bold")
    assert r.exit_code == 1 and r.output.startswith("error[E006]") and "README.md" in r.output, r.output
    assert (out / "README.md").read_text() == "my edited README" and (out / "notes.txt").read_text() == "my notes"
    r = _cli("export", "lm-eval", src, "--out", out, "--name", "bold", "--overwrite")
    assert r.exit_code == 0, r.output
    assert (out / "README.md.user-1").read_text() == "my edited README"  # kept aside, never deleted
    assert (out / "notes.txt").read_text() == "my notes" and "lm_eval" in (out / "README.md").read_text()


def _annotations(path: Path, annotator_names=("a1", "a2", "a3")) -> Path:
    rows = [
        {"sample_id": f"s-{i}", "round": "r1", "annotator": a, "label": ["positive", "negative"][(i + j) % 3 == 0]}
        for i in range(6)
        for j, a in enumerate(annotator_names)
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_aggregate_refuses_to_replace_a_users_annotators_file(tmp_path):
    ann = _annotations(tmp_path / "ann.parquet")
    side = tmp_path / "labels.annotators.parquet"
    side.write_bytes(b"my own table")
    r = _cli("annotate", "aggregate", ann, "--method", "majority", "--task", "sentiment", "--out", tmp_path / "labels.parquet")
    assert r.exit_code == 1 and r.output.startswith("error[E006]") and "labels.annotators.parquet" in r.output, r.output
    assert side.read_bytes() == b"my own table"
    side.unlink()
    for _ in range(2):  # biaskit's own unchanged side file is replaced on a rerun
        r = _cli("annotate", "aggregate", ann, "--method", "majority", "--task", "sentiment", "--out", tmp_path / "labels.parquet")
        assert r.exit_code == 0, r.output
    assert pq.read_table(side).num_rows == 3


# ----------------------------------------------------------------------------------------------- leaks


def test_two_secrets_sharing_a_prefix_are_both_masked_in_full():
    from biaskit.secrets import redact_known

    a = "SharedHead-0123-alpha-longer-tail-xyz"
    b = "SharedHead-0123-beta-tail-9876"
    text = f"Bearer {b} and {a[:20]} and {b[:12]}"
    out = redact_known(text, [a, b])
    # main: a's prefix pass masked only b's shared head: "***beta-tail-9876" was left
    assert out == "Bearer *** and *** and ***", out
    for s in (a, b):
        assert s[10:18] not in out
    assert "beta-tail" not in redact_known(f"x{b}y", [a, b])


def test_two_env_secrets_sharing_a_prefix_never_reach_a_table(tmp_path, monkeypatch):
    a, b = "CommonPrefix77-first-token-abcdef", "CommonPrefix77-second-tok-123"
    monkeypatch.setenv("HF_TOKEN", a)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", b)
    from biaskit.io import write_table

    p = write_table(pa.table({"prompt_id": ["p0"], "continuation": [f"echo {b}"]}), tmp_path / "t.jsonl")
    data = p.read_text()
    assert "second-tok" not in data and "CommonPr" not in data, data


@pytest.fixture()
def canary_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", KEY)
    monkeypatch.setenv("HF_TOKEN", HF)
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def _scores(path: Path, n: int = 24) -> Path:
    labels = ["positive", "negative", "neutral"]
    rows = [
        {
            "prompt_id": f"p{i}",
            "text": f"The person {i} is ",
            "source": "bold",
            "language": "en",
            "domain": "profession",
            "group": f"grp-{KEY}" if i % 2 else "plain",
            "sample_index": 0,
            "model": "m",
            "kind": "generate",
            "continuation": f"kind and {labels[i % 3]} number {i}",
            "full_text": f"The person {i} is kind and {labels[i % 3]} number {i}",
            "vader_compound": [0.6, -0.6, 0.0][i % 3] + i / 1000,
            "vader_label": labels[i % 3],
        }
        for i in range(n)
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _assert_clean(root: Path, printed: list[str], min_files: int = 12) -> None:
    needles = {KEY, HF, KEY[:8], HF[:8]}
    files = [p for p in root.rglob("*") if p.is_file() and p.name not in ("scores.parquet", "ann.parquet") and "cache" not in p.parts]
    assert len(files) >= min_files, files
    for p in files:
        data = p.read_bytes()
        for n in needles:
            assert n.encode() not in data, f"{n!r} in {p}"
    for out in printed:
        for n in needles:
            assert n not in out, f"{n!r} printed: {out[:2000]}"


def test_a_secret_inside_data_values_reaches_no_output_or_listing(tmp_path, canary_env):
    """Report HTML/MD/tables, stats aggregate CSV, train model card/metrics.json/marker/split.csv, export data,
    --tasks-out files, samples manifest, round ledger, `annotate rounds`, stdout of aggregate and validate."""
    scores = _scores(tmp_path / "scores.parquet")
    led = tmp_path / "ledger.jsonl"
    runs = [
        ("report", scores, "--out", tmp_path / "report", "--n-boot", "5"),
        ("stats", "aggregate", scores, "--labels", "vader_label", "--n-boot", "5", "--out", tmp_path / "agg.csv"),
        ("export", "lm-eval", scores, "--out", tmp_path / "lmeval", "--config-by", "group"),
        (
            "annotate",
            "sample",
            scores,
            "--round",
            "r1",
            "--n",
            "12",
            "--bins",
            "1",
            "--out",
            tmp_path / "smp.parquet",
            "--tasks-out",
            tmp_path / "tasks.jsonl",
            "--ledger",
            led,
        ),
    ]
    printed = []
    for argv in runs:
        r = _cli(*argv)
        assert r.exit_code == 0, (argv[:2], r.output)
        printed.append(r.output)
    smp = pq.read_table(tmp_path / "smp.parquet")
    assert any("***" in (g or "") for g in smp.column("group").to_pylist())  # the secret did reach biaskit
    rows = [
        {
            "sample_id": s,
            "round": "r1",
            "annotator": f"ann-{KEY}" if j == 0 else f"w{j}",
            "label": ["positive", "negative", "neutral"][(i + (j == 2)) % 3],
        }
        for i, s in enumerate(smp.column("sample_id").to_pylist())
        for j in range(3)
    ]
    ann = tmp_path / "ann.parquet"
    pq.write_table(pa.Table.from_pylist(rows), ann)
    later = [
        ("annotate", "aggregate", ann, "--method", "majority", "--task", "sentiment", "--out", tmp_path / "labels.parquet"),
        (
            "annotate",
            "validate",
            ann,
            "--samples",
            tmp_path / "smp.parquet",
            "--metric",
            "vader",
            "--by",
            "group",
            "--bootstrap",
            "5",
            "--cv-folds",
            "0",
            "--out",
            tmp_path / "val.parquet",
            "--ledger",
            led,
        ),
        ("annotate", "rounds", "--ledger", led),
    ]
    for argv in later:
        r = CliRunner().invoke(app, [str(a) for a in argv])  # not --quiet: the listings are what is checked
        assert r.exit_code == 0, (argv[:2], r.output)
        printed.append(r.output)
    assert "ann-***" in printed[-3] and "grp-***" in printed[-2]
    _assert_clean(tmp_path, printed)


def test_train_model_card_metrics_marker_and_split_hold_no_secret(tmp_path, canary_env):
    scores = _scores(tmp_path / "scores.parquet", n=30)
    t = pq.read_table(scores).to_pylist()
    for r in t:
        r["continuation"] = f"{r['continuation']} said grp-{KEY}"
        r["vader_label"] = f"{r['vader_label']}-{KEY}"  # the label names reach the card, metrics.json and the marker
    pq.write_table(pa.Table.from_pylist(t), scores)
    args = ("train", "classifier", scores, "--text-column", "continuation", "--label-column", "vader_label", "--runs", "1")
    r = _cli(*args, "--baselines-only", "--out", tmp_path / "clf")
    assert r.exit_code == 0, r.output
    names = {p.name for p in (tmp_path / "clf").rglob("*")}
    assert {"metrics.json", "split.csv", "README.md", "biaskit_classifier.json"} <= names, names
    _assert_clean(tmp_path, [r.output], min_files=5)


def test_import_lm_eval_never_copies_model_url_credentials_and_hub_stage_never_publishes_them(tmp_path, canary_env):
    run = tmp_path / "lm" / "model"
    shutil.copytree(LMEVAL_FIX, run)
    url = "https://alice:lmPassCanary-0123456@api.example.com/v1?token=lmTokCanary-0123456&x=1"
    for f in run.glob("results_*.json"):
        f.write_text(f.read_text().replace("/tmp/h26w/smol", url))
    gens = tmp_path / "g.parquet"
    r = _cli("import", "lm-eval", tmp_path / "lm", "--group", "bold12", "--out", gens)
    assert r.exit_code == 0, r.output
    models = set(pq.read_table(gens).column("model").to_pylist())
    assert models == {"https://api.example.com/v1?token=%2A%2A%2A&x=1"} or all("Canary" not in m for m in models), models
    r2 = _cli("hub", "stage", f"generations={gens}", "--out", tmp_path / "hub")
    assert r2.exit_code == 0, r2.output
    for p in [gens, *tmp_path.glob("g.parquet*"), *(tmp_path / "hub").rglob("*")]:
        if p.is_file():
            data = p.read_bytes()
            for n in ("lmPassCanary", "lmTokCanary", "lmPassCa", "lmTokCan"):
                assert n.encode() not in data, f"{n} in {p}"
    for out in (r.output, r2.output):
        assert "Canary" not in out


def test_a_folder_filled_stage_by_stage_is_biaskits_only_under_its_own_marker(tmp_path):
    """ownership.claim_stagewise (the demo's run folder, a report folder): missing, empty or marked by biaskit is
    fine; a ``{}`` marker, a marker of another writer, or user files without a marker are E006, and with
    ``unmarked_ok`` a file the command would write that is already there (the user's) is E006 too."""
    from biaskit.errors import BiaskitError
    from biaskit.ownership import claim_stagewise

    claim_stagewise(tmp_path / "new", "m.json", "biaskit demo")  # missing
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / ".hidden").write_text("x")
    claim_stagewise(tmp_path / "empty", "m.json", "biaskit demo")  # only dot files: empty
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "m.json").write_text(json.dumps({"written_by": "biaskit demo"}))
    (ours / "scores.parquet").write_bytes(b"x")
    claim_stagewise(ours, "m.json", "biaskit demo")
    cases = {
        "fake": ({"m.json": "{}\n", "notes.txt": "mine"}, {}),
        "other writer": ({"m.json": json.dumps({"written_by": "biaskit report"}), "a.txt": "x"}, {}),
        "not json": ({"m.json": "[1, 2", "a.txt": "x"}, {}),
        "a list": ({"m.json": "[]", "a.txt": "x"}, {}),
        "unmarked": ({"notes.txt": "mine"}, {}),
        "unmarked, a file it writes": ({"report.html": "<p>mine</p>"}, {"unmarked_ok": True, "writes": ("report.html",)}),
    }
    for name, (files, kw) in cases.items():
        d = tmp_path / name.replace(" ", "_").replace(",", "")
        d.mkdir()
        for rel, text in files.items():
            (d / rel).write_text(text)
        with pytest.raises(BiaskitError) as e:
            claim_stagewise(d, "m.json", "biaskit demo", **kw)
        assert e.value.code == "E006", name
        assert {p.name: p.read_text() for p in d.iterdir()} == files, name  # nothing of the user's changed
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "notes.txt").write_text("mine")
    claim_stagewise(mixed, "m.json", "biaskit report", unmarked_ok=True, writes=("report.html",))  # writes beside it
    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(BiaskitError) as e:
        claim_stagewise(f, "m.json", "biaskit demo")
    assert e.value.code == "E006"


def test_report_into_a_folder_holding_a_users_report_html_is_refused(tmp_path):
    inp = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"prompt_id": ["a", "b"], "domain": ["d", "d"], "group": ["x", "y"], "vader_compound": [0.1, -0.2]}), inp)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.html").write_text("<p>my report</p>")
    r = CliRunner().invoke(app, ["report", str(inp), "--out", str(out), "--n-boot", "5"])
    assert r.exit_code == 1 and "error[E006]" in r.output and "report.html" in r.output, r.output
    assert (out / "report.html").read_text() == "<p>my report</p>"
    # a report folder biaskit wrote is rewritten in place
    new = tmp_path / "rep2"
    r1 = CliRunner().invoke(app, ["report", str(inp), "--out", str(new), "--n-boot", "5"])
    r2 = CliRunner().invoke(app, ["report", str(inp), "--out", str(new), "--n-boot", "5"])
    assert r1.exit_code == 0 and r2.exit_code == 0, r1.output + r2.output


# ------------------------------------------------------------------------- every folder output, one ownership layer


def _genbias_input(path: Path) -> Path:
    # two descriptors in each of two templates, three styles: enough for one axis's figures
    vecs = {("d1", "T1"): (0.6, 0.2, 0.2), ("d2", "T1"): (0.2, 0.2, 0.6), ("d1", "T2"): (0.1, 0.1, 0.8), ("d2", "T2"): (0.4, 0.4, 0.2)}
    rows = [
        {"axis": "ability", "descriptor": d, "template": t, "continuation": "...", "kind": "generate", "p_x": x, "p_y": y, "p_z": z}
        for (d, t), (x, y, z) in vecs.items()
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _bold_prompts(path: Path) -> Path:
    t = pq.read_table(_prompts(path))
    pq.write_table(t.append_column("term", pa.array([f"nurse {i}" for i in range(t.num_rows)])), path)  # BOLD's entity names
    return path


# command -> (argv from the input folder and --out, the listed file the user edits, the command's --overwrite flag)
FOLDER_OUTPUTS = {
    "export lm-eval": (lambda d, out: ["export", "lm-eval", _prompts(d / "p.parquet"), "--out", out, "--name", "bold"], "README.md", "--overwrite"),
    "hub stage": (lambda d, out: ["hub", "stage", f"prompts={_prompts(d / 'p.parquet')}", "--out", out], "README.md", None),
    "bold export": (
        lambda d, out: ["bold", "export", _bold_prompts(d / "p.parquet"), "--out", out, "--layout", "both"],
        "prompts/profession_prompt.json",
        "--overwrite",
    ),
    "stats genbias": (
        lambda d, out: ["stats", "genbias", _genbias_input(d / "g.parquet"), "--prob-columns", "p_*", "--n-boot", "0", "--out", out],
        "by_axis.csv",
        None,
    ),
    "train classifier": (
        lambda d, out: [
            *("train", "classifier", _scores(d / "s.parquet", n=30), "--text-column", "continuation", "--label-column", "vader_label"),
            *("--runs", "1", "--baselines-only", "--out", out),
        ],
        "README.md",
        None,
    ),
}


@pytest.mark.parametrize("command", sorted(FOLDER_OUTPUTS))
def test_a_folder_output_with_an_edited_file_is_refused_and_the_edit_kept(command, tmp_path):
    argv, edited, overwrite = FOLDER_OUTPUTS[command]
    d, out = tmp_path / "in", tmp_path / "out"
    d.mkdir()
    args = argv(d, out)
    r = _cli(*args)
    assert r.exit_code == 0, r.output
    marker = next(json.loads(p.read_text()) for p in out.iterdir() if p.is_file() and _is_marker(p))
    assert marker["written_by"] == "biaskit" and edited in marker["files"], marker.get("files")
    mine = b"my own edit \xc5\xbe\n"
    (out / edited).write_bytes(mine)
    r = _cli(*args)
    assert r.exit_code == 1 and r.output.startswith("error[E006]") and edited in r.output, r.output
    assert (out / edited).read_bytes() == mine
    if overwrite:  # biaskit writes its file, and the user's edit is kept beside it
        r = _cli(*args, overwrite)
        assert r.exit_code == 0, r.output
        assert (out / f"{edited}.user-1").read_bytes() == mine and (out / edited).read_bytes() != mine


def _is_marker(p: Path) -> bool:
    try:
        m = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(m, dict) and m.get("written_by") == "biaskit" and isinstance(m.get("files"), dict)


def test_a_secret_in_a_group_or_domain_reaches_no_file_name_even_lower_cased(tmp_path, canary_env):
    """File names made from data (lm-eval task names per group, report figures and tables per domain) are lower
    case: a secret there was lower-cased before the output layer could find it, and so reached the names and the
    files that name them (`biaskit_bold_grp_lsoutlayercanary0123456789abcdef.yaml`)."""
    scores = _scores(tmp_path / "scores.parquet")
    t = pq.read_table(scores).to_pylist()
    for i, r in enumerate(t):
        r["domain"] = f"dom-{KEY}" if i % 3 else "profession"
    pq.write_table(pa.Table.from_pylist(t), scores)
    for argv in (
        ("export", "lm-eval", scores, "--out", tmp_path / "lmeval", "--config-by", "group"),
        ("export", "lm-eval", scores, "--out", tmp_path / "lmeval_dom", "--config-by", "domain"),
        ("report", scores, "--out", tmp_path / "report", "--n-boot", "5"),
    ):
        r = _cli(*argv)
        assert r.exit_code == 0, (argv[:2], r.output)
        assert KEY[:8].lower() not in r.output.lower()
    tasks = sorted(p.name for p in (tmp_path / "lmeval").glob("*.yaml"))
    assert tasks == ["biaskit_bold.yaml", "biaskit_bold_grp.yaml", "biaskit_bold_plain.yaml"], tasks  # grp-*** -> grp
    figs = sorted(p.name for p in (tmp_path / "report" / "figures").glob("sentiment_*.png"))
    assert figs == ["sentiment_dom.png", "sentiment_profession.png"], figs
    needle = KEY[:8].lower()
    written = [p for p in tmp_path.rglob("*") if p.name != "scores.parquet" and "cache" not in p.parts]
    for p in written:
        assert needle not in str(p.relative_to(tmp_path)).lower(), p
        if p.is_file():
            assert needle.encode() not in p.read_bytes().lower(), p


def test_a_report_or_demo_file_the_user_edited_is_refused_and_kept(tmp_path, quick_demo):
    """The folders filled file by file list their files with sha256 (ownership.mark_stagewise): an edited report.md
    or scores.parquet is E006 on the next run, and keeps its bytes; an unchanged folder is rewritten in place."""
    from biaskit.demo import DEMO_MARKER, run_demo
    from biaskit.errors import BiaskitError

    inp = tmp_path / "scores.parquet"
    pq.write_table(pa.table({"prompt_id": ["a", "b"], "domain": ["d", "d"], "group": ["x", "y"], "vader_compound": [0.1, -0.2]}), inp)
    rep = tmp_path / "rep"
    args = ["report", str(inp), "--out", str(rep), "--n-boot", "5"]
    assert CliRunner().invoke(app, args).exit_code == 0
    marker = json.loads((rep / "report_files.json").read_text())
    assert marker["written_by"] == "biaskit report" and len(marker["files"]["report.md"]) == 64
    assert CliRunner().invoke(app, args).exit_code == 0  # unchanged: rewritten
    (rep / "report.md").write_text("my notes on the report\n")
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 1 and "error[E006]" in r.output and "report.md" in r.output, r.output
    assert (rep / "report.md").read_text() == "my notes on the report\n"
    run_dir, _ = quick_demo
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    listed = json.loads((run / DEMO_MARKER).read_text())["files"]
    assert "scores.parquet" in listed and not any(k.startswith(("report/", "hub/")) for k in listed)
    (run / "scores.parquet").write_bytes(b"my own table")
    with pytest.raises(BiaskitError) as e:
        run_demo(run, quick=True, stages=("templates",))
    assert e.value.code == "E006" and "scores.parquet" in str(e.value)
    assert (run / "scores.parquet").read_bytes() == b"my own table"
