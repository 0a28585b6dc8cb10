"""Report section: HolisticBias generation bias (see :mod:`biaskit.evaluate.stats.genbias`).

Self-contained (its own figure code); it registers itself on the section model. The section uses the
first table that has HolisticBias prompt columns (axis, descriptor, template), generation rows and a
family of class-probability columns: ``classifier_*`` (the generic classifier metric, e.g. a model from
``biaskit train classifier``), ``regard_*`` or ``style_*`` (``biaskit stats genbias --style-model``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from biaskit.evaluate.report.model import Figure, Section, SkipAnalysis, register_section, slug
from biaskit.evaluate.report.plots import save_figure
from biaskit.evaluate.report.sections.paired import add_paired
from biaskit.evaluate.stats.genbias import DDOF, SCALE, gen_bias

#: probability families tried in order: (prefix, columns never taken as probabilities)
FAMILIES = (
    ("classifier_", ("classifier_label", "classifier_score", "classifier_error")),
    ("regard_", ("regard_label", "regard_error")),
    ("style_", ()),
)


def _prob_columns(df) -> list[str] | None:
    import pandas as pd

    for prefix, skip in FAMILIES:
        cols = [c for c in df.columns if str(c).startswith(prefix) and c not in skip and pd.api.types.is_float_dtype(df[c])]
        if len(cols) >= 2 and df[cols].notna().any().any():
            return cols
    return None


def _bars(by_axis, path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = by_axis[by_axis["full_gen_bias"].notna()]
    labels = [f"{m} | {a}" if "model" in d.columns else str(a) for m, a in zip(d.get("model", d["axis"]), d["axis"])]
    y = d["full_gen_bias"].to_numpy(dtype=float)
    lo = d["full_ci_low"].to_numpy(dtype=float)
    hi = d["full_ci_high"].to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.6 * len(d) + 2), 3.6), dpi=110)
    x = np.arange(len(d))
    ax.bar(x, y, color="#4c72b0")
    ok = np.isfinite(lo) & np.isfinite(hi)
    if ok.any():
        ax.errorbar(x[ok], y[ok], yerr=np.vstack([y[ok] - lo[ok], hi[ok] - y[ok]]), fmt="none", ecolor="black", capsize=3, lw=1)
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("Full Gen Bias (mean within-template variance)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    save_figure(fig, path)  # atomically, through the output layer
    plt.close(fig)
    return path


def genbias_section(b, loaded):
    """The report section (raises the builder's skip exception with the reason when no table fits)."""
    found = None
    for name, df in loaded.items():
        if not all(c in df.columns for c in ("axis", "descriptor", "template")):
            continue
        if "kind" in df.columns and not (df["kind"] == "generate").any():
            continue
        cols = _prob_columns(df)
        if cols:
            found = (name, df, cols)
            break
    if found is None:
        raise SkipAnalysis(
            "no table has generations of HolisticBias prompts (axis, descriptor, template) with class-probability columns "
            "(classifier_*, regard_* or style_*): score HolisticBias generations with a classifier, or run "
            "`biaskit stats genbias GENERATIONS --style-model M`"
        )
    name, df, cols = found
    res = gen_bias(df, cols, n_boot=b.n_boot, seed=b.seed)
    sec = Section(
        "genbias",
        "HolisticBias generation bias",
        [
            f"From table `{name}`, style vector = {', '.join(cols)}. Per axis, as Smith et al. (2022) define it: "
            "Full Gen Bias = (1/T) sum over templates t of sum over styles s of Var_d(mean style probability of descriptor d "
            f"in template t), the variance across descriptors within each template (population variance, ddof={DDOF}) "
            f"averaged over templates; the `*_x1000` columns show it x{SCALE}, the scale of the paper's tables. "
            "Partial Gen Bias per style (each style its own cluster here; `biaskit stats genbias "
            f"--clusters/--n-clusters` groups them); percentile bootstrap CIs over generations ({b.n_boot} resamples, seed {b.seed})."
        ]
        + [f"Note: {n}." for n in res.notes],
    )
    b.table(sec, "genbias_by_axis", res.by_axis, "Full and Summed-Cluster Gen Bias per axis with bootstrap CIs.")
    if res.by_axis["full_gen_bias"].notna().any():
        b.fig_dir.mkdir(parents=True, exist_ok=True)
        p = _bars(res.by_axis, b.fig_dir / "genbias_by_axis.png", "HolisticBias Full Gen Bias per axis")
        b.figures.append(p)
        sec.figures.append(Figure(p, "Full Gen Bias per axis (95% bootstrap CI over generations)."))
    b.table(sec, "genbias_partial", res.partial, "Partial Gen Bias per style (adds up to the Full Gen Bias of the axis).")
    top = res.descriptors[res.descriptors["top"]]
    b.table(sec, "genbias_descriptors", top, "Descriptors that contribute most to the Full Gen Bias of their axis.", max_rows=30)

    style = next((c for c in cols if "negative" in c), cols[0])  # one style's probability: the paired gap of that style
    gens = df[df["kind"] == "generate"] if "kind" in df.columns else df
    for m in sorted(gens["model"].dropna().unique()) if "model" in gens.columns else [None]:
        sub = gens[gens["model"] == m] if m is not None else gens
        add_paired(b, sec, sub, style, what=f"probability of {style}", name="genbias" + (f"_{slug(m)}" if m else ""), model=m)
    return sec


register_section("HolisticBias generation bias", genbias_section)
