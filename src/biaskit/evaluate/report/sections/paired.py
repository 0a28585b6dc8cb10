"""The paired-by-template table and the template-sensitivity figure, added to the Likelihood Bias and generation
bias sections (see :mod:`biaskit.evaluate.stats.paired`). Not a section of its own: it registers nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from biaskit.bootstrap import BootSpec
from biaskit.evaluate.report.plots import finish_figure, new_figure, shorten
from biaskit.evaluate.stats.paired import paired_by_template, template_sensitivity


def sensitivity_plot(top, path: Path | None, *, title: str, xlabel: str):
    """Horizontal range bars: per descriptor pair the min..max of its gap across templates, a dot at the mean and
    the paired-bootstrap interval of the mean as a thick bar."""
    d = top.head(20)
    fig = new_figure(7, max(2.5, 0.35 * len(d) + 1.2))
    ax = fig.add_subplot(111)
    y = np.arange(len(d))[::-1]
    ax.hlines(y, d["min_diff"], d["max_diff"], color="#bbbbbb", lw=6, label="range over templates")
    ok = d["ci_low"].notna().to_numpy()
    ax.hlines(y[ok], d["ci_low"][ok], d["ci_high"][ok], color="#2a9d8f", lw=2.5, label="95% CI of the mean (paired bootstrap)")
    ax.plot(d["mean_diff"], y, "o", color="black", ms=4, label="mean gap")
    ax.axvline(0, color="#666666", lw=0.8, ls="--")
    lab = [f"{r.get('axis', '')}: {r['descriptor_a']} - {r['descriptor_b']}".strip(": ") for _, r in d.iterrows()]
    ax.set_yticks(y)
    ax.set_yticklabels([shorten(s, 40) for s in lab], fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="best")
    return finish_figure(fig, path)


def add_paired(b, sec, df, value: str, *, what: str, name: str, model=None) -> None:
    """Add the paired analysis of column ``value`` (one model's rows) to section ``sec``: the table of every pair,
    the widest template spreads as a table and a figure, and a sentence on how to read them."""
    paired = paired_by_template(df, value, boot=BootSpec(n_boot=b.n_boot, seed=b.seed))
    if not len(paired):
        sec.text.append(f"Paired analysis by template ({what}): no descriptor pair shares a template.")
        return
    if model is not None:
        paired.insert(0, "model", model)
    flips = int(paired["sign_flips"].sum())
    sec.text.append(
        f"Paired by template ({what}): the same template filled with two descriptors is a pair, so the template's own "
        "effect cancels in the within-template difference. Per descriptor pair: Wilcoxon signed-rank test of the "
        f"differences (Holm over the axis' pairs) and a paired bootstrap over templates ({b.n_boot} resamples). "
        f"Template sensitivity: in {flips} of {len(paired)} pairs some templates put the first descriptor above the "
        "second and others below; the range over templates shows how much the measured gap depends on the wording."
    )
    b.table(sec, f"{name}_paired", paired, f"Descriptor pairs paired by template ({what}).", max_rows=20)
    top = template_sensitivity(paired)
    b.table(sec, f"{name}_template_sensitivity", top, "Pairs whose gap varies most across templates (spread and range).", max_rows=20)
    if len(top):
        b.figure(
            sec,
            f"{name}_template_sensitivity",
            sensitivity_plot,
            top,
            title=f"Template sensitivity of the gap ({what})" + (f", {model}" if model else ""),
            xlabel=f"within-template difference of {value} (first - second descriptor)",
            caption="Spread of a descriptor pair's gap across templates: grey = min..max over templates, dot = mean, "
            "green = 95% paired-bootstrap CI of the mean.",
        )
