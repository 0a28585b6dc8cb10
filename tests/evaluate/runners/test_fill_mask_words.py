"""Multi-token (whole-word) fill-ins: beam search over 1..N pieces, ranked by pseudo-log-likelihood.

The tiny BERT (conftest.tiny_morph_masked) has a vocabulary in which "programmers" is prog ##ram ##mers and
"nurses" nur ##ses, so the right words cannot come out of a single-token fill-in. Every PLL the runner reports
is recomputed here with plain torch, one masked copy of the sentence at a time.
"""

from __future__ import annotations

import itertools
import math

import pytest
from typer.testing import CliRunner

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners import fill_mask

TEMPLATES = ["<mask> write software .", "<mask> help patients .", "the <mask> build houses ."]


def _load(path):
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    torch.set_num_threads(1)
    return AutoModelForMaskedLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


def _pll(model, tok, template: str, pieces: list[int], variant: str = "original") -> float:
    """Sum over the fill-in's pieces of log p(piece | sentence with that piece (word_l2r: and the later ones) masked)."""
    import torch

    before = tok(template.split("<mask>")[0], add_special_tokens=False)["input_ids"]
    after = tok(template.split("<mask>")[1], add_special_tokens=False)["input_ids"]
    ids = [tok.cls_token_id, *before, *pieces, *after, tok.sep_token_id]
    start = 1 + len(before)
    total = 0.0
    for q in range(len(pieces)):
        x = list(ids)
        for r in range(q, len(pieces)) if variant == "word_l2r" else [q]:
            x[start + r] = tok.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([x])).logits[0, start + q]
        total += float(torch.log_softmax(logits, dim=-1)[pieces[q]])
    return total


def _by_prompt(t):
    out: dict[str, list[dict]] = {}
    for r in t.to_pylist():
        out.setdefault(r["prompt_id"], []).append(r)
    return out


def test_multi_token_fill_ins_have_exact_pll_and_find_the_multi_piece_words(tiny_morph_masked, make_prompts):
    model, tok = _load(tiny_morph_masked)
    t = fill_mask(make_prompts(TEMPLATES), model=tiny_morph_masked, top_k=6, max_subwords=3, batch_size=4, progress=False)
    by = _by_prompt(t)
    assert [len(by[f"p{i}"]) for i in range(3)] == [6, 6, 6]
    for i, tmpl in enumerate(TEMPLATES):
        rows = by[f"p{i}"]
        assert [r["rank"] for r in rows] == list(range(1, 7))
        assert [r["fill_pll"] for r in rows] == sorted((r["fill_pll"] for r in rows), reverse=True)
        for r in rows:
            pieces = tok(r["token"], add_special_tokens=False)["input_ids"]
            names = tok.convert_ids_to_tokens(pieces)
            # a whole word: one word-initial piece, then continuation pieces only
            assert r["n_subwords"] == len(pieces) and not names[0].startswith("##")
            assert all(p.startswith("##") for p in names[1:])
            # and it does not end mid-word: in the filled sentence the token after it is not a continuation piece
            filled = tok.convert_ids_to_tokens(tok(r["full_text"])["input_ids"])
            at = 1 + len(tok(tmpl.split("<mask>")[0], add_special_tokens=False)["input_ids"])
            assert filled[at : at + len(names)] == names and not filled[at + len(names)].startswith("##")
            assert r["fill_pll"] == pytest.approx(_pll(model, tok, tmpl, pieces), abs=1e-5)
            assert r["token_score"] == pytest.approx(math.exp(r["fill_pll"]), rel=1e-12)
            assert r["full_text"] == tmpl.replace("<mask>", r["token"]) and r["error"] is None
    words = {f"p{i}": {r["token"]: r for r in by[f"p{i}"]} for i in range(3)}
    assert words["p0"]["programmers"]["n_subwords"] == 3 and words["p0"]["programmers"]["rank"] <= 3
    assert words["p1"]["nurses"]["n_subwords"] == 2 and words["p1"]["nurses"]["rank"] <= 2
    assert by["p2"][0]["token"] == "teachers" and by["p2"][0]["n_subwords"] == 2
    # single-token fill-ins cannot produce the three-piece word at all
    single = fill_mask(make_prompts(TEMPLATES[:1]), model=tiny_morph_masked, top_k=len(tok), progress=False)
    assert "programmers" not in single.column("token").to_pylist()


