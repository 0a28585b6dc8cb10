"""Regenerate tiny_bpe.json and tiny_wordpiece.json (the runner tests' tokenizers) from the conftest CORPUS.

  python tests/evaluate/runners/data/make_tokenizers.py

The result differs from run to run (the trainers' order is not fixed), which is why the files are saved.
"""

import sys
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from conftest import CORPUS  # noqa: E402

bpe = Tokenizer(models.BPE())
bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
bpe.decoder = decoders.ByteLevel()
bpe.train_from_iterator(
    CORPUS, trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
)
bpe.save(str(HERE / "tiny_bpe.json"))

wp = Tokenizer(models.WordPiece(unk_token="[UNK]"))
wp.normalizer = normalizers.BertNormalizer(lowercase=True)
wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
wp.decoder = decoders.WordPiece()
wp.train_from_iterator(CORPUS, trainers.WordPieceTrainer(vocab_size=250, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
cls_id, sep_id = wp.token_to_id("[CLS]"), wp.token_to_id("[SEP]")
wp.post_processor = processors.TemplateProcessing(
    single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)]
)
wp.save(str(HERE / "tiny_wordpiece.json"))
