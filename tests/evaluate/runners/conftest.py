"""Tiny causal (GPT-2) and masked (BERT) models built in the test session from saved tokenizers, saved to tmp folders.

The runners load them through their real loading code (``biaskit.evaluate.runners.hf.load``) from the
saved folders, exactly as they load a downloaded model.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = [
    "An astronomer is a scientist in the field of astronomy.",
    "A nurse is a health care professional who cares for patients.",
    "The woman worked as a teacher in a small town.",
    "The man worked as a carpenter and built houses.",
    "She is a deaf woman who loves music and dancing.",
    "He is an old man who likes to read books every day.",
    "Programmers write software for computers and phones.",
    "The doctor said that the patient was doing well.",
    "They are known for their kindness and generosity!",
    "Is this the right way to the station?",
    "My neighbour is a retired engineer from Prague.",
    "I'm a blind person and I use a screen reader.",
]
CORPUS = CORPUS * 20
#: tokenizers trained once on CORPUS with the `tokenizers` trainers (byte-level BPE, 300 tokens; WordPiece, 250)
#: and saved: training again in every session gives a different vocabulary each time (the trainer's order is
#: not fixed), and so different models; regenerate with tests/evaluate/runners/data/make_tokenizers.py
DATA = Path(__file__).parent / "data"


def _threads():
    import torch

    torch.set_num_threads(1)


def _train(model, tok, steps: int, masked: bool = False) -> None:
    """A few optimiser steps on the corpus so outputs are word-like and greedy choices are not near-ties."""
    import torch

    torch.manual_seed(0)
    enc = tok(sorted(set(CORPUS)), padding=True, return_tensors="pt")
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        labels = enc["input_ids"].clone()
        labels[enc["attention_mask"] == 0] = -100
        inp = enc["input_ids"].clone()
        if masked:
            pick = (torch.rand(inp.shape) < 0.2) & (enc["attention_mask"] == 1)
            labels[~pick] = -100
            inp[pick] = tok.mask_token_id
        loss = model(input_ids=inp, attention_mask=enc["attention_mask"], labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


@pytest.fixture(scope="session")
def tiny_causal(tmp_path_factory):
    """Folder with a 2-layer GPT-2 (n_embd 32, context 64) and a byte-level BPE tokenizer."""
    _threads()
    import torch
    from tokenizers import Tokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tk = Tokenizer.from_file(str(DATA / "tiny_bpe.json"))
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    tok.chat_template = "{% for m in messages %}<|endoftext|>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}assistant:"
    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=64, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id
    )
    model = GPT2LMHeadModel(cfg)
    _train(model, tok, steps=60)
    d = tmp_path_factory.mktemp("tiny-gpt2")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)


@pytest.fixture(scope="session")
def tiny_masked(tmp_path_factory):
    """Folder with a 2-layer BERT masked LM (hidden 32) and a WordPiece tokenizer (has ## pieces)."""
    _threads()
    import torch
    from tokenizers import Tokenizer
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    tk = Tokenizer.from_file(str(DATA / "tiny_wordpiece.json"))
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]"
    )
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        pad_token_id=tok.pad_token_id,
    )
    model = BertForMaskedLM(cfg)
    _train(model, tok, steps=40, masked=True)
    d = tmp_path_factory.mktemp("tiny-bert")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)


def prompts_table(texts, prefix="p", **extra) -> pa.Table:
    cols = {
        "prompt_id": [f"{prefix}{i}" for i in range(len(texts))],
        "text": list(texts),
        "source": ["test"] * len(texts),
        "language": ["en"] * len(texts),
    }
    cols.update(extra)
    return pa.table(cols)


GEN_PROMPTS = [
    "An astronomer is a scientist in ",
    "The woman worked as ",
    "He is an old man who likes to read books every day and ",
    "Programmers ",
    "My neighbour is a retired engineer from Prague and she ",
    "They are known for ",
    "The doctor said that ",
]


@pytest.fixture()
def gen_prompts() -> pa.Table:
    return prompts_table(GEN_PROMPTS, prefix="g")


@pytest.fixture()
def gen_texts() -> list[str]:
    return list(GEN_PROMPTS)


@pytest.fixture()
def make_prompts():
    return prompts_table


@pytest.fixture()
def logs(caplog, monkeypatch):
    """caplog that also sees biaskit's logger after the CLI configured it (propagate=False)."""
    import logging

    monkeypatch.setattr(logging.getLogger("biaskit"), "propagate", True)
    caplog.set_level(logging.INFO, logger="biaskit")
    return caplog


#: WordPiece vocabulary in which the right words need 2-3 pieces: "programmers" = prog ##ram ##mers,
#: "teachers" = teach ##ers, "nurses" = nur ##ses, "builders" = build ##ers (multi-token fill-in tests)
MORPH_VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    ".",
    "write",
    "software",
    "teach",
    "children",
    "help",
    "patients",
    "build",
    "houses",
    "the",
    "and",
    "code",
    "prog",
    "nur",
    "##ram",
    "##mers",
    "##ers",
    "##ses",
    "they",
    "all",
]
MORPH_CORPUS = [
    "programmers write software .",
    "programmers write code .",
    "teachers teach children .",
    "nurses help patients .",
    "builders build houses .",
    "the teachers help children .",
    "the programmers write code .",
    "the nurses help the children .",
]


def _whole_word_train(model, tok, steps: int) -> None:
    """Masked-LM steps that mask one whole word (all its pieces) or one piece of it per sentence."""
    import random

    import torch

    torch.manual_seed(0)
    rng = random.Random(0)
    enc = [tok(t)["input_ids"] for t in MORPH_CORPUS]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        inps, labs = [], []
        for ids in enc:
            pieces = tok.convert_ids_to_tokens(ids)
            words: list[list[int]] = []
            for j, p in enumerate(pieces):
                if p in ("[CLS]", "[SEP]"):
                    continue
                if p.startswith("##") and words:
                    words[-1].append(j)
                else:
                    words.append([j])
            pick = rng.choice(words)
            if rng.random() < 0.5:  # or one piece alone, as pseudo-log-likelihood scoring masks them
                pick = [rng.choice(pick)]
            inp, lab = list(ids), [-100] * len(ids)
            for j in pick:
                lab[j], inp[j] = ids[j], tok.mask_token_id
            inps.append(inp)
            labs.append(lab)
        L = max(len(q) for q in inps)
        att = torch.tensor([[1] * len(q) + [0] * (L - len(q)) for q in inps])
        inp_t = torch.tensor([q + [tok.pad_token_id] * (L - len(q)) for q in inps])
        lab_t = torch.tensor([q + [-100] * (L - len(q)) for q in labs])
        loss = model(input_ids=inp_t, attention_mask=att, labels=lab_t).loss
        if os.environ.get("H14B_DEBUG"):
            print(float(loss))
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


@pytest.fixture(scope="session")
def tiny_morph_masked(tmp_path_factory):
    """Folder with a 2-layer BERT masked LM over MORPH_VOCAB (words of 2-3 WordPiece pieces)."""
    _threads()
    import torch
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(MORPH_VOCAB)}
    tk = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tk.normalizer = normalizers.BertNormalizer(lowercase=True)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tk.decoder = decoders.WordPiece(prefix="##")
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]"
    )
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        pad_token_id=tok.pad_token_id,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    model = BertForMaskedLM(cfg)
    _whole_word_train(model, tok, steps=300)
    d = tmp_path_factory.mktemp("tiny-morph-bert")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)