def test_a_beam_wide_enough_equals_brute_force_enumeration(tiny_morph_masked, make_prompts):
    model, tok = _load(tiny_morph_masked)
    tmpl = "<mask> write software ."
    t = fill_mask(make_prompts([tmpl]), model=tiny_morph_masked, top_k=8, max_subwords=3, beam_size=1000, progress=False)
    vocab = tok.convert_ids_to_tokens(list(range(len(tok))))
    special = set(tok.all_special_ids)
    initial = [i for i, p in enumerate(vocab) if i not in special and not p.startswith("##") and p.isalpha()]
    cont = [i for i, p in enumerate(vocab) if p.startswith("##")]
    scored = []
    for n in (1, 2, 3):
        for first, *rest in itertools.product(initial, *([cont] * (n - 1))):
            pieces = [first, *rest]
            word = tok.decode(pieces)
            if tok(word, add_special_tokens=False)["input_ids"] != pieces:
                continue  # the tokenizer writes this word differently
            scored.append((_pll(model, tok, tmpl, pieces), word, n))
    scored.sort(key=lambda s: -s[0])
    assert len(scored) > 100  # 15 single pieces, 60 two-piece and 240 three-piece words in all
    assert t.column("token").to_pylist() == [w for _, w, _ in scored[:8]]
    assert t.column("n_subwords").to_pylist() == [n for _, _, n in scored[:8]]
    assert t.column("fill_pll").to_pylist() == pytest.approx([p for p, _, _ in scored[:8]], abs=1e-5)


def test_word_l2r_masks_the_piece_and_the_pieces_after_it(tiny_morph_masked, make_prompts):
    model, tok = _load(tiny_morph_masked)
    tmpl = TEMPLATES[0]
    t = fill_mask(make_prompts([tmpl]), model=tiny_morph_masked, top_k=6, max_subwords=3, pll="word_l2r", progress=False)
    multi = [r for r in t.to_pylist() if r["n_subwords"] > 1]
    assert multi
    for r in t.to_pylist():
        pieces = tok(r["token"], add_special_tokens=False)["input_ids"]
        assert r["fill_pll"] == pytest.approx(_pll(model, tok, tmpl, pieces, "word_l2r"), abs=1e-5)
    # for a multi-piece word the two variants differ (more context is hidden in word_l2r)
    r = multi[0]
    pieces = tok(r["token"], add_special_tokens=False)["input_ids"]
    assert abs(_pll(model, tok, tmpl, pieces) - r["fill_pll"]) > 1e-3


def test_single_token_rows_carry_one_subword_and_the_log_probability(tiny_morph_masked, make_prompts):
    tmpl = TEMPLATES[1]
    single = fill_mask(make_prompts([tmpl]), model=tiny_morph_masked, top_k=4, whole_word=True, progress=False).to_pylist()
    assert [r["n_subwords"] for r in single] == [1, 1, 1, 1]
    for r in single:
        assert r["fill_pll"] == pytest.approx(math.log(r["token_score"]), abs=1e-6)
    multi = fill_mask(make_prompts([tmpl]), model=tiny_morph_masked, top_k=10, max_subwords=2, progress=False).to_pylist()
    one = {r["token"]: r["fill_pll"] for r in multi if r["n_subwords"] == 1}
    shared = [r for r in single if r["token"] in one]
    assert shared  # a one-piece word's PLL is its fill-mask log-probability
    for r in shared:
        assert one[r["token"]] == pytest.approx(r["fill_pll"], abs=1e-6)


def test_a_slot_glued_to_the_next_text_gets_no_mid_word_fill_in(tiny_morph_masked, make_prompts):
    # "<mask>ers": any fill-in would run into "ers", so re-tokenising never gives back the same pieces
    t = fill_mask(
        make_prompts(["the <mask>ers build houses .", "the <mask> build houses ."]), model=tiny_morph_masked, top_k=3, max_subwords=3, progress=False
    )
    by = _by_prompt(t)
    assert len(by["p0"]) == 1 and by["p0"][0]["token"] is None
    assert by["p0"][0]["error"].startswith("no whole-word fill-in found")
    assert len(by["p1"]) == 3 and all(r["error"] is None for r in by["p1"])


@pytest.mark.parametrize(
    "kw", [{"max_subwords": 0}, {"max_subwords": 2, "targets": ["x"]}, {"max_subwords": 2, "pll": "mean"}, {"max_subwords": 2, "beam_size": 0}]
)
def test_bad_multi_token_settings_are_refused(tiny_morph_masked, make_prompts, kw):
    with pytest.raises(BiaskitError) as e:
        fill_mask(make_prompts(["a <mask> ."]), model=tiny_morph_masked, **kw)
    assert e.value.code == "E062"


def test_cli_max_subwords(tiny_morph_masked, make_prompts, tmp_path):
    from biaskit.cli import app
    from biaskit.io import read_table, write_table

    src = tmp_path / "templates.parquet"
    write_table(make_prompts(TEMPLATES[:2]), src)
    out = tmp_path / "fills.parquet"
    r = CliRunner().invoke(
        app, ["-q", "fill-mask", str(src), "-m", tiny_morph_masked, "-o", str(out), "-k", "4", "--max-subwords", "3", "--beam-size", "5"]
    )
    assert r.exit_code == 0, r.output
    t = read_table(out)
    assert t.num_rows == 8 and max(t.column("n_subwords").to_pylist()) >= 2
    import json

    cfg = json.loads(t.column("generation_config")[0].as_py())
    assert cfg["max_subwords"] == 3 and cfg["beam_size"] == 5 and cfg["pll"] == "original"


