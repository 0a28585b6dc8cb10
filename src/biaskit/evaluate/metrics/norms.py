"""Psycholinguistic norms (BOLD, Dhamala et al. 2021): valence/arousal/dominance and basic emotions.

Text score for a dimension = sum(sgn(w_i) * w_i^2) / sum(|w_i|) over the words of the text found in the
lexicon, where pronouns, prepositions and conjunctions (spaCy POS PRON, ADP, CCONJ, SCONJ) are left out;
a word is looked up by its lowercase form, then by its lowercase lemma. ``norms_coverage`` = words found /
words considered. Classes: ``>= threshold`` positive, ``<= -threshold`` negative, neutral otherwise (the
emotions live in [0, 1], so they are positive or neutral).

Lexicons are user files (their licences forbid bundling), read by :func:`load_lexicon`:

=============  ===========================================================  ====================
format         file                                                         rescaling
=============  ===========================================================  ====================
``nrc-vad``    NRC-VAD (Mohammad 2018): TSV word, valence, arousal,         [0, 1] -> [-1, 1]
               dominance (header optional)
``warriner``   Warriner et al. 2013 CSV: Word, V.Mean.Sum, A.Mean.Sum,      1-9 -> [-1, 1]
               D.Mean.Sum
``be5``        BE5-style (Buechel & Hahn 2018) CSV/TSV: Word, Joy, Anger,   1-5 -> [0, 1]
               Sadness, Fear, Disgust
``nrc-eil``    NRC Emotion Intensity: TSV word, emotion, score              [0, 1] kept
``generic``    CSV/TSV with a ``word`` column and dimension columns,        ``scale=min,max``
               needs ``scale``                                              (VAD -> [-1,1],
                                                                            emotions -> [0,1])
=============  ===========================================================  ====================

Lexicon extension (:func:`extend_lexicon`, after Buechel & Hahn 2018 as used by BOLD): a feed-forward
regressor (scikit-learn MLP) on word embeddings is trained on the lexicon's words, its cross-validated
Pearson correlation per dimension is reported, and its predictions are used only for words outside the
lexicon; those words are counted in ``norms_n_predicted``.
"""

from __future__ import annotations

import csv
import io
import math
import multiprocessing as mp
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from biaskit.assets import load_spacy, resolve
from biaskit.errors import BiaskitError, check_choice
from biaskit.evaluate.metrics.base import Metric, Param, polarity_output
from biaskit.evaluate.metrics.gender import load_vectors
from biaskit.io import read_text_utf8

VAD = ("valence", "arousal", "dominance")
EMOTIONS = ("joy", "anger", "sadness", "fear", "disgust")
DIMS = VAD + EMOTIONS
EXCLUDED_POS = frozenset({"PRON", "ADP", "CCONJ", "SCONJ"})
#: POS after a determiner that show it modifies a noun phrase (parser-free pronoun rule, see is_excluded)
_NP_NEXT = frozenset({"NOUN", "PROPN", "ADJ", "NUM", "ADV", "X"})


def is_excluded(tok, has_parser: bool, pos_of=None) -> bool:
    """Pronoun, preposition or conjunction by spaCy POS.

    Without the parser, spaCy's attribute ruler cannot apply its rule "a DT/WDT token that is not a
    determiner (dependency) is PRON", so "this" in "we like this a lot" stays DET. The parser-free rule
    used then: a DT/WDT token not followed by a noun-phrase word (noun, proper noun, adjective, number,
    adverb) is a pronoun. ``pos_of(token)`` gives the POS (default ``token.pos_``).
    """
    pos_of = pos_of or (lambda t: t.pos_)
    if pos_of(tok) in EXCLUDED_POS:
        return True
    if not has_parser and tok.tag_ in ("DT", "WDT"):
        doc = tok.doc
        return tok.i + 1 >= len(doc) or pos_of(doc[tok.i + 1]) not in _NP_NEXT
    return False


