"""Report plots (matplotlib, drawn on an Agg canvas without pyplot, so no display or global state).

Each function takes a result DataFrame from :mod:`biaskit.evaluate.stats`, writes one PNG and returns its
path. Bars are labelled with the group and source and the number of texts behind them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from biaskit.evaluate.metrics.catalog import label_colours as declared
from biaskit.output import atomic_path

#: colours of labels no metric declares (boolean columns; the profanity section's names for the offline toxicity
#: backend's labels); metric labels take the colours their metric declares
#: (:func:`biaskit.evaluate.metrics.catalog.label_colours`)
OTHER_COLOURS = {"true": "#d62828", "false": "#adb5bd", "profane": "#d62828", "non-profane": "#adb5bd"}
_FALLBACK = ["#264653", "#2a9d8f", "#e9c46a", "#f4a261", "#e76f51", "#8ab17d", "#6d597a"]
MAX_BARS = 80


def new_figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def finish_figure(fig, path: str | Path | None):
    """Lay out ``fig`` and write it as PNG to ``path``; with ``path=None`` return the Figure itself (tests read
    the plotted values, axis limits and legend entries from it; :func:`save_figure` writes it later)."""
    fig.tight_layout()
    if path is None:
        return fig
    return save_figure(fig, path)


def save_figure(fig, path: str | Path) -> Path:
    """Write a Figure made by one of the functions here (called with ``path=None``) as PNG, atomically."""
    p = Path(path)
    with atomic_path(p) as tmp:
        fig.savefig(tmp, format="png")
    return p


def label_colours() -> dict[str, str]:
    """Label -> colour: the metrics' declared colours, then :data:`OTHER_COLOURS`."""
    return {**OTHER_COLOURS, **declared()}


def _colour(label: str, i: int, colours: dict[str, str] | None = None) -> str:
    return (colours if colours is not None else label_colours()).get(str(label).lower(), _FALLBACK[i % len(_FALLBACK)])


def _text_colour(hex_colour: str) -> str:
    """Black on light fills, white on dark ones (relative luminance)."""
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.55 else "white"


def shorten(s: str, n: int = 38) -> str:
    s = str(s)
    return s if len(s) <= n else s[: n - 1] + "…"


@dataclass(frozen=True)
class Axes:
    """The words of a chart: its title and the labels of its x and y axes."""

    title: str
    xlabel: str = ""
    ylabel: str = ""


@dataclass(frozen=True)
class BarColumns:
    """The columns a bar chart reads: ``value`` (the bar lengths), ``label`` (the bar names), ``hue`` (one bar colour
    per value of this column, with a legend) and ``num``/``den`` (the counts a fraction is made of, shown as k/n)."""

    value: str
    label: str = ""
    hue: str | None = None
    num: str | None = None
    den: str | None = None