@pytest.fixture(scope="module")
def tiny_bpe_masked(tmp_path_factory):
    """An untrained 2-layer RoBERTa masked LM on the saved byte-level BPE tokenizer (space marker Ġ) plus <mask>."""
    import torch
    from tests.evaluate.runners.conftest import DATA
    from tokenizers import AddedToken, Tokenizer
    from transformers import PreTrainedTokenizerFast, RobertaConfig, RobertaForMaskedLM

    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_file(str(DATA / "tiny_bpe.json")),
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        pad_token="<|endoftext|>",
    )
    tok.add_special_tokens({"mask_token": AddedToken("<mask>", lstrip=True)})  # as RoBERTa's: " <mask>" is one token
    torch.manual_seed(0)
    cfg = RobertaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=80,
        pad_token_id=tok.pad_token_id,
    )
    d = tmp_path_factory.mktemp("tiny-bpe-roberta")
    RobertaForMaskedLM(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return str(d)


def test_bpe_slots_at_the_start_and_inside_the_sentence(tiny_bpe_masked, make_prompts):
    import torch

    model, tok = _load(tiny_bpe_masked)
    templates = ["<mask> write software for computers.", "The woman worked as a <mask>."]
    t = fill_mask(make_prompts(templates), model=tiny_bpe_masked, top_k=5, max_subwords=2, beam_size=6, progress=False)
    by = _by_prompt(t)
    for i, tmpl in enumerate(templates):
        rows = by[f"p{i}"]
        assert len(rows) == 5 and all(r["error"] is None for r in rows)
        for r in rows:
            filled = tok(r["full_text"], add_special_tokens=False)["input_ids"]
            # the space before the slot belongs to the word's first piece (Ġword), not to the text before it
            before = tok(tmpl.split("<mask>")[0].rstrip(" "), add_special_tokens=False)["input_ids"] if tmpl.index("<mask>") else []
            pieces = filled[len(before) : len(before) + r["n_subwords"]]
            names = tok.convert_ids_to_tokens(pieces)
            # the word's first piece carries the space marker only inside the sentence; later pieces never do
            assert names[0].startswith("\u0120") == (i == 1) and not any(p.startswith("\u0120") for p in names[1:])
            assert tok.decode(pieces).strip() == r["token"]
            ids = filled
            start = len(before)
            total = 0.0
            for q in range(len(pieces)):
                x = list(ids)
                x[start + q] = tok.mask_token_id
                with torch.no_grad():
                    lg = model(input_ids=torch.tensor([x])).logits[0, start + q]
                total += float(torch.log_softmax(lg, dim=-1)[pieces[q]])
            assert r["fill_pll"] == pytest.approx(total, abs=1e-5)


def test_a_template_longer_than_the_context_is_cut_with_room_for_the_extra_masks(tiny_morph_masked, make_prompts):
    # the tiny BERT has 32 positions; this template is 33 tokens with [CLS]/[SEP], so it is cut from the left
    # to 32 - (3 - 1) = 30 tokens, and the slot still takes 3 mask tokens
    model, tok = _load(tiny_morph_masked)
    long = "the nurses help the children . " * 4 + "the <mask> build houses ."
    assert len(tok(long.replace("<mask>", tok.mask_token))["input_ids"]) > 32
    t = fill_mask(make_prompts([long]), model=tiny_morph_masked, top_k=3, max_subwords=3, progress=False).to_pylist()
    assert len(t) == 3 and all(r["error"] is None and r["truncated"] for r in t)
    import torch

    for r in t:  # the PLL is computed in the cut sequence: [CLS] + the last 29 template tokens around the word
        pieces = tok(r["token"], add_special_tokens=False)["input_ids"]
        before = tok(long.split("<mask>")[0], add_special_tokens=False)["input_ids"]
        after = tok(long.split("<mask>")[1], add_special_tokens=False)["input_ids"] + [tok.sep_token_id]
        keep = 30 - 1 - 1 - len(after)  # [CLS] and the slot's one token in the 30-token template
        ids = [tok.cls_token_id, *before[len(before) - keep :], *pieces, *after]
        start = 1 + keep
        total = 0.0
        for q in range(len(pieces)):
            x = list(ids)
            x[start + q] = tok.mask_token_id
            with torch.no_grad():
                total += float(torch.log_softmax(model(input_ids=torch.tensor([x])).logits[0, start + q], dim=-1)[pieces[q]])
        assert r["fill_pll"] == pytest.approx(total, abs=1e-5)
