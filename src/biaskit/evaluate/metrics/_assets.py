"""Assets of the metrics (registered on import; importing this is cheap).

HurtLex 1.2 (Bassignana et al. 2018, MilaNLProc/hurtlex, CC BY-NC-SA 4.0) is never bundled: it is taken
from a local file (``lexicon=`` / ``BIASKIT_HURTLEX_<LANG>``) or downloaded on demand from the pinned
commit below and checked against the sha256. The sha256 values were computed from copies of these files
taken at that commit (f80012d); the download itself could not be exercised here (no network), and the
URL uses the abbreviated commit id, which GitHub resolves.
"""

from __future__ import annotations

from biaskit.assets import Asset, register_asset

HURTLEX_COMMIT = "f80012d"
HURTLEX_SHA256 = {
    "EN": "a734820a63c87994781d182692e6dc7ec262c402016971a7fa31946ced0d470c",
    "CS": "4158648b5e568ab386875edb14bd9d25dad58d52c722c267420a7982cb2e7df0",
    "PL": "ab909d691c4fd03c431ef2761378572330ad106a176ca657ed36a9eb326341dc",
    "SK": "76c166ce2b1ec84996565c43dc51e5124046d3578c4a7c0218aceedd1935a9b4",
}


def hurtlex_asset_name(lang: str) -> str:
    return f"hurtlex-{lang.lower()}"


for _lang, _sha in HURTLEX_SHA256.items():
    register_asset(
        Asset(
            hurtlex_asset_name(_lang),
            "lexicon",
            f"HurtLex 1.2 {_lang} (id, pos, category, stereotype, lemma, level); for the honest metric",
            env_var=f"BIASKIT_HURTLEX_{_lang}",
            url=f"https://raw.githubusercontent.com/MilaNLProc/hurtlex/{HURTLEX_COMMIT}/lexica/{_lang}/1.2/hurtlex_{_lang}.tsv",
            sha256=_sha,
            license="CC BY-NC-SA 4.0 (non-commercial; never bundled)",
        )
    )