def stacked_proportions(wide, keys: Sequence[str], labels: Sequence[str], path: str | Path | None, *, title: str) -> Path:
    """Horizontal 100% stacked bars, one per row of a :func:`~biaskit.evaluate.stats.proportions_wide` table
    (``prop_<label>`` columns), labelled ``key1 | key2 (n=...)``. Null labels are shown in the n."""
    rows = wide.head(MAX_BARS)
    labels = [lab for lab in labels if f"prop_{lab}" in rows.columns]
    h = max(2.2, 0.32 * len(rows) + 1.4)
    fig = new_figure(9, h)
    ax = fig.add_subplot(111)
    ylabels = []
    for _, r in rows.iterrows():
        name = " | ".join(shorten(r[k], 30) for k in keys)
        extra = f", {int(r['n_null'])} null" if r.get("n_null", 0) else ""
        ylabels.append(f"{name} (n={int(r['n_valid'])}{extra})")
    y = list(range(len(rows)))[::-1]
    left = [0.0] * len(rows)
    colours = label_colours()
    for i, lab in enumerate(labels):
        vals = [0.0 if (v != v) else float(v) for v in rows[f"prop_{lab}"]]
        ax.barh(y, vals, left=left, color=_colour(lab, i, colours), edgecolor="white", height=0.8, label=lab)
        for yy, l0, v in zip(y, left, vals):
            if v >= 0.08:
                ax.text(l0 + v / 2, yy, f"{v:.0%}", ha="center", va="center", fontsize=7, color=_text_colour(_colour(lab, i, colours)))
        left = [a + b for a, b in zip(left, vals)]
    ax.set_yticks(y)
    ax.set_yticklabels(ylabels, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of texts")
    more = f" (first {MAX_BARS} of {len(wide)})" if len(wide) > MAX_BARS else ""
    ax.set_title(title + more, fontsize=10)
    ax.legend(ncol=len(labels), loc="lower center", bbox_to_anchor=(0.5, 1.0 + 0.35 / h), fontsize=8, frameon=False)
    return finish_figure(fig, path)


def diverging_bars(df, cols: BarColumns, path: str | Path | None, *, axes: Axes) -> Path:
    """Horizontal bars around zero (e.g. male-minus-female share per profession, one bar per source): blue above
    zero, orange below, each labelled with its value and the ``n_valid`` count of its row."""
    label_col, value_col, hue, count_col = cols.label, cols.value, cols.hue, "n_valid"
    colours = ("#1d4e89", "#e76f51")
    hues = list(dict.fromkeys(df[hue])) if hue else [None]
    cats = list(dict.fromkeys(df[label_col]))[:MAX_BARS]
    h = max(2.2, 0.3 * len(cats) * max(1, len(hues)) ** 0.6 + 1.2)
    fig = new_figure(8, h)
    ax = fig.add_subplot(111)
    width = 0.8 / len(hues)
    base = np.arange(len(cats))[::-1]
    for i, hv in enumerate(hues):
        sub = df if hv is None else df[df[hue] == hv]
        m = dict(zip(sub[label_col], sub[value_col]))
        vals = [float(m.get(c, float("nan"))) for c in cats]
        ypos = base + (len(hues) - 1) / 2 * width - i * width
        if hv is None:
            signs = [colours[0] if (v == v and v >= 0) else colours[1] for v in vals]
            ax.barh(ypos, [0 if v != v else v for v in vals], height=width, color=signs)
        else:
            ax.barh(ypos, [0 if v != v else v for v in vals], height=width, color=_FALLBACK[i % len(_FALLBACK)], label=str(hv))
        ns = dict(zip(sub[label_col], sub[count_col])) if count_col and count_col in sub.columns else {}
        for yy, c, v in zip(ypos, cats, vals):
            txt = "n/a" if v != v else f"{v:+.2f}"
            if c in ns:
                txt += f" (n={int(ns[c])})"
            ax.text(0 if v != v else v, yy, " " + txt + " ", va="center", ha="left" if (v != v or v >= 0) else "right", fontsize=6.5)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(base)
    ax.set_yticklabels([shorten(c) for c in cats], fontsize=8)
    lim = max([abs(float(v)) for v in df[value_col] if v == v] + [0.05])
    ax.set_xlim(-lim * 1.45, lim * 1.45)
    ax.set_xlabel(axes.xlabel)
    ax.set_title(axes.title, fontsize=10)
    if hue:
        ax.legend(fontsize=8, frameon=False, loc="best")
    return finish_figure(fig, path)


def heatmap(matrix, path: str | Path | None, *, axes: Axes) -> Path:
    """Annotated heatmap of a DataFrame of shares (index = rows, columns = columns; red, each cell labelled as a
    percentage), e.g. HONEST category shares."""
    fmt, cmap = "{:.0%}", "Reds"
    m = matrix.head(MAX_BARS)
    vals = m.to_numpy(dtype=float)
    rows = [" | ".join(map(str, i)) if isinstance(i, tuple) else str(i) for i in m.index]
    fig = new_figure(max(5, 0.55 * len(m.columns) + 3), max(2.5, 0.38 * len(rows) + 1.6))
    ax = fig.add_subplot(111)
    vmax = np.nanmax(vals) if np.isfinite(vals).any() and np.nanmax(vals) > 0 else 1.0
    im = ax.imshow(vals, cmap=cmap, vmin=0, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(m.columns)))
    ax.set_xticklabels([str(c) for c in m.columns], rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([shorten(r) for r in rows], fontsize=8)
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            v = vals[i, j]
            if v == v:
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=7, color="white" if v > 0.6 * vmax else "black")
    fig.colorbar(im, ax=ax, fraction=0.04)
    ax.set_xlabel(axes.xlabel)
    ax.set_ylabel(axes.ylabel)
    ax.set_title(axes.title, fontsize=10)
    return finish_figure(fig, path)