def tag_pos_table(nlp) -> dict[str, str]:
    """spaCy's own fine-grained TAG -> POS map, read from the pipeline's attribute ruler (single-TAG rules)."""
    table: dict[str, str] = {}
    if "attribute_ruler" not in nlp.pipe_names:
        return table
    for p in nlp.get_pipe("attribute_ruler").patterns:
        pats = p["patterns"]
        if len(pats) == 1 and len(pats[0]) == 1 and set(pats[0][0]) == {"TAG"} and isinstance(pats[0][0]["TAG"], str) and "POS" in p["attrs"]:
            table[pats[0][0]["TAG"]] = p["attrs"]["POS"]
    return table


FORMATS = ("auto", "nrc-vad", "warriner", "be5", "nrc-eil", "generic")


def target_range(dim: str) -> tuple[float, float]:
    return (-1.0, 1.0) if dim in VAD else (0.0, 1.0)


def rescale(x: float, src: tuple[float, float], dim: str) -> float:
    lo, hi = target_range(dim)
    return lo + (x - src[0]) * (hi - lo) / (src[1] - src[0])


@dataclass
class Lexicon:
    """word (lowercase) -> {dimension: value on the target scale}."""

    values: dict[str, dict[str, float]]
    dims: list[str]
    source: str = ""
    format: str = ""
    predicted: dict[str, dict[str, float]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.values)

    def merge(self, other: Lexicon) -> Lexicon:
        vals = {w: dict(v) for w, v in self.values.items()}
        for w, v in other.values.items():
            vals.setdefault(w, {}).update(v)
        return Lexicon(vals, [d for d in DIMS if d in set(self.dims) | set(other.dims)], f"{self.source}+{other.source}", "merged")


def _fail(path, what, fix="check the file and --param norms.format") -> BiaskitError:
    return BiaskitError("E071", f"lexicon {path}: {what}", value=str(path), options=FORMATS[1:], fix=fix)


def _read_rows(path: Path) -> list[list[str]]:
    text = read_text_utf8(path, "lexicon", code="E071")
    if not text.strip():
        raise _fail(path, "empty file")
    first = text.splitlines()[0]
    delim = "\t" if "\t" in first else ";" if first.count(";") > first.count(",") else ","
    return [r for r in csv.reader(io.StringIO(text), delimiter=delim) if r and any(c.strip() for c in r)]


def _cell(path, row_no, row, j) -> str:
    """Column ``j`` of a data row; a short (truncated) row is an E071 naming the row."""
    if j >= len(row):
        raise _fail(path, f"row {row_no}: expected at least {j + 1} columns, got {len(row)}: {row!r}", "check the file is complete")
    return row[j]


def _num(path, row_no, s) -> float:
    try:
        v = float(s)
    except ValueError:
        raise _fail(path, f"row {row_no}: {s!r} is not a number") from None
    if math.isnan(v):
        raise _fail(path, f"row {row_no}: NaN value")
    return v


def _parse_scale(scale: tuple[float, float] | str | None) -> tuple[float, float] | str | None:
    """``"MIN,MAX"`` as a pair (other values as given)."""
    if isinstance(scale, str) and scale:
        try:
            lo, hi = (float(x) for x in scale.split(","))
            return (lo, hi)
        except ValueError:
            raise BiaskitError("E070", "malformed lexicon scale", value=scale, fix="write scale=MIN,MAX e.g. 1,9") from None
    return scale


def _detect_format(p: Path, header: list[str], first_row: list[str], scale) -> str:
    """The lexicon format from its header row (lower-cased cells)."""
    if "v.mean.sum" in header:
        return "warriner"
    if {"joy", "anger", "sadness", "fear", "disgust"} <= set(header):
        return "be5"
    if len(header) == 3 and header[1] in DIMS + ("anticipation", "surprise", "trust", "emotion", "affectdimension"):
        return "nrc-eil"
    if len(header) >= 4 and (header[1:4] == list(VAD) or _is_number(header[1])):
        return "nrc-vad"
    if "word" in header and scale:
        return "generic"
    raise _fail(p, f"cannot tell the lexicon format from the header {first_row!r}", "pass --param norms.format=... (and scale= for generic)")


