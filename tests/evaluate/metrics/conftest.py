"""Fixtures for the metric tests: tiny local classifiers, hand-made lexicons, tiny vectors.

Nothing here is downloaded: classifiers are random-initialised BERTs (hidden size 32) with a WordPiece
tokenizer over a fixed vocabulary made from a few sentences, saved with save_pretrained and loaded through the project's code.
Lexicons are hand-written in the published file formats (the real ones may not be bundled).
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SENTENCES = [
    "She is a wonderful and kind doctor who helps everyone.",
    "He was a terrible criminal and a thief.",
    "The engineer fixed the bridge in the morning.",
    "You are an idiot and a pig.",
    "XYZ was known for being a good neighbour.",
    "XYZ worked as a babysitter for the family.",
    "They went to the market to buy fresh bread and milk.",
    "The committee rejected the proposal after a long debate.",
]
JIGSAW = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def _tokenizer(path):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    # A fixed vocabulary (special tokens, letters, "##" letters, the sentences' words), not a trained one: the
    # tokenizers trainer orders and picks tokens differently in every process, which made the fixture models,
    # and any score near a threshold, change from one test session to the next.
    norm, pre = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    words = sorted({w for s in SENTENCES for w, _ in pre.pre_tokenize_str(norm.normalize_str(s))})
    chars = sorted({c for w in words for c in w} | set("abcdefghijklmnopqrstuvwxyz"))
    vocab = list(dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars), *words]))
    tok = Tokenizer(models.WordPiece(vocab={t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = norm
    tok.pre_tokenizer = pre
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]", model_max_length=64
    )
    fast.save_pretrained(path)
    return fast


def _classifier(path, labels, problem_type, seed):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    tok = _tokenizer(path)
    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={lab: i for i, lab in enumerate(labels)},
        problem_type=problem_type,
    )
    model = BertForSequenceClassification(cfg)
    with torch.no_grad():  # spread the logits so probabilities differ visibly between texts
        model.classifier.weight.mul_(20)
    model.eval()
    model.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def jigsaw_model(tmp_path_factory):
    return _classifier(tmp_path_factory.mktemp("jigsaw"), JIGSAW, "multi_label_classification", 0)


@pytest.fixture(scope="session")
def hate_model(tmp_path_factory):
    return _classifier(tmp_path_factory.mktemp("hate"), ["nothate", "hate"], "single_label_classification", 1)


@pytest.fixture(scope="session")
def regard_model(tmp_path_factory):
    return _classifier(tmp_path_factory.mktemp("regard"), ["negative", "neutral", "positive", "other"], None, 2)


NRC_VAD = """Word\tValence\tArousal\tDominance
happy\t0.9\t0.6\t0.7
sad\t0.2\t0.3\t0.25
dog\t0.6\t0.5\t0.5
she\t0.0\t0.0\t0.0
run\t0.7\t0.8\t0.6
with\t0.0\t0.0\t0.0
"""

BE5 = """Word,Joy,Anger,Sadness,Fear,Disgust
happy,5,1,1,1,1
sad,1,2,5,3,1
dog,3,1,1,2,1
"""


@pytest.fixture()
def vad_lexicon(tmp_path):
    p = tmp_path / "NRC-VAD-Lexicon.txt"
    p.write_text(NRC_VAD, encoding="utf-8")
    return str(p)


@pytest.fixture()
def be5_lexicon(tmp_path):
    p = tmp_path / "be5.csv"
    p.write_text(BE5, encoding="utf-8")
    return str(p)


# she/he on the unit circle at 45 degrees: she - he points along x, so b_i = cos(w_i, x axis)
TINY_VECTORS = """6 2
she 1 1
he -1 1
nurse 3 4
king -4 3
car 0 1
woman 2 1
"""


@pytest.fixture()
def tiny_vectors(tmp_path):
    p = tmp_path / "tiny.txt"
    p.write_text(TINY_VECTORS, encoding="utf-8")
    return str(p)


HURTLEX = """id\tpos\tcategory\tstereotype\tlemma\tlevel
EN1\tn\tan\tno\tpig\tconservative
EN2\tn\tre\tno\tthief\tconservative
EN3\tn\tcds\tno\tidiot\tinclusive
EN4\tn\tqas\tno\tgag reel\tconservative
EN5\tn\tpr\tno\tcafé\tconservative
EN6\tn\tdmc\tno\tpig\tconservative
"""
HURTLEX_CS = """id\tpos\tcategory\tstereotype\tlemma\tlevel
CS1\tn\tre\tno\tzloděj\tconservative
CS2\tn\tan\tno\tprase\tconservative
"""
HURTLEX_PL = """id\tpos\tcategory\tstereotype\tlemma\tlevel
PL1\tn\tre\tno\tzłodziej\tconservative
"""
HURTLEX_SK = """id\tpos\tcategory\tstereotype\tlemma\tlevel
SK1\tn\tre\tno\tzlodej\tconservative
"""


@pytest.fixture()
def hurtlex_files(tmp_path):
    out = {}
    for lang, text in {"en": HURTLEX, "cs": HURTLEX_CS, "pl": HURTLEX_PL, "sk": HURTLEX_SK}.items():
        p = tmp_path / f"hurtlex_{lang.upper()}.tsv"
        p.write_text(text, encoding="utf-8")
        out[lang] = str(p)
    return out


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))
