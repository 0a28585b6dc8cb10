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


# ---------------------------------------------------------------------------------------------- judge models

#: the byte-level BPE tokenizer the runner tests train once and keep (tests/evaluate/runners/data)
TINY_BPE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runners", "data", "tiny_bpe.json")
#: a chat template in the shape of the real ones (role markers, then the assistant's turn opened)
CHAT_TEMPLATE = "{% for m in messages %}<|endoftext|>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}assistant:"


def _chat_tokenizer():
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_file(TINY_BPE),
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )
    tok.chat_template = CHAT_TEMPLATE
    # whole-word tokens for the label words, as real vocabularies have them (the tiny BPE splits "neutral" and
    # "negative" into letters that share a first token); "not" stays "no" + "t", so "no" / "not sure" share one
    tok.add_tokens(["positive", "neutral", "negative", "yes", "no"])
    return tok


def _tiny_gpt2(tok, seed: int):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(
        vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=512, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id
    )
    return GPT2LMHeadModel(cfg).eval()


@pytest.fixture(scope="session")
def tiny_judge(judge_model_dir):
    """The tiny chat judge for the judge's own tests (marks them slow: they load and run it many times)."""
    return judge_model_dir


@pytest.fixture(scope="session")
def judge_model_dir(tmp_path_factory):
    """Folder with a random-initialised 2-layer GPT-2 (context 512) and a byte-level BPE tokenizer with a chat
    template (built in well under a second; the metric contract test uses it directly)."""
    import torch

    torch.set_num_threads(1)
    tok = _chat_tokenizer()
    model = _tiny_gpt2(tok, seed=0)
    d = tmp_path_factory.mktemp("tiny-judge")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)


#: the task the first-pick judge was trained on: two labels, listed in the prompt
PICK_TASK = "name: pick\nlabels: ['yes', 'no']\ninstruction: |-\n  Pick one of: {labels}.\n  Text: {text}\n"
PICK_TEXTS = [s.split(".")[0] for s in SENTENCES] + ["The woman worked as a nurse", "My neighbour likes books", "It rained all day"]


@pytest.fixture(scope="session")
def first_pick_judge(tmp_path_factory):
    """(model folder, task file) of a tiny chat judge trained to answer with whichever label the prompt lists
    first: a deliberately order-sensitive judge (trained here on both orders of ``yes, no``)."""
    import torch

    torch.set_num_threads(1)
    tok = _chat_tokenizer()
    model = _tiny_gpt2(tok, seed=1)
    d = tmp_path_factory.mktemp("first-pick-judge")
    task = d / "pick.yaml"
    task.write_text(PICK_TASK, encoding="utf-8")
    seqs = []
    for t in PICK_TEXTS:
        for order in (("yes", "no"), ("no", "yes")):
            user = f"Pick one of: {', '.join(order)}.\nText: {t}"
            prompt = tok.apply_chat_template([{"role": "user", "content": user}], tokenize=False, add_generation_prompt=True)
            ids = tok(prompt, add_special_tokens=False)["input_ids"]
            seqs.append((ids, tok(order[0], add_special_tokens=False)["input_ids"][0]))
    L = max(len(x) for x, _ in seqs)
    inp = torch.full((len(seqs), L), tok.pad_token_id)
    att = torch.zeros((len(seqs), L), dtype=torch.long)
    for r, (ids, _) in enumerate(seqs):
        inp[r, L - len(ids) :] = torch.tensor(ids)
        att[r, L - len(ids) :] = 1
    pos = (att.cumsum(-1) - 1).clamp(min=0)
    target = torch.tensor([y for _, y in seqs])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(80):
        logits = model(input_ids=inp, attention_mask=att, position_ids=pos).logits[:, -1]
        loss = torch.nn.functional.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return str(d), str(task)
