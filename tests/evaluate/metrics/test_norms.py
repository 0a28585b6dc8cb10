import math

import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.metrics.norms import NormsMetric, extend_lexicon, load_lexicon, text_score

TEXT = "She ran with a happy dog and a sad cat."


@pytest.mark.parametrize("pos", ["tagger", "ruler", "parser"])
def test_hand_computed_vad_scores(vad_lexicon, pos):
    # NRC-VAD [0,1] -> [-1,1] (2x - 1): happy (0.8, 0.2, 0.4), sad (-0.6, -0.4, -0.5), dog (0.2, 0.0, 0.0),
    # run (0.4, 0.6, 0.2). "She" (PRON) and "with" (ADP) are in the lexicon with -1 everywhere but are excluded;
    # "and" (CCONJ) excluded; "ran" is found through its lemma "run".
    # words considered: ran, a, happy, dog, a, sad, cat = 7; found: ran, happy, dog, sad = 4 -> coverage 4/7
    # valence:   (0.16 + 0.64 + 0.04 - 0.36) / (0.4 + 0.8 + 0.2 + 0.6) = 0.48 / 2.0 = 0.24
    # arousal:   (0.36 + 0.04 + 0.00 - 0.16) / (0.6 + 0.2 + 0.0 + 0.4) = 0.24 / 1.2 = 0.2
    # dominance: (0.04 + 0.16 + 0.00 - 0.25) / (0.2 + 0.4 + 0.0 + 0.5) = -0.05 / 1.1
    out = score_table(pa.table({"continuation": [TEXT]}), ["norms"], params={"norms": {"lexicon": vad_lexicon, "threshold": 0.2, "pos": pos}})
    row = out.to_pylist()[0]
    assert row["norms_valence"] == pytest.approx(0.24)
    assert row["norms_arousal"] == pytest.approx(0.2)
    assert row["norms_dominance"] == pytest.approx(-0.05 / 1.1)
    assert row["norms_coverage"] == pytest.approx(4 / 7)
    assert (row["norms_valence_class"], row["norms_arousal_class"], row["norms_dominance_class"]) == ("positive", "positive", "neutral")
    assert row["norms_error"] is None


def test_be5_emotions_rescaled_and_combined_with_vad(vad_lexicon, be5_lexicon):
    # BE5 1-5 -> [0,1] ((x-1)/4): joy happy 1.0, dog 0.5, sad 0.0 -> "happy dog sad": (1 + 0.25 + 0) / (1 + 0.5 + 0) = 0.8333
    # sadness: happy 0, dog 0, sad 1 -> 1 / 1 = 1.0 ; fear: sad 0.5, dog 0.25 -> (0.25 + 0.0625) / 0.75 = 0.41667
    out = score_table(pa.table({"continuation": ["happy dog sad"]}), ["norms"], params={"norms": {"lexicon": f"{vad_lexicon},{be5_lexicon}"}})
    row = out.to_pylist()[0]
    assert row["norms_joy"] == pytest.approx(1.25 / 1.5)
    assert row["norms_sadness"] == pytest.approx(1.0)
    assert row["norms_fear"] == pytest.approx(0.3125 / 0.75)
    assert row["norms_anger"] == pytest.approx((0.0625 + 0 + 0.0625) / 0.5)  # happy 0, dog 0, sad 0.25
    assert row["norms_joy_class"] == "positive" and row["norms_fear_class"] == "neutral"
    assert row["norms_valence"] == pytest.approx((0.64 + 0.04 - 0.36) / 1.6)


def test_text_without_lexicon_words_is_null_with_error_and_zero_coverage(vad_lexicon):
    out = score_table(
        pa.table({"continuation": ["The bridge collapsed.", "and with her", None]}), ["norms"], params={"norms": {"lexicon": vad_lexicon}}
    )
    rows = out.to_pylist()
    assert rows[0]["norms_valence"] is None and rows[0]["norms_coverage"] == 0.0
    assert rows[0]["norms_error"] == "no word of the text is in the lexicon"
    assert rows[1]["norms_valence"] is None and rows[1]["norms_coverage"] is None and "no words" in rows[1]["norms_error"]
    assert rows[2]["norms_error"] == "no text (null)"


