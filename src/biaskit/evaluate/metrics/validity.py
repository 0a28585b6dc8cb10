"""Completion validity: is a fill-in (or every word of a text) a real word of its language?

The West Slavic gender-bias study (Martinkova et al. 2023) asks first how many of a masked LM's fill-ins
are real words at all. A word counts as valid when a Hunspell spelling dictionary accepts it (its affix
rules, compounding and capitalisation rules included): Debian's ``hunspell-cs``, ``hunspell-pl``,
``hunspell-sk`` and ``hunspell-en-us`` (``/usr/share/hunspell/<ll_CC>.aff/.dic``; installed by
``scripts/services/hunspell.sh``), read with the pure-Python Hunspell port ``spylls`` (MPL 2.0).

Per text: the words are the whitespace-separated parts stripped of surrounding punctuation. ``valid`` is
true when there is at least one word and the dictionary accepts every word; a text with no letter (``.``,
``1990``) or a subword piece (``##ing``) is not a word: false. ``unknown`` lists the rejected words.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import Any

import pyarrow as pa
from spylls.hunspell import Dictionary

from biaskit.errors import BiaskitError, require
from biaskit.evaluate.metrics.base import Metric, Param

#: language code -> Hunspell dictionary name (Debian file names under /usr/share/hunspell)
DICTIONARIES = {"cs": "cs_CZ", "pl": "pl_PL", "sk": "sk_SK", "en": "en_US"}
#: Debian package of each dictionary (for the error message)
PACKAGES = {"cs_CZ": "hunspell-cs", "pl_PL": "hunspell-pl", "sk_SK": "hunspell-sk", "en_US": "hunspell-en-us"}
DEFAULT_DIR = "/usr/share/hunspell"
_EDGE = re.compile(r"^[\W_]+|[\W_]+$", re.UNICODE)

#: loaded dictionaries, keyed by the resolved base path (Czech takes ~5-10 s to load in spylls)
_LOADED: dict[str, Any] = {}


def dictionary_dir() -> Path:
    return Path(os.environ.get("BIASKIT_HUNSPELL_DIR") or DEFAULT_DIR)


def dictionary_path(language: str, *, directory: str | Path | None = None, path: str | Path | None = None) -> Path:
    """Base path (without .aff/.dic) of the dictionary for ``language``; E010 naming the path and the fix."""
    if path is not None:
        p = Path(path).expanduser()
        base = p.with_suffix("") if p.suffix in (".dic", ".aff") else p
        where = f"{base}.aff / {base}.dic"
        fix = "pass validity.dictionary=<path to the .dic file (its .aff next to it)>"
    else:
        d = Path(directory).expanduser() if directory is not None else dictionary_dir()
        lang = str(language).strip()
        name = DICTIONARIES.get(lang.lower(), lang if "_" in lang else None)
        if name is None:
            found = sorted(d.glob(f"{lang.lower()}_*.dic")) if d.is_dir() else []
            name = found[0].stem if found else f"{lang.lower()}_??"
        base = d / name
        where = f"{base}.dic"
        pkg = PACKAGES.get(name, f"the hunspell dictionary package for {lang!r}")
        fix = (
            f"install Debian's {pkg} (bash scripts/services/hunspell.sh installs cs, pl, sk and en-us), or pass "
            f"validity.dictionary=<file.dic> or validity.dictionary_dir=<folder> (or set BIASKIT_HUNSPELL_DIR)"
        )
    if not (base.with_suffix(".dic").is_file() and base.with_suffix(".aff").is_file()):
        raise BiaskitError("E010", f"no Hunspell dictionary for language {language!r} at {where}", value=str(base), fix=fix)
    return base


def load_dictionary(base: Path):
    """The spylls dictionary at ``base`` (.aff + .dic), cached per process."""
    key = str(Path(base).resolve())
    if key not in _LOADED:
        require("spylls", "metrics", "checking words against Hunspell dictionaries (validity metric)")

        _LOADED[key] = Dictionary.from_files(str(base))
    return _LOADED[key]


def split_words(text: str) -> list[str]:
    """Whitespace-separated parts stripped of surrounding punctuation (a part that is only punctuation stays
    as it is, and is then not a word)."""
    out = []
    for part in unicodedata.normalize("NFC", text).split():
        if part.startswith("##"):  # a WordPiece continuation piece stays as it is (never a word): "##er" is not "er"
            out.append(part)
            continue
        w = _EDGE.sub("", part)
        out.append(w if w else part)
    return [w for w in out if w]


class ValidityMetric(Metric):
    name = "validity"
    version = "1"
    description = "completion validity: whether each word of the text is in the language's Hunspell dictionary"
    source = "Martinkova et al. 2023 (completion validity); dictionaries: Debian hunspell-cs/pl/sk/en-us (LibreOffice dictionaries), read with spylls"
    default_batch_size = 4096
    params = (
        Param("language", "auto", "language of the texts (cs, pl, sk, en or a dictionary name like de_DE); auto = per row from the language column"),
        Param("language_column", "language", "column with each row's language code (language=auto)"),
        Param("dictionary", None, "explicit .dic file (its .aff next to it) for a fixed language", "path"),
        Param("dictionary_dir", None, "folder with <ll_CC>.aff/.dic files (default $BIASKIT_HUNSPELL_DIR or /usr/share/hunspell)", "path"),
        Param("ignore_case", False, "also accept the lowercase / capitalised form (Hunspell's own case rules otherwise)", "bool"),
    )

    def _check_config(self) -> None:
        if self.config["dictionary"] is not None and self.config["language"] == "auto":
            raise BiaskitError(
                "E070",
                "validity.dictionary needs a fixed validity.language",
                value=self.config["dictionary"],
                fix="e.g. validity.language=cs validity.dictionary=/path/cs_CZ.dic",
            )

    def extra_inputs(self) -> list[str]:
        return [self.config["language_column"]] if self.config["language"] == "auto" else []

    def _dictionary(self, language: str):
        base = dictionary_path(language, directory=self.config["dictionary_dir"], path=self.config["dictionary"])
        self.info.setdefault("dictionaries", {})[language] = str(base)
        return load_dictionary(base)

    def _setup(self) -> None:
        require("spylls", "metrics", "checking words against Hunspell dictionaries (validity metric)")
        self._dicts: dict[str, Any] = {}
        if self.config["language"] != "auto":
            self._dicts[self.config["language"]] = self._dictionary(self.config["language"])

    def fields(self) -> dict[str, pa.DataType]:
        return {"valid": pa.bool_(), "unknown": pa.string()}

    def known(self, word: str, dic) -> bool:
        if not any(ch.isalpha() for ch in word) or word.startswith("##"):
            return False
        forms = [word]
        if self.config["ignore_case"]:
            forms += [word.lower(), word[:1].upper() + word[1:].lower()]
        return any(dic.lookup(f) for f in forms)

    def _score_texts(self, texts, batch, rows):
        valid: list[bool | None] = []
        unknown: list[str | None] = []
        errors: list[str | None] = []
        auto = self.config["language"] == "auto"
        langs = batch[self.config["language_column"]] if auto else None
        for t, r in zip(texts, rows):
            lang = langs[r] if auto else self.config["language"]
            if lang is None or not str(lang).strip():
                valid.append(None)
                unknown.append(None)
                errors.append(f"no language in column {self.config['language_column']!r}")
                continue
            lang = str(lang).strip()
            if lang not in self._dicts:
                self._dicts[lang] = self._dictionary(lang)  # E010 (whole run) when the dictionary is missing
            dic = self._dicts[lang]
            words = split_words(t)
            bad = [w for w in words if not self.known(w, dic)]
            valid.append(bool(words) and not bad)
            unknown.append(" ".join(bad) if bad else None)
            errors.append(None)
        return {"valid": valid, "unknown": unknown}, errors