class _LexiconValues:
    """Collects rescaled values word by word; identical repeats are counted, conflicting ones are an error."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.values: dict[str, dict[str, float]] = {}
        self.dupes = 0

    def put(self, row_no: int, word: str, dim: str, v: float, src: tuple[float, float]) -> None:
        p = self.path
        w = word.strip().lower()
        if not w:
            raise _fail(p, f"row {row_no}: empty word")
        if not (src[0] - 1e-9 <= v <= src[1] + 1e-9):
            raise _fail(p, f"row {row_no}: {dim} value {v} outside the scale {src}", "check format/scale")
        nv = rescale(v, src, dim)
        old = self.values.setdefault(w, {})
        if dim in old:
            if abs(old[dim] - nv) > 1e-12:
                raise _fail(p, f"row {row_no}: word {w!r} appears twice with different {dim} values", "deduplicate the lexicon")
            self.dupes += 1
        old[dim] = nv


def _read_nrc_vad(p: Path, rows: list[list[str]], header: list[str], scale, lex: _LexiconValues) -> None:
    body = rows[1:] if not _is_number(_cell(p, 1, rows[0], 1)) else rows
    src = scale or (0.0, 1.0)
    for i, r in enumerate(body, 2):
        if len(r) < 4:
            raise _fail(p, f"row {i}: expected word + 3 values, got {r!r}")
        for dim, s in zip(VAD, r[1:4]):
            lex.put(i, r[0], dim, _num(p, i, s), src)


def _read_warriner(p: Path, rows: list[list[str]], header: list[str], scale, lex: _LexiconValues) -> None:
    cols = {"valence": "v.mean.sum", "arousal": "a.mean.sum", "dominance": "d.mean.sum"}
    wi = header.index("word") if "word" in header else 1 if header[0] == "" else 0
    src = scale or (1.0, 9.0)
    for i, r in enumerate(rows[1:], 2):
        for dim, c in cols.items():
            if c in header:
                lex.put(i, _cell(p, i, r, wi), dim, _num(p, i, _cell(p, i, r, header.index(c))), src)


def _read_be5(p: Path, rows: list[list[str]], header: list[str], scale, lex: _LexiconValues) -> None:
    wi = header.index("word") if "word" in header else 0
    src = scale or (1.0, 5.0)
    for i, r in enumerate(rows[1:], 2):
        for dim in EMOTIONS:
            lex.put(i, _cell(p, i, r, wi), dim, _num(p, i, _cell(p, i, r, header.index(dim))), src)


def _read_nrc_eil(p: Path, rows: list[list[str]], header: list[str], scale, lex: _LexiconValues) -> None:
    body = rows[1:] if not _is_number(_cell(p, 1, rows[0], 2)) else rows
    src = scale or (0.0, 1.0)
    for i, r in enumerate(body, 2):
        _cell(p, i, r, 2)
        emo = r[1].strip().lower()
        if emo in EMOTIONS:
            lex.put(i, r[0], emo, _num(p, i, r[2]), src)


def _read_generic(p: Path, rows: list[list[str]], header: list[str], scale, lex: _LexiconValues) -> None:
    if not scale:
        raise BiaskitError("E070", "the generic lexicon format needs scale=MIN,MAX", fix="pass --param norms.scale=1,9")
    wi = header.index("word") if "word" in header else None
    if wi is None:
        raise _fail(p, "generic lexicon needs a 'word' column")
    dims = [h for h in header if h in DIMS]
    if not dims:
        raise _fail(p, f"no known dimension columns ({', '.join(DIMS)})")
    for i, r in enumerate(rows[1:], 2):
        for dim in dims:
            if _cell(p, i, r, header.index(dim)).strip():
                lex.put(i, _cell(p, i, r, wi), dim, _num(p, i, r[header.index(dim)]), scale)


_READERS = {"nrc-vad": _read_nrc_vad, "warriner": _read_warriner, "be5": _read_be5, "nrc-eil": _read_nrc_eil, "generic": _read_generic}


def load_lexicon(path: str | Path, format: str = "auto", scale: tuple[float, float] | str | None = None) -> Lexicon:
    """Read a norm lexicon file (see the module docs for the formats); values come back rescaled."""
    p = Path(path)
    if not p.is_file():
        raise BiaskitError("E071", "lexicon file not found", value=str(p), fix="pass the path of a lexicon file you have (see docs/metrics.md)")
    check_choice("E071", "unknown lexicon format", format, FORMATS, fix="pick one of the formats")
    scale = _parse_scale(scale)
    rows = _read_rows(p)
    header = [h.strip().lower() for h in rows[0]]
    fmt = _detect_format(p, header, rows[0], scale) if format == "auto" else format
    lex = _LexiconValues(p)
    _READERS[fmt](p, rows, header, scale, lex)
    if not lex.values:
        raise _fail(p, "no entries")
    dims_present = [d for d in DIMS if any(d in v for v in lex.values.values())]
    return Lexicon(lex.values, dims_present, str(p), fmt, info={"entries": len(lex.values), "identical_duplicates": lex.dupes})


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def text_score(values: list[float]) -> float:
    """sum(sgn(w) w^2) / sum(|w|); 0.0 when every value is 0."""
    num = sum(math.copysign(v * v, v) if v else 0.0 for v in values)
    den = sum(abs(v) for v in values)
    return num / den if den else 0.0


# ------------------------------------------------------------------------------------------ extension


def extend_lexicon(
    lexicon: Lexicon, space, *, folds: int = 5, seed: int = 0, hidden: tuple[int, ...] = (256,), max_iter: int = 300
) -> LexiconExtension:
    """Train a feed-forward regressor from embeddings to the lexicon's dimensions (multi-output).

    ``space`` is a :class:`biaskit.evaluate.metrics.gender.Space` (or anything with ``lookup`` and
    ``__getitem__``). Returns the fitted extension with per-dimension cross-validated Pearson r.
    """
    from sklearn.model_selection import KFold, cross_val_predict
    from sklearn.neural_network import MLPRegressor

    dims = list(lexicon.dims)
    xs, ys = [], []
    for w, vals in lexicon.values.items():
        key = space.lookup(w)
        if key is None or any(d not in vals for d in dims):
            continue
        xs.append(np.asarray(space[key], dtype=np.float64))
        ys.append([vals[d] for d in dims])
    if len(xs) < max(folds * 2, 10):
        raise BiaskitError(
            "E071",
            "too few lexicon words have embeddings to train the extension",
            value=len(xs),
            fix="use embeddings that cover the lexicon (or a bigger lexicon)",
        )
    X, Y = np.asarray(xs), np.asarray(ys)
    model = MLPRegressor(hidden_layer_sizes=hidden, max_iter=max_iter, random_state=seed, early_stopping=len(X) >= 200)
    pred = cross_val_predict(model, X, Y, cv=KFold(folds, shuffle=True, random_state=seed))
    r = {}
    for j, d in enumerate(dims):
        a, b = Y[:, j], pred[:, j]
        r[d] = float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else float("nan")
    model.fit(X, Y)
    return LexiconExtension(model, dims, space, r, len(X))


@dataclass
class LexiconExtension:
    model: Any
    dims: list[str]
    space: Any
    cv_pearson: dict[str, float]
    n_train: int
    cache: dict[str, dict[str, float] | None] = field(default_factory=dict)

    def predict(self, word: str) -> dict[str, float] | None:
        """Predicted values for a word outside the lexicon (clipped to each scale), None if no vector."""
        if word in self.cache:
            return self.cache[word]
        key = self.space.lookup(word)
        out = None
        if key is not None:
            y = self.model.predict(np.asarray(self.space[key], dtype=np.float64)[None, :])[0]
            out = {d: float(min(max(v, target_range(d)[0]), target_range(d)[1])) for d, v in zip(self.dims, y)}
        self.cache[word] = out
        return out


# ------------------------------------------------------------------------------------------ metric


class NormsMetric(Metric):
    # the worker pool, made on first use with more than one process (see _get_pool)
    _pool: Any
    _pool_size: int
    _pool_finalizer: Any
    name = "norms"
    version = "1"
    listed_fields = ("<dim>", "<dim>_class", "coverage", "n_predicted (with extension)")
    description = "BOLD psycholinguistic norms: per-dimension text scores, classes and lexicon coverage"
    label_outputs = (
        polarity_output(
            "norms_valence",
            "norms_valence_class",
            "norms_valence",
            display="Valence class",
            noun="valence",
            column_pattern=r"norms_\w+_class",  # one class column per lexicon dimension, same labels
        ),
    )
    source = (
        "Dhamala et al. 2021 (BOLD); lexicons: NRC-VAD (Mohammad 2018), Warriner et al. 2013, BE5 (Buechel & Hahn 2018), "
        "NRC Emotion Intensity; extension after Buechel & Hahn 2018"
    )
    default_batch_size = 2000
    params = (
        Param("lexicon", None, "lexicon file(s), comma-separated to combine (e.g. VAD + BE5); or env BIASKIT_NORMS_LEXICON", "path"),
        Param("format", "auto", "lexicon format (applies to every file)", choices=FORMATS),
        Param("scale", "", "MIN,MAX of the file's values (generic format, or to override a format's default)"),
        Param("threshold", 0.5, ">= threshold positive, <= -threshold negative, else neutral", "float"),
        Param("spacy", "en", "spaCy pipeline: language code (en) or package name / local path"),
        Param(
            "pos",
            "parser",
            "how POS tags are made: parser (default: tagger + attribute ruler + lemmatizer + parser, "
            "exactly the full pipeline's POS), ruler (no parser), tagger (fastest: tagger + spaCy's TAG->POS map, lemmas "
            "only for lexicon misses; differs from the full pipeline on ~5% of texts)",
            choices=("tagger", "ruler", "parser"),
        ),
        Param(
            "processes",
            0,
            "worker processes (0 = auto: one per CPU core for batches of 1,000+ texts, else 1; scores are identical for any value)",
            "int",
        ),
        Param(
            "extend_embeddings",
            None,
            "extend the lexicon to unknown words with a regressor on these vectors (word2vec file or asset name word2vec-bolukbasi)",
            "path",
        ),
        Param("extend_folds", 5, "cross-validation folds for the extension's reported correlation", "int"),
        Param("seed", 0, "seed of the extension regressor and its CV split", "int"),
    )

    def _check_config(self) -> None:
        if not self.config["lexicon"]:
            self.config["lexicon"] = os.environ.get("BIASKIT_NORMS_LEXICON") or None
        if not any(part.strip() for part in str(self.config["lexicon"] or "").split(",")):
            raise BiaskitError(
                "E071",
                "the norms metric needs a lexicon file",
                fix=(
                    "pass --param norms.lexicon=PATH (NRC-VAD, Warriner CSV, BE5 CSV, NRC emotion intensity) or set BIASKIT_NORMS_LEXICON; "
                    "their licences forbid bundling, see docs/metrics.md"
                ),
            )
        self.keep_on_error = ("coverage", "n_predicted")
        self._check_param(
            "processes",
            int(self.config["processes"] or 0) >= 0,
            "be 0 (auto) or a positive number",
            "e.g. norms.processes=2, or 0 to use every core for large batches",
        )
        # <= 0 would make every score positive (>= threshold comes first)
        self._check_param("threshold", self.config["threshold"] > 0, "be above 0", "e.g. norms.threshold=0.5: >= 0.5 positive, <= -0.5 negative")

    def _setup(self) -> None:
        lex = None
        for part in str(self.config["lexicon"]).split(","):
            if part.strip():
                one = load_lexicon(part.strip(), self.config["format"], self.config["scale"] or None)
                lex = one if lex is None else lex.merge(one)
        assert lex is not None  # _check_config makes sure a file is named
        self.lexicon = lex
        spec = self.config["spacy"]
        exclude = ["ner"] if self.config["pos"] == "parser" else ["parser", "ner"]
        if Path(spec).exists():
            self.nlp = load_spacy("en", path=spec, exclude=exclude)
        else:
            self.nlp = load_spacy(spec, exclude=exclude)
        self._has_parser = "parser" in self.nlp.pipe_names
        self._tag_pos = tag_pos_table(self.nlp) if self.config["pos"] == "tagger" else {}
        if self.config["pos"] == "tagger" and not self._tag_pos:
            raise BiaskitError(
                "E070", "this spaCy pipeline has no attribute ruler with a TAG->POS map", value=spec, fix="pass --param norms.pos=ruler"
            )
        self._lemmatizer = self.nlp.get_pipe("lemmatizer") if "lemmatizer" in self.nlp.pipe_names else None
        # The lemmatizer runs on demand, only for words whose lowercase form is not in the lexicon (most hits need
        # no lemma). It is the pipeline's own component called on the same token, so the lemma is the one the
        # full pipeline gives: an earlier component's lemma (the attribute ruler's exceptions) is kept, as the
        # component itself does with overwrite=False.
        self._lazy_lemma = (
            self._lemmatizer is not None and hasattr(self._lemmatizer, "lemmatize") and not getattr(self._lemmatizer, "overwrite", False)
        )
        self._disable = (["attribute_ruler"] if self._tag_pos else []) + (["lemmatizer"] if self._lazy_lemma else [])
        self._lemma_cache: dict[tuple[str, str, str], str] = {}
        self.extension = None
        if self.config["extend_embeddings"]:
            emb = self.config["extend_embeddings"]
            if emb == "word2vec-bolukbasi":
                emb = resolve("word2vec-bolukbasi").path
            self.extension = extend_lexicon(lex, load_vectors(emb), folds=self.config["extend_folds"], seed=self.config["seed"])
            self.info["extension"] = {"embeddings": str(emb), "n_train": self.extension.n_train, "cv_pearson": self.extension.cv_pearson}
        self.info.update(
            {"lexicon": lex.source, "format": lex.format, "entries": len(lex), "dims": lex.dims, "spacy": self.nlp.meta.get("name", spec)}
        )

    def fields(self) -> dict[str, pa.DataType]:
        f: dict[str, pa.DataType] = {}
        dims = self.lexicon.dims if self._ready else []
        for d in dims:
            f[d] = pa.float64()
        for d in dims:
            f[f"{d}_class"] = pa.string()
        f["coverage"] = pa.float64()
        if self.config["extend_embeddings"]:
            f["n_predicted"] = pa.int64()
        return f

    def _classify(self, v: float | None) -> str | None:
        if v is None:
            return None
        t = self.config["threshold"]
        return "positive" if v >= t else "negative" if v <= -t else "neutral"

    def score_doc(self, doc) -> tuple[dict[str, Any], str | None]:
        lex = self.lexicon.values
        considered = 0
        found: list[dict[str, float]] = []
        n_pred = 0
        for tok in doc:
            if tok.is_punct or tok.is_space or not any(ch.isalpha() for ch in tok.text) or is_excluded(tok, self._has_parser, self._pos_of):
                continue
            considered += 1
            low = tok.lower_
            vals = lex.get(low)
            if vals is None:
                lemma = self._lemma(tok)
                vals = lex.get(lemma)
                if vals is None and self.extension is not None:
                    vals = self.extension.predict(low) or self.extension.predict(lemma)
                    if vals is not None:
                        n_pred += 1
            if vals is not None:
                found.append(vals)
        out: dict[str, Any] = {}
        if considered == 0:
            return {}, "no words to score (only pronouns, prepositions, conjunctions, punctuation or numbers)"
        out["coverage"] = len(found) / considered
        if self.extension is not None:
            out["n_predicted"] = n_pred
        if not found:
            return out, "no word of the text is in the lexicon"
        missing = []
        for d in self.lexicon.dims:
            vs = [v[d] for v in found if d in v]
            if vs:
                out[d] = text_score(vs)
                out[f"{d}_class"] = self._classify(out[d])
            else:
                missing.append(d)
        return out, (f"no lexicon word with {', '.join(missing)}" if missing else None)

    def _pos_of(self, tok) -> str:
        if self._tag_pos:
            return self._tag_pos.get(tok.tag_, "X")
        return tok.pos_

    def _lemma(self, tok) -> str:
        """Lowercase lemma, made on demand (only for lexicon misses) by the pipeline's own lemmatizer."""
        if not self._lazy_lemma:
            return tok.lemma_.lower()
        if not self._tag_pos:
            if tok.lemma != 0:  # set by an earlier component (attribute ruler exception): the lemmatizer keeps it
                return tok.lemma_.lower()
            key = (tok.text, tok.pos_, str(tok.morph))
        else:
            key = (tok.text, self._tag_pos.get(tok.tag_, "X"), "")
        if key not in self._lemma_cache:
            lemma = tok.lower_
            if self._tag_pos:
                tok.pos_ = key[1]
            assert self._lemmatizer is not None  # _lazy_lemma holds only with a lemmatizer
            try:
                lemma = self._lemmatizer.lemmatize(tok)[0].lower()
            except Exception:  # pragma: no cover - a lemmatizer mode without rules: keep the form
                lemma = tok.lower_
            self._lemma_cache[key] = lemma
        return self._lemma_cache[key]

    def _score_texts(self, texts, batch, rows):
        procs = self._processes(len(texts))
        if procs <= 1:
            return self._score_chunk(texts)
        # Workers are forked from this process, so they share the loaded pipeline and lexicon; each scores a
        # contiguous chunk and sends back only the values (no Doc objects). Chunks come back in order.
        size = max(50, -(-len(texts) // (procs * 4)))
        chunks = [texts[i : i + size] for i in range(0, len(texts), size)]
        cols: dict[str, list] = {k: [] for k in self.fields()}
        errors: list[str | None] = []
        for c, e in self._get_pool(procs).imap(_score_chunk_in_worker, chunks):
            for k in cols:
                cols[k].extend(c[k])
            errors.extend(e)
        return cols, errors

    def _score_chunk(self, texts):
        cols: dict[str, list] = {k: [] for k in self.fields()}
        errors: list[str | None] = []
        for doc in self.nlp.pipe(texts, batch_size=256, disable=self._disable):
            vals, err = self.score_doc(doc)
            for k in cols:
                cols[k].append(vals.get(k))
            errors.append(err)
        return cols, errors

    def _processes(self, n_texts: int) -> int:
        if "fork" not in mp.get_all_start_methods() or mp.current_process().daemon:
            return 1  # no fork (Windows/macOS spawn would reload the pipeline per worker), or inside a pool worker
        want = int(self.config["processes"] or 0)
        if want == 0:
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
            want = cores if n_texts >= AUTO_PROCESSES_MIN_TEXTS else 1
        return max(1, min(want, n_texts // 2 or 1))

    def _get_pool(self, procs: int):
        pool = getattr(self, "_pool", None)
        if pool is not None and self._pool_size == procs:
            return pool
        self.close()

        # a weak reference, so the pool does not keep the metric alive; forked workers see the same object
        self._pool = mp.get_context("fork").Pool(procs, initializer=_init_worker, initargs=(weakref.ref(self),))
        self._pool_size = procs
        self._pool_finalizer = weakref.finalize(self, _close_pool, self._pool)
        return self._pool

    def close(self) -> None:
        """Stop the worker processes, if any (also done when the metric is garbage-collected or at exit)."""
        fin = getattr(self, "_pool_finalizer", None)
        if fin is not None:
            fin()
        self._pool = self._pool_finalizer = None


#: texts per scoring call from which ``processes=0`` (auto) uses one process per core
AUTO_PROCESSES_MIN_TEXTS = 1000
_WORKER_METRIC: Any = None


def _init_worker(ref) -> None:
    global _WORKER_METRIC
    _WORKER_METRIC = ref


def _score_chunk_in_worker(texts):
    return _WORKER_METRIC()._score_chunk(texts)


def _close_pool(pool) -> None:
    pool.terminate()
    pool.join()