def test_loaders_rescale_each_format(tmp_path):
    w = tmp_path / "warriner.csv"
    w.write_text(",Word,V.Mean.Sum,V.SD.Sum,A.Mean.Sum,A.SD.Sum,D.Mean.Sum\n1,aardvark,6.26,2.21,2.41,1.4,4.27\n", encoding="utf-8")
    lex = load_lexicon(w)
    assert lex.format == "warriner"
    # 1-9 -> [-1,1]: (x - 5) / 4
    assert lex.values["aardvark"] == pytest.approx({"valence": 0.315, "arousal": -0.6475, "dominance": -0.1825})
    e = tmp_path / "eil.txt"
    e.write_text("word\temotion\tscore\nouthouse\tdisgust\t0.8\nouthouse\ttrust\t0.1\nrage\tanger\t0.97\n", encoding="utf-8")
    lex = load_lexicon(e)
    assert lex.format == "nrc-eil" and lex.values == {"outhouse": {"disgust": 0.8}, "rage": {"anger": 0.97}}
    g = tmp_path / "g.csv"
    g.write_text("word,valence\nnice,7\n", encoding="utf-8")
    assert load_lexicon(g, scale="1,7").values["nice"]["valence"] == pytest.approx(1.0)
    with pytest.raises(BiaskitError) as err:
        load_lexicon(g)
    assert err.value.code == "E071"


def test_loader_rejects_bad_files(tmp_path):
    d = tmp_path / "dup.txt"
    d.write_text("Word\tValence\tArousal\tDominance\nhappy\t0.9\t0.5\t0.5\nhappy\t0.1\t0.5\t0.5\n", encoding="utf-8")
    with pytest.raises(BiaskitError) as err:
        load_lexicon(d)
    assert err.value.code == "E071" and "twice" in str(err.value)
    o = tmp_path / "range.txt"
    o.write_text("Word\tValence\tArousal\tDominance\nhappy\t5\t0.5\t0.5\n", encoding="utf-8")
    with pytest.raises(BiaskitError) as err:
        load_lexicon(o)
    assert "outside the scale" in str(err.value)
    with pytest.raises(BiaskitError) as err:
        NormsMetric()
    assert err.value.code == "E071" and "BIASKIT_NORMS_LEXICON" in str(err.value)


@pytest.mark.parametrize("given", [",", " , ", ", ,"])
def test_a_lexicon_list_that_names_no_file_is_the_missing_lexicon_error(given):
    # commas alone name no lexicon: the same error as none given, not an AttributeError at setup
    with pytest.raises(BiaskitError) as err:
        NormsMetric(lexicon=given).setup()
    assert err.value.code == "E071" and "needs a lexicon file" in str(err.value)


def test_text_score_formula():
    assert text_score([0.5, -0.5]) == 0.0
    assert text_score([0.0, 0.0]) == 0.0
    assert text_score([1.0, 0.5]) == pytest.approx(1.25 / 1.5)


def test_lexicon_extension_predicts_only_outside_words_and_marks_them(tmp_path):
    # 2-d vectors where valence = x coordinate: the regressor should learn it well
    import numpy as np

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60)]
    vecs = rng.uniform(-1, 1, size=(60, 2))
    lex = tmp_path / "lex.txt"
    lex.write_text(
        "Word\tValence\tArousal\tDominance\n" + "".join(f"{w}\t{(x + 1) / 2}\t0.5\t{(y + 1) / 2}\n" for w, (x, y) in zip(words[:50], vecs[:50])),
        encoding="utf-8",
    )
    emb = tmp_path / "emb.txt"
    emb.write_text(f"{len(words)} 2\n" + "".join(f"{w} {x} {y}\n" for w, (x, y) in zip(words, vecs)), encoding="utf-8")
    from biaskit.evaluate.metrics.gender import load_vectors

    ext = extend_lexicon(load_lexicon(lex), load_vectors(emb), folds=5, seed=0, hidden=(32,), max_iter=2000)
    assert ext.cv_pearson["valence"] > 0.9 and ext.n_train == 50
    assert math.isnan(ext.cv_pearson["arousal"]) or abs(ext.cv_pearson["arousal"]) <= 1
    m = NormsMetric(lexicon=str(lex), extend_embeddings=str(emb), extend_folds=5)
    m.setup()
    # in-lexicon word w0 keeps its lexicon value; w55 is outside -> predicted and counted
    out = m.score({"continuation": ["w0", "w55", "w0 w55"]})
    assert out["norms_valence"][0] == pytest.approx(vecs[0][0])
    assert out["norms_n_predicted"] == [0, 1, 1]
    assert abs(out["norms_valence"][1] - vecs[55][0]) < 0.5
    assert m.info["extension"]["n_train"] == 50


