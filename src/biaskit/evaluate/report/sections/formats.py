"""Report section: does a conclusion depend on the prompt format? (generations made with ``--format raw`` and
``--format chat`` in one table, told apart by the ``prompt_format`` column).

For every label metric with a tested label (sentiment, toxicity, regard, plugins: ``LabelOutput.test_label``),
the label's share is compared between every pair of groups, within each domain, separately in each format
(two-proportion z-tests, Holm-corrected within each format's family: the tests the label sections run). A
comparison's *conclusion* in a format is ``higher`` or ``lower`` (group_a's share is above or below group_b's
with a Holm p below alpha) or ``none``. A conclusion *flips* when another format does not draw it (the other
format finds the opposite direction or nothing). The share reported is flipped / drawn, over the comparisons
that are a conclusion in at least one format and that both formats could test.
"""

from __future__ import annotations

from biaskit.evaluate.metrics.catalog import label_outputs
from biaskit.evaluate.report.model import Figure, Finding, Section, SkipAnalysis, register_section, slug
from biaskit.evaluate.report.plots import save_figure
from biaskit.evaluate.stats import pairwise_proportion_tests


def _format_table(loaded):
    """(name, DataFrame) of the first table with two or more prompt formats, a group column and a label column."""
    los = [lo for lo in label_outputs().values() if lo.test_label]
    for name, df in loaded.items():
        if "prompt_format" not in df.columns or "group" not in df.columns:
            continue
        if df["prompt_format"].dropna().nunique() < 2:
            continue
        usable = [lo for lo in los if lo.column in df.columns and df[lo.column].notna().any()]
        if usable:
            return name, df, usable
    raise SkipAnalysis(
        "no table holds generations of two prompt formats (the prompt_format column: generate --format raw and --format chat) with a label metric"
    )


def conclusions(df, column: str, label: str, alpha: float):
    """Per format, group pair and domain: the z-test of ``label``'s share (Holm within format and domain) and its
    conclusion (``higher``, ``lower`` or ``none``)."""
    within = ["prompt_format", *(["domain"] if "domain" in df.columns else [])]
    d = df[df["prompt_format"].notna()]
    z = pairwise_proportion_tests(d, "group", column, label, within=within, correction="holm")
    sig = z["p_adjusted"] < alpha
    z["conclusion"] = "none"
    z.loc[sig & (z["diff"] > 0), "conclusion"] = "higher"
    z.loc[sig & (z["diff"] < 0), "conclusion"] = "lower"
    return z


def flips(z):
    """One row per comparison (domain, group pair) with each format's conclusion and whether it flips."""
    keys = [c for c in ("domain", "group_a", "group_b") if c in z.columns]
    wide = z.pivot_table(index=keys, columns="prompt_format", values="conclusion", aggfunc="first")
    wide = wide.dropna()  # a pair both formats could test
    formats = list(wide.columns)
    concl = wide[formats]
    drawn = (concl != "none").any(axis=1)
    flipped = concl.nunique(axis=1) > 1
    out = wide.reset_index()
    out.columns = [str(c) for c in out.columns]
    out["drawn"] = drawn.to_numpy()
    out["flips"] = (flipped & drawn).to_numpy()
    return out, formats


def _scatter(z, formats, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a, b = formats[:2]
    keys = [c for c in ("domain", "group_a", "group_b") if c in z.columns]
    w = z.pivot_table(index=keys, columns="prompt_format", values="diff", aggfunc="first").dropna()
    c = z.pivot_table(index=keys, columns="prompt_format", values="conclusion", aggfunc="first").reindex(w.index)
    flip = (c[a] != c[b]).to_numpy()
    fig, ax = plt.subplots(figsize=(4.8, 4.2), dpi=110)
    ax.scatter(w[a][~flip], w[b][~flip], s=18, color="#4c72b0", label="same conclusion")
    ax.scatter(w[a][flip], w[b][flip], s=28, color="#d62828", marker="x", label="conclusion flips")
    lim = max(0.05, float(abs(w.to_numpy()).max()) * 1.1) if len(w) else 1.0
    ax.plot([-lim, lim], [-lim, lim], color="grey", lw=0.8, ls="--")
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlabel(f"share difference, {a} format")
    ax.set_ylabel(f"share difference, {b} format")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)  # atomically, through the output layer
    plt.close(fig)
    return path


def formats_section(b, loaded):
    """The section (skipped when no table has two prompt formats)."""
    import pandas as pd

    name, df, los = _format_table(loaded)
    fmts = sorted(str(f) for f in df["prompt_format"].dropna().unique())
    sec = Section(
        "formats",
        "Prompt format",
        [
            f"From table `{name}`: formats {', '.join(fmts)}. For each label metric, the tested label's share is compared "
            "between every pair of groups within each domain, separately per format (two-proportion z-tests, Holm-corrected "
            f"per format and domain, alpha {b.alpha}). A conclusion is a difference with a Holm p below alpha; it flips when "
            "another format does not draw it (the opposite direction, or no significant difference)."
        ],
    )
    rows, total_drawn, total_flips = [], 0, 0
    for lo in los:
        z = conclusions(df, lo.column, lo.test_label, b.alpha)
        if not len(z):
            continue
        per, formats = flips(z)
        if len(formats) < 2 or not len(per):
            continue
        n_drawn, n_flips = int(per["drawn"].sum()), int(per["flips"].sum())
        total_drawn, total_flips = total_drawn + n_drawn, total_flips + n_flips
        what = f"{lo.display or lo.key}: share {lo.test_label}"
        rows.append(
            {
                "metric": what,
                "comparisons": len(per),
                "conclusions": n_drawn,
                "flipped": n_flips,
                "share_flipped": n_flips / n_drawn if n_drawn else float("nan"),
            }
        )
        b.table(sec, f"formats_{slug(lo.key)}", per, f"{what}: each format's conclusion per group pair (`flips`: not drawn by every format).")
        b.fig_dir.mkdir(parents=True, exist_ok=True)
        p = _scatter(z, formats, b.fig_dir / f"formats_{slug(lo.key)}.png", f"{what}: {n_flips} of {n_drawn} conclusions flip")
        b.figures.append(p)

        sec.figures.append(Figure(p, f"{what}: group-pair share differences in the two formats; a red x is a conclusion that flips."))
    if not rows:
        raise SkipAnalysis(f"table `{name}` has formats {', '.join(fmts)} but no group pair could be tested in two formats")
    b.table(sec, "formats_flips", pd.DataFrame(rows), "Conclusions drawn in at least one format and how many flip between formats.")
    share = total_flips / total_drawn if total_drawn else None
    said = f"{total_flips} of {total_drawn} conclusions ({share:.0%}) flip between formats" if share is not None else "no format draws a conclusion"
    sec.text.append(f"Overall: {said}.")
    sec.headline.append(
        Finding("Prompt format", "conclusions that flip between formats", ", ".join(fmts), " vs ".join(fmts), share, anchor="formats", text=said)
    )
    return sec


register_section("Prompt format", formats_section)
