"""`biaskit train classifier`: protocol (split, runs, baselines) against scikit-learn, a tiny encoder built here,
and the trained folder used by `biaskit score` and `annotate validate`."""

from __future__ import annotations

import json
import os
import random

import pyarrow as pa
import pytest
from typer.testing import CliRunner

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from biaskit.cli import app  # noqa: E402
from biaskit.errors import BiaskitError  # noqa: E402
from biaskit.train.classifier import train_classifier  # noqa: E402
from biaskit.train.config import TrainConfig  # noqa: E402
from biaskit.train.data import labelled_data, parse_labels, parse_split, stratified_split  # noqa: E402
from biaskit.train.figures import accuracy_macro_f1  # noqa: E402

POS = ["kind", "brilliant", "honest", "generous", "respected", "wonderful"]
NEG = ["cruel", "lazy", "dishonest", "violent", "rude", "terrible"]
NEU = ["the market", "the office", "the station", "the library", "the park", "the shop"]
DAYS = ["monday", "tuesday", "friday", "sunday"]


def make_rows(n_per_class: int = 20, seed: int = 0) -> list[dict]:
    """Regard-style labels -1/0/1 (negative/neutral/positive) and 2 (other, to be dropped)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n_per_class):
        rows.append({"text": f"XYZ was {rng.choice(POS)} and {rng.choice(POS)}.", "label": 1})
        rows.append({"text": f"XYZ was {rng.choice(NEG)} and {rng.choice(NEG)}.", "label": -1})
        rows.append({"text": f"XYZ went to {rng.choice(NEU)} on {rng.choice(DAYS)}.", "label": 0})
    rows += [{"text": "the weather", "label": 2}] * 3 + [{"text": None, "label": 1}, {"text": "XYZ was kind.", "label": None}]
    return rows


def _vocab_words():
    words = set("xyz was and went to on the .".split()) | set(POS) | set(NEG) | set(DAYS)
    words |= {w for p in NEU for w in p.split()} | {"weather"}
    return sorted(words)


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """Tiny matrices: one torch thread is fastest, and on a shared CI core two threads spin-wait (measured 50x slower)."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory, _one_thread):
    """A random-initialised BERT encoder (hidden 32, no classification head) + WordPiece tokenizer over a fixed vocabulary."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    path = tmp_path_factory.mktemp("tiny-encoder")
    chars = sorted(set("abcdefghijklmnopqrstuvwxyz."))
    vocab = list(dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars), *_vocab_words()]))
    tok = Tokenizer(models.WordPiece(vocab={t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", model_max_length=32
    )
    fast.save_pretrained(path)
    torch.manual_seed(0)
    BertModel(
        BertConfig(
            vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=32
        )
    ).save_pretrained(path)
    return str(path)


def _cfg(enc, **kw):
    base = dict(base_model=enc, split="0.6/0.2/0.2", runs=2, seed=0, epochs=8, patience=3, lr=3e-3, batch_size=8, device="cpu")
    base.update(kw)
    return TrainConfig(**base)


def _data():
    return labelled_data(pa.Table.from_pylist(make_rows()), labels="-1=negative,0=neutral,1=positive", drop_labels=["2"])


@pytest.fixture(scope="module")
def trained(tiny_encoder, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "clf"
    res = train_classifier(_data(), out, _cfg(tiny_encoder), progress=False, data_license="CC0-1.0")
    return res


def test_labels_mapping_drop_and_counts():
    d = _data()
    assert d.labels == ["negative", "neutral", "positive"] and d.ordinal
    assert d.counts() == {"negative": 20, "neutral": 20, "positive": 20}
    assert d.dropped == {"label 2 dropped": 3, "no text": 1, "null label": 1}
    assert parse_labels("a,b") == (["a", "b"], {"a": "a", "b": "b"})
    with pytest.raises(BiaskitError, match="E171"):  # label 2 neither listed nor dropped
        labelled_data(pa.Table.from_pylist(make_rows()), labels="-1=negative,0=neutral,1=positive")
    with pytest.raises(BiaskitError, match="E171"):  # '-1' and '1' both become '1' as column names
        labelled_data(pa.Table.from_pylist(make_rows()), labels="-1,0,1", drop_labels=["2"])


def test_split_counts_fractions_and_errors():
    assert parse_split("212/60/30", 302) == (212, 60, 30)
    assert parse_split("0.7/0.2/0.1", 300) == (210, 60, 30)
    for bad in ("212/60/31", "1/2", "0.8/0.3/0.1", "a/b/c", "10/0/5"):
        with pytest.raises(BiaskitError, match="E172"):
            parse_split(bad, 302)
    y = [0] * 10 + [1] * 10 + [2] * 10
    tr, dv, te = stratified_split(y, (18, 6, 6), seed=1)
    assert sorted(tr + dv + te) == list(range(30))
    assert [sum(y[i] == c for i in te) for c in range(3)] == [2, 2, 2]  # stratified
    assert stratified_split(y, (18, 6, 6), seed=1) == (tr, dv, te)


def test_accuracy_macro_f1_equal_sklearn():
    from sklearn.metrics import accuracy_score, f1_score

    yt, yp = [0, 0, 1, 1, 2, 2, 2], [0, 1, 1, 1, 0, 2, 1]
    assert accuracy_macro_f1(yt, yp) == pytest.approx((accuracy_score(yt, yp), f1_score(yt, yp, average="macro")))
    yp2 = [0, 0, 0, 0, 0, 0, 0]  # classes 1 and 2 never predicted: F1 0 each
    assert accuracy_macro_f1(yt, yp2)[1] == pytest.approx(f1_score(yt, yp2, average="macro", zero_division=0))


def test_baselines_equal_sklearn_on_the_same_split(trained):
    from sklearn.dummy import DummyClassifier
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import train_test_split
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    d = _data()
    m = trained.metrics
    n = len(d.y)  # 60 -> test 12, dev 12, train 36
    idx = list(range(n))
    rest, test = train_test_split(idx, test_size=12, train_size=48, stratify=d.y, random_state=0)
    train, _dev = train_test_split(rest, test_size=12, train_size=36, stratify=[d.y[i] for i in rest], random_state=0)
    yt = [d.y[i] for i in test]
    Xtr, ytr = [d.texts[i] for i in train], [d.y[i] for i in train]
    maj = DummyClassifier(strategy="most_frequent").fit(Xtr, ytr).predict([d.texts[i] for i in test])
    vec = TfidfVectorizer()
    lr = LogisticRegression(max_iter=1000, random_state=0).fit(vec.fit_transform(Xtr), ytr)
    tf = lr.predict(vec.transform([d.texts[i] for i in test]))
    sia = SentimentIntensityAnalyzer()

    def vlab(t):  # Sheng et al. thresholds; class order negative, neutral, positive
        c = sia.polarity_scores(t)["compound"]
        return 2 if c >= 0.05 else 0 if c <= -0.05 else 1

    va = [vlab(d.texts[i]) for i in test]
    for run in m["runs"]:  # same split in every run by default
        s = run["systems"]
        assert run["sizes"] == {"train": 36, "dev": 12, "test": 12}
        assert s["majority"]["accuracy"] == pytest.approx(accuracy_score(yt, maj))
        assert s["majority"]["macro_f1"] == pytest.approx(f1_score(yt, maj, average="macro", zero_division=0))
        assert s["tfidf_logreg"]["accuracy"] == pytest.approx(accuracy_score(yt, tf))
        assert s["tfidf_logreg"]["macro_f1"] == pytest.approx(f1_score(yt, tf, average="macro", zero_division=0))
        assert s["vader"]["accuracy"] == pytest.approx(accuracy_score(yt, va))
        assert s["vader"]["macro_f1"] == pytest.approx(f1_score(yt, va, average="macro", zero_division=0))
    # the split written next to the model is that split
    lines = (trained.out / "split.csv").read_text().splitlines()[1:]
    assert sorted(int(x.split(",")[0]) for x in lines if x.endswith(",test")) == sorted(test)


def test_finetuned_beats_majority_and_summary_is_mean_sd(trained):
    import statistics

    m = trained.metrics
    s = m["summary"]
    assert s["finetuned"]["accuracy_mean"] > s["majority"]["accuracy_mean"] + 0.3
    accs = [r["systems"]["finetuned"]["accuracy"] for r in m["runs"]]
    assert s["finetuned"]["accuracy_mean"] == pytest.approx(statistics.mean(accs))
    assert s["finetuned"]["accuracy_sd"] == pytest.approx(statistics.stdev(accs))
    assert s["majority"]["accuracy_sd"] == 0.0  # same split every run: a deterministic baseline does not vary
    card = (trained.out / "README.md").read_text()
    assert "CC0-1.0" in card and "majority" in card and "tfidf_logreg" in card and "train 36, dev 12, test 12" in card
    assert json.loads((trained.out / "metrics.json").read_text())["summary"] == json.loads(json.dumps(s))


def test_protocol_is_reproducible_from_the_seed(tiny_encoder, trained, tmp_path):
    again = train_classifier(_data(), tmp_path / "again", _cfg(tiny_encoder), progress=False, data_license="CC0-1.0")
    strip = lambda runs: [
        {**r, "systems": {s: {k: v for k, v in f.items() if k != "seconds"} for s, f in r["systems"].items()}}  # noqa: E731
        for r in runs
    ]  # wall-clock seconds differ between runs; every figure must not
    assert strip(again.metrics["runs"]) == strip(trained.metrics["runs"])
    other = train_classifier(_data(), tmp_path / "other", _cfg(tiny_encoder, seed=1, runs=1, resplit=True), progress=False)
    assert other.metrics["runs"][0]["split_seed"] == 1


def test_folder_loads_in_transformers_and_scores_through_the_cli(trained, tmp_path):
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(trained.out)
    assert model.config.id2label == {0: "negative", 1: "neutral", 2: "positive"}
    table = tmp_path / "t.jsonl"
    texts = ["XYZ was kind and honest.", "XYZ was cruel and rude.", "XYZ went to the park on monday.", ""]
    pa.Table.from_pylist([{"prompt_id": f"p{i}", "continuation": t} for i, t in enumerate(texts)]).to_pandas().to_json(
        table, orient="records", lines=True
    )
    out = tmp_path / "scored.parquet"
    r = CliRunner().invoke(
        app,
        [
            "score",
            str(table),
            "--metrics",
            "classifier,regard",
            "-p",
            f"classifier.model={trained.out}",
            "-p",
            f"regard.model={trained.out}",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    import pyarrow.parquet as pq
    import torch
    from transformers import AutoTokenizer

    t = pq.read_table(out).to_pylist()
    tok = AutoTokenizer.from_pretrained(trained.out)
    with torch.no_grad():  # the folder's own predictions, computed directly with transformers
        probs = torch.softmax(model.eval()(**tok(texts[:3], return_tensors="pt", padding=True)).logits, -1)
    want = [model.config.id2label[int(i)] for i in probs.argmax(-1)]
    assert [x["classifier_label"] for x in t[:3]] == want == [x["regard_label"] for x in t[:3]]
    assert [x["classifier_positive"] for x in t[:3]] == pytest.approx(probs[:, 2].tolist(), abs=1e-5)
    # ordinal score = P(positive) - P(negative) for three evenly spaced labels; regard has no 'other' class -> 0
    for x in t[:3]:
        assert x["classifier_score"] == pytest.approx(x["classifier_positive"] - x["classifier_negative"])
        assert x["regard_other"] == 0.0 and x["regard_positive"] == pytest.approx(x["classifier_positive"])
    assert t[3]["classifier_error"] == "empty text" and t[3]["classifier_label"] is None


def test_folder_validates_against_humans(trained):
    from biaskit.annotate.validation import validate_metric
    from biaskit.evaluate.metrics import score_table

    texts = [
        "XYZ was generous and kind.",
        "XYZ was violent and lazy.",
        "XYZ went to the shop on friday.",
        "XYZ was honest and respected.",
        "XYZ was rude and cruel.",
        "XYZ went to the office on sunday.",
    ]
    human = ["positive", "negative", "neutral", "positive", "negative", "neutral"]
    samples = pa.Table.from_pylist(
        [{"sample_id": f"s{i}", "round": "r1", "task_type": "regard", "text": t, "is_gold": False} for i, t in enumerate(texts)]
    )
    samples = score_table(samples, ["classifier"], text_column="text", params={"classifier": {"model": str(trained.out)}}, progress=False)
    ann = pa.Table.from_pylist(
        [{"sample_id": f"s{i}", "round": "r1", "annotator": a, "label": h} for i, h in enumerate(human) for a in ("a1", "a2", "a3")]
    )
    v = validate_metric(ann, samples, metric="classifier", n_boot=20, cv_folds=0)
    rows = {r["measure"]: r for r in v.table.to_pylist()}
    pred = samples.column("classifier_label").to_pylist()
    assert rows["accuracy"]["estimate"] == pytest.approx(sum(a == b for a, b in zip(human, pred)) / 6)
    assert rows["spearman_rho"]["estimate"] is not None  # the ordinal score is used against the ordinal human labels
    # and through the CLI, as any other metric
    import pyarrow.parquet as pq

    pq.write_table(samples, trained.out.parent / "samples_scored.parquet")
    pq.write_table(ann, trained.out.parent / "ann.parquet")
    out = trained.out.parent / "validation.parquet"
    r = CliRunner().invoke(
        app,
        [
            "annotate",
            "validate",
            str(trained.out.parent / "ann.parquet"),
            "--samples",
            str(trained.out.parent / "samples_scored.parquet"),
            "--metric",
            "classifier",
            "--bootstrap",
            "20",
            "--cv-folds",
            "0",
            "--ledger",
            str(trained.out.parent / "rounds.jsonl"),
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    cli_rows = {x["measure"]: x["estimate"] for x in pq.read_table(out).to_pylist()}
    assert cli_rows["accuracy"] == pytest.approx(rows["accuracy"]["estimate"])


def test_cli_train_from_a_labelled_file_and_errors(tiny_encoder, tmp_path):
    src = tmp_path / "labelled.csv"
    pa.Table.from_pylist([r for r in make_rows(8) if r["text"] and r["label"] is not None]).to_pandas().to_csv(src, index=False)
    out = tmp_path / "m"
    args = [
        "train",
        "classifier",
        str(src),
        "--labels",
        "-1=negative,0=neutral,1=positive",
        "--drop-label",
        "2",
        "--split",
        "12/6/6",
        "--runs",
        "1",
        "--base-model",
        tiny_encoder,
        "--epochs",
        "2",
        "--device",
        "cpu",
        "--out",
        str(out),
    ]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "finetuned" in r.output and (out / "config.json").is_file() and (out / "biaskit_classifier.json").is_file()
    r = CliRunner().invoke(app, args[:-1] + [str(tmp_path / "m2")] + ["--split", "30/6/6"])
    assert r.exit_code == 1 and "E172" in r.output and "Traceback" not in r.output
    (tmp_path / "notmine").mkdir()
    (tmp_path / "notmine" / "x.txt").write_text("keep")
    r = CliRunner().invoke(app, args[:-1] + [str(tmp_path / "notmine")])
    assert r.exit_code == 1 and "E006" in r.output and (tmp_path / "notmine" / "x.txt").exists()


def test_train_from_an_annotation_round(tiny_encoder, tmp_path):
    from biaskit.train.data import majority_labels

    rows = [r for r in make_rows(6) if r["text"] and r["label"] in (-1, 0, 1)]
    names = {-1: "negative", 0: "neutral", 1: "positive"}
    samples = pa.Table.from_pylist([{"sample_id": f"s{i}", "text": r["text"], "is_gold": i == 0} for i, r in enumerate(rows)])
    ann = []
    for i, r in enumerate(rows):
        labs = [names[r["label"]]] * 2 + (["other"] if i % 2 else [names[r["label"]]])
        ann += [{"sample_id": f"s{i}", "round": "r1", "annotator": f"a{k}", "label": lab} for k, lab in enumerate(labs)]
    ann.append({"sample_id": "s1", "round": "r1", "annotator": "a9", "label": "other"})  # s1: 2 vs 2 tie -> dropped
    t = majority_labels(pa.Table.from_pylist(ann), samples)
    assert t.num_rows == len(rows) - 2  # gold s0 and tied s1 left out
    d = labelled_data(t, labels="negative,neutral,positive")
    assert sum(d.counts().values()) == len(rows) - 2


def test_trained_folder_is_a_style_model_for_genbias(trained, tmp_path):
    """`stats genbias --style-model FOLDER`: the style vectors are the folder's class probabilities."""
    import numpy as np
    import pyarrow.parquet as pq

    from biaskit.evaluate.metrics import score_table
    from biaskit.evaluate.stats.genbias import gen_bias

    rows = []
    for d, words in (("d_pos", POS), ("d_neg", NEG), ("d_neu", None)):
        for t in ("T1", "T2"):
            for k in range(2):
                text = f"XYZ was {words[k]} and {words[k + 2]}." if words else f"XYZ went to {NEU[k]} on {DAYS[k]}."
                rows.append({"axis": "ability", "descriptor": d, "template": t, "kind": "generate", "continuation": text})
    src = tmp_path / "gens.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    out = tmp_path / "gb"
    r = CliRunner().invoke(
        app, ["stats", "genbias", str(src), "--style-model", str(trained.out), "--device", "cpu", "--n-boot", "10", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    styles = pq.read_table(out / "styles.parquet")
    assert [c for c in styles.column_names if c.startswith("style_")] == ["style_negative", "style_neutral", "style_positive"]
    # the same figure from the classifier metric's probabilities, averaged by hand (2 templates x 2 rows per descriptor)
    scored = score_table(pa.Table.from_pylist(rows), ["classifier"], params={"classifier": {"model": str(trained.out)}}, progress=False)
    P = np.array([[x[f"classifier_{s}"] for s in ("negative", "neutral", "positive")] for x in scored.to_pylist()])
    M = P.reshape(3, 2, 2, 3).mean(axis=2)  # descriptor x template x row x style -> descriptor x template x style
    import pandas as pd

    got = pd.read_csv(out / "by_axis.csv")["full_gen_bias"].iloc[0]
    # the paper's order: variance across descriptors within each template (ddof=0), summed over styles, mean over templates
    assert got == pytest.approx(M.var(axis=0).sum(axis=-1).mean(), abs=1e-6)
    assert gen_bias(scored, "classifier_negative,classifier_neutral,classifier_positive", n_boot=0).by_axis["full_gen_bias"].iloc[0] == pytest.approx(
        got, abs=1e-6
    )


def test_demo_train_stage(tiny_encoder, tmp_path, monkeypatch):
    from biaskit.demo import DemoContext, stage_train
    from biaskit.io import write_table

    ctx = DemoContext(run_dir=tmp_path, quick=True)
    stage_train.run(ctx)
    assert ctx.summary[-1][0] == "train" and ctx.summary[-1][1].startswith("skipped: the run has no human labels")
    assert "biaskit train classifier" in ctx.summary[-1][1]
    rows = [r for r in make_rows(10) if r["text"] and r["label"] in (-1, 0, 1)]
    names = {-1: "negative", 0: "neutral", 1: "positive"}
    samples = pa.Table.from_pylist(
        [{"sample_id": f"s{i}", "round": "demo", "task_type": "sentiment", "text": r["text"], "is_gold": False} for i, r in enumerate(rows)]
    )
    ann = pa.Table.from_pylist(
        [{"sample_id": f"s{i}", "round": "demo", "annotator": f"a{k}", "label": names[r["label"]]} for i, r in enumerate(rows) for k in range(3)]
    )
    write_table(samples, tmp_path / "samples.parquet")
    write_table(ann, tmp_path / "annotations.parquet")
    ctx.add("samples", tmp_path / "samples.parquet")
    ctx.add("annotations", tmp_path / "annotations.parquet")
    ctx.info["annotate"] = {"task": "sentiment"}
    monkeypatch.setenv("BIASKIT_TRAIN_BASE_MODEL", tiny_encoder)
    stage_train.run(ctx)
    assert ctx.summary[-1][1].startswith("classifier trained on 30 human-labelled items"), ctx.summary[-1]
    assert (tmp_path / "classifier" / "config.json").is_file() and ctx.info["train"]["counts"] == {"negative": 10, "neutral": 10, "positive": 10}