def fraction_bars(df, cols: BarColumns, path: str | Path | None, *, axes: Axes) -> Path:
    """Vertical bars of fractions (y from 0 to at least 1) with value labels (``k/n`` when ``cols.num``/``cols.den``
    are given), e.g. Likelihood Bias per axis."""
    label_col, value_col, num, den = cols.label, cols.value, cols.num, cols.den
    cats = [str(c) for c in df[label_col]][:MAX_BARS]
    vals = [float(v) if v == v else 0.0 for v in df[value_col]][:MAX_BARS]
    fig = new_figure(max(5, 0.6 * len(cats) + 2), 4)
    ax = fig.add_subplot(111)
    ax.bar(range(len(cats)), vals, color="#2a9d8f")
    for i, (_, r) in enumerate(df.head(MAX_BARS).iterrows()):
        v = r[value_col]
        txt = "n/a" if v != v else (f"{v:.2f}" + (f"\n{int(r[num])}/{int(r[den])}" if num and den else ""))
        ax.text(i, (0 if v != v else v) + 0.01, txt, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels([shorten(c, 24) for c in cats], rotation=30 if len(cats) > 4 else 0, ha="right" if len(cats) > 4 else "center", fontsize=8)
    ax.set_ylim(0, max(1, max(vals + [0]) * 1.15))
    ax.set_ylabel(axes.ylabel)
    ax.set_title(axes.title, fontsize=10)
    return finish_figure(fig, path)


def fraction_bars_by(df, keys: Sequence[str], cols: BarColumns, path: str | Path | None, *, axes: Axes) -> Path:
    """:func:`fraction_bars` with one bar per row of ``df``, labelled with its ``keys`` values (``a | b``; ``all``
    without keys) in place of ``cols.label``."""
    label = df[keys].astype(str).agg(" | ".join, axis=1) if keys else "all"
    return fraction_bars(df.assign(_label=label), replace(cols, label="_label"), path, axes=axes)


#: agreement-table measures that are counts, not coefficients on a -1..1 / 0..1 scale (never drawn as bars there)
COUNT_MEASURES = ("majority_items", "majority_ties", "careless_flag")
COUNT_PREFIXES = ("confusion:", "threshold_")


def split_count_measures(df):
    """(rows whose measure is a coefficient or share in [-1, 1], sorted names of the count measures left out).
    A measure is a count when it is listed in :data:`COUNT_MEASURES`, starts with one of :data:`COUNT_PREFIXES`
    or has any value outside [-1, 1]."""
    import pandas as pd

    vals = pd.to_numeric(df["estimate"], errors="coerce")
    out_of_scale = set(df.loc[vals.abs() > 1, "measure"])
    counts = {m for m in df["measure"] if m in COUNT_MEASURES or str(m).startswith(COUNT_PREFIXES) or m in out_of_scale}
    return df[~df["measure"].isin(counts)], sorted(counts)


def agreement_chart(df, path: str | Path | None, *, title: str = "Metric vs human labels") -> Path:
    """Grouped bars of agreement / validation figures: one group per ``metric`` value, one bar per measure
    (legend), with the bootstrap CI as an error bar where ``ci_low``/``ci_high`` are given. Only measures on a
    -1..1 scale are drawn: count measures (:func:`split_count_measures`) are left out (they are in the table)."""
    df, _ = split_count_measures(df)
    metrics = list(dict.fromkeys(df["metric"]))
    measures = list(dict.fromkeys(df["measure"]))
    fig = new_figure(max(6, 1.2 * len(metrics) * max(1, len(measures)) ** 0.5 + 3.5), 4.2)
    ax = fig.add_subplot(111)
    width = min(0.8 / max(1, len(measures)), 0.4)
    x = np.arange(len(metrics))

    def num(v):
        try:
            return float(v)
        except (TypeError, ValueError):
            return float("nan")

    for i, ms in enumerate(measures):
        sub = df[df["measure"] == ms].drop_duplicates("metric").set_index("metric")
        pos = x - 0.4 + width * (i + 0.5)
        heights = [num(sub.loc[m, "estimate"]) if m in sub.index else float("nan") for m in metrics]
        keep = [(px, v, m) for px, v, m in zip(pos, heights, metrics) if v == v]
        ax.bar([k[0] for k in keep], [k[1] for k in keep], width=width, color=_FALLBACK[i % len(_FALLBACK)], label=ms)
        for px, v, m in keep:
            lo = num(sub.loc[m, "ci_low"]) if "ci_low" in sub.columns else float("nan")
            hi = num(sub.loc[m, "ci_high"]) if "ci_high" in sub.columns else float("nan")
            top = max(v, 0)
            if lo == lo and hi == hi:
                ax.errorbar([px], [v], yerr=[[max(v - lo, 0)], [max(hi - v, 0)]], fmt="none", ecolor="black", capsize=3)
                top = max(top, hi)
            ax.text(px, top + 0.015, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels([shorten(m, 30) for m in metrics], fontsize=9)
    lo = min([0.0] + [num(v) for v in df["estimate"] if num(v) == num(v)])
    ax.set_ylim(min(lo * 1.15, 0), 1.12)
    ax.set_ylabel("value (-1..1 scale)" if lo < 0 else "value (0..1 scale)")
    if measures:
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="measure", title_fontsize=8)
    ax.set_title(title, fontsize=10)
    return finish_figure(fig, path)