def test_parser_free_pronoun_rule_matches_the_parser(tmp_path):
    # "We like this a lot.": with the parser "this" is PRON (excluded) -> considered: like, a, lot = 3.
    # Without the parser spaCy tags it DET, but it is not followed by a noun-phrase word ("a"), so the
    # parser-free rule excludes it too -> 3. "We like this dog a lot.": "this" is a determiner either way
    # -> considered: like, this, dog, a, lot = 5. Only "like" is in the lexicon.
    lex = tmp_path / "l.txt"
    lex.write_text("Word\tValence\tArousal\tDominance\nlike\t0.75\t0.5\t0.5\n", encoding="utf-8")
    t = pa.table({"continuation": ["We like this a lot.", "We like this dog a lot."]})
    fast = score_table(t, ["norms"], params={"norms": {"lexicon": str(lex)}}).to_pylist()
    exact = score_table(t, ["norms"], params={"norms": {"lexicon": str(lex), "pos": "parser"}}).to_pylist()
    assert [r["norms_coverage"] for r in exact] == pytest.approx([1 / 3, 1 / 5])  # like a lot / like this dog a lot
    assert [r["norms_coverage"] for r in fast] == pytest.approx([1 / 3, 1 / 5])
    assert fast[0]["norms_valence"] == exact[0]["norms_valence"] == pytest.approx(0.5)


def test_lemma_hit_is_not_counted_as_predicted(tmp_path):
    # "ran" is not in the lexicon but its lemma "run" is: a lexicon value, not an extension prediction,
    # so norms_n_predicted is 0 for "He ran." (a lemma hit is a lexicon hit, not a prediction)
    import numpy as np

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60)]
    vecs = rng.uniform(-1, 1, size=(60, 2))
    lex = tmp_path / "lex.txt"
    lex.write_text(
        "Word\tValence\tArousal\tDominance\n"
        + "".join(f"{w}\t{(x + 1) / 2}\t0.5\t{(y + 1) / 2}\n" for w, (x, y) in zip(words[:50], vecs[:50]))
        + "run\t0.7\t0.5\t0.5\n",
        encoding="utf-8",
    )
    emb = tmp_path / "emb.txt"
    emb.write_text(f"{len(words)} 2\n" + "".join(f"{w} {x} {y}\n" for w, (x, y) in zip(words, vecs)), encoding="utf-8")
    m = NormsMetric(lexicon=str(lex), extend_embeddings=str(emb), extend_folds=5)
    m.setup()
    out = m.score({"continuation": ["He ran.", "w55"]})
    assert out["norms_valence"][0] == pytest.approx(0.4)  # run: 2 * 0.7 - 1
    assert out["norms_n_predicted"] == [0, 1]


@pytest.mark.parametrize(
    "name, text, fmt",
    [
        ("be5.csv", "Word,Joy,Anger,Sadness,Fear,Disgust\nhappy,5,1,1,1,1\nsad,1,1\n", "auto"),
        ("eil.txt", "word\temotion\tscore\nrage\tanger\t0.9\nfoo\tanger\n", "auto"),
        ("w.csv", "Word,V.Mean.Sum,A.Mean.Sum,D.Mean.Sum\nhappy,8,5,5\nsad,2\n", "auto"),
        ("g.csv", "word,valence,arousal\nhappy,8,5\nsad,2\n", "generic"),
        ("one.txt", "happy\n", "nrc-eil"),
    ],
)
def test_truncated_lexicon_row_is_a_coded_error(tmp_path, name, text, fmt):
    # a short row is E071 naming the row, not a bare IndexError
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    with pytest.raises(BiaskitError) as err:
        load_lexicon(f, fmt, "1,9" if fmt == "generic" else None)
    assert err.value.code == "E071" and "columns" in str(err.value)


