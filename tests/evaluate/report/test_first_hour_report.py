"""The offline toxicity backend's section is profanity throughout (no toxic /
non-toxic labels, no toxicity_* columns in its text, tables or figures), and an all-zero gender chart is one
sentence."""

from __future__ import annotations

import re

import pandas as pd
import pyarrow as pa
import pytest
from tests.evaluate.report.conftest import make_scores

from biaskit.evaluate.report import build_report, model
from biaskit.io import write_table

OFFLINE = {
    "stage": "scores",
    "config": {
        "metrics": {
            "toxicity": {"name": "toxicity", "config": {"backend": "offline"}, "info": {"backend": "offline", "model": "alt-profanity-check"}}
        }
    },
}
TOXIC_WORDING = re.compile(r"\btoxic\b|toxicity_(score|label|error)", re.IGNORECASE)


@pytest.fixture
def only_sections():
    """``only_sections(*labels)``: the report builds just these registered sections for the rest of the test (the
    registry is changed in place, under every name the builder reads it by, and restored after): the other
    sections, most of a report's ~3 CPU s, have their own tests."""
    saved = list(model.SECTIONS)

    def keep(*labels: str) -> None:
        kept = [s for s in saved if s[0] in labels]
        assert [s[0] for s in kept] == list(labels), [s[0] for s in saved]
        model.SECTIONS[:] = kept

    yield keep
    model.SECTIONS[:] = saved


def _section(html: str, anchor: str) -> str:
    start = html.index(f"<h2 id='{anchor}'>")
    nxt = html.find("<h2 ", start + 1)
    return html[start : nxt if nxt != -1 else len(html)]


def test_profanity_section_says_profanity_throughout(tmp_path, only_sections):
    only_sections("Toxicity")  # the offline backend's labels section, titled profanity
    sc = make_scores(n_per=10).to_pandas()
    run = tmp_path / "run"
    run.mkdir()
    write_table(pa.Table.from_pandas(sc, preserve_index=False), run / "scores.parquet", stage="scores", manifest=OFFLINE)
    res = build_report(run, tmp_path / "rep", n_boot=20)
    sec = _section(res.html.read_text(), "profanity")
    assert "a text is `profane` when its profanity probability" in sec.replace("<code>", "`").replace("</code>", "`")
    assert TOXIC_WORDING.search(sec) is None, TOXIC_WORDING.search(sec)
    prof = {k: v for k, v in res.tables.items() if k.startswith("profanity")}
    assert "profanity_proportions" in prof and "profanity_profanity_score_mannwhitney" in prof
    for name, path in prof.items():
        text = open(path, encoding="utf-8").read()
        assert TOXIC_WORDING.search(text) is None, (name, TOXIC_WORDING.search(text))
    shares = pd.read_csv(prof["profanity_proportions"])
    assert {"prop_profane", "prop_non-profane"} <= set(shares.columns)
    # the shares are the data's toxic / non-toxic shares under the new names: recomputed per domain, group and model
    want = sc.groupby(["domain", "group", "model"])["toxicity_label"].apply(lambda s: (s == "toxic").mean())
    got = shares.set_index(["domain", "group", "model"])["prop_profane"]
    assert (got.sort_index() - want.sort_index()).abs().max() < 1e-12
    z = pd.read_csv(prof["profanity_profane_ztests"])
    assert len(z) and (z["count_a"] + z["count_b"]).sum() > 0


def test_an_all_zero_gender_chart_is_one_sentence(tmp_path, only_sections):
    only_sections("Gender polarity")
    sc = make_scores(n_per=5).to_pandas()
    labels = [c for c in sc.columns if c.startswith("gender_") and c.endswith("_label")]
    sc = sc.assign(**{c: "neutral" for c in labels})  # no text gendered: every male-minus-female share is 0 - 0
    run = tmp_path / "run"
    run.mkdir()
    write_table(pa.Table.from_pandas(sc, preserve_index=False), run / "scores.parquet", stage="scores")
    res = build_report(run, tmp_path / "rep", n_boot=20)
    sec = _section(res.html.read_text(), "gender")
    n = int((sc["domain"] == "profession").sum()) if (sc["domain"] == "profession").any() else len(sc)
    sentence = (
        "Male minus female share per profession (gender_wavg_label): 0 for every group and source, so no chart: "
        f"none of the {n:,} labelled texts is labelled male or female."
    )
    assert sentence in sec.replace("<code>", "").replace("</code>", "")
    assert "<img" not in sec and not any("male_minus_female" in str(f) for f in res.figures)
    assert "male_minus_female" in res.tables  # the table of zeros stays, for the record
    # one gendered text is enough for the chart to come back
    sc.loc[sc.index[sc["domain"] == "profession"][0] if (sc["domain"] == "profession").any() else sc.index[0], "gender_wavg_label"] = "male"
    write_table(pa.Table.from_pandas(sc, preserve_index=False), run / "scores.parquet", stage="scores")
    res = build_report(run, tmp_path / "rep2", n_boot=20)
    assert any("male_minus_female" in str(f) for f in res.figures)