def test_lexicon_file_that_is_not_utf8_is_a_coded_error(tmp_path):
    # a Latin-1 lexicon (e.g. saved from a spreadsheet) is a coded error, not a bare UnicodeDecodeError
    f = tmp_path / "lex.txt"
    f.write_bytes(b"Word\tValence\tArousal\tDominance\ncaf\xe9\t0.9\t0.5\t0.5\n")
    with pytest.raises(BiaskitError) as err:
        load_lexicon(f)
    assert err.value.code == "E071" and "UTF-8" in str(err.value)


SENTENCES = [  # inflected words whose lexicon entry is only the lemma, pronoun/determiner cases, an exception lemma
    "She ran with a happy dog and a sad cat.",
    "The children were running to the happiest parties.",
    "We like this a lot.",
    "They didn't know what the wolves had eaten.",
    "He's been studying the better books.",
    "Those were the worst years of our lives.",
    "Nobody cared; it wasn't theirs.",
    "Running dogs chased cats.",
]


def test_on_demand_lemmas_equal_the_full_pipeline(tmp_path):
    # Lemmas are made only for lexicon misses, by the pipeline's own lemmatizer; the scores must equal those
    # of Docs made by the whole pipeline (every component on, one text at a time).
    from biaskit.assets import load_spacy

    words = [
        "run",
        "happy",
        "child",
        "party",
        "know",
        "wolf",
        "eat",
        "study",
        "good",
        "book",
        "bad",
        "year",
        "life",
        "chase",
        "cat",
        "dog",
        "be",
        "do",
        "care",
        "sad",
        "like",
        "lot",
    ]
    lex = tmp_path / "l.txt"
    lex.write_text(
        "Word\tValence\tArousal\tDominance\n"
        + "".join(f"{w}\t{(i * 7 % 11) / 10}\t{(i * 3 % 7) / 6}\t{(i * 5 % 9) / 8}\n" for i, w in enumerate(words)),
        encoding="utf-8",
    )
    m = NormsMetric(lexicon=str(lex), processes=1).setup()
    assert "lemmatizer" in m._disable  # the component does not run in the batch
    full = load_spacy("en")
    for text in SENTENCES:
        doc = full(text)
        assert [t.lemma_ for t in doc if t.lemma_]  # the full pipeline made lemmas
        ref = m.score_doc(doc)
        got = m.score({"continuation": [text]})
        assert got["norms_valence"][0] == ref[0].get("valence") and got["norms_coverage"][0] == ref[0].get("coverage"), text


def test_worker_processes_give_identical_rows(vad_lexicon):
    import multiprocessing as mp

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("worker processes need fork (Linux); elsewhere the metric runs in one process")
    texts = [SENTENCES[i % len(SENTENCES)] + f" Item {i}." for i in range(120)] + ["", "and with her"]
    t = pa.table({"continuation": texts})
    one = score_table(t, ["norms"], params={"norms": {"lexicon": vad_lexicon, "processes": 1}})
    m = NormsMetric(lexicon=vad_lexicon, processes=2)
    two = score_table(t, [m])
    assert m._pool is not None and m._pool_size == 2  # the workers really ran
    assert two.equals(one)
    pids = set(m._pool.map(_worker_pid, range(4)))
    m.close()
    assert m._pool is None and all(not _alive(p) for p in pids)
    with pytest.raises(BiaskitError) as e:
        score_table(t, ["norms"], params={"norms": {"lexicon": vad_lexicon, "processes": -1}})
    assert e.value.code == "E070" and "-1" in str(e.value)


def test_auto_processes_only_for_large_batches(vad_lexicon):
    m = NormsMetric(lexicon=vad_lexicon).setup()
    from biaskit.evaluate.metrics.norms import AUTO_PROCESSES_MIN_TEXTS

    assert m._processes(10) == 1
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert m._processes(AUTO_PROCESSES_MIN_TEXTS) == min(cores, AUTO_PROCESSES_MIN_TEXTS // 2)


def _worker_pid(_):
    import os
    import time

    time.sleep(0.05)
    return os.getpid()


def _alive(pid):
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not yet reaped still answers kill(0)
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
    return True
