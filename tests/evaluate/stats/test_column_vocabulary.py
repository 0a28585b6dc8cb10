"""Every statistics table names the same quantity the same way (src/biaskit/evaluate/stats/columns.py,
docs/schemas.md "Statistics tables: one column vocabulary"): each command and table runs on a tiny input and its
columns use the vocabulary, never a retired name."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.evaluate.stats import columns as voc
from biaskit.schema import AGREEMENT

LABELS = ["negative", "neutral", "positive"]
#: names the vocabulary retired, and the report's old model-vs-Wikipedia names
RETIRED = set(voc.RETIRED) | {"model_minus_wikipedia", "baseline"}


def _check(cols, where: str) -> None:
    cols = [str(c) for c in cols]
    assert not RETIRED & set(cols), (where, sorted(RETIRED & set(cols)))
    assert "error" not in cols, (where, "a statistical reason is `reason`")
    if voc.GROUP_B in cols:  # a pairwise row names both groups as group_a / group_b
        assert voc.GROUP_A in cols, (where, cols)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A scored table (3 groups x 2 sources, pages, a human label on half the rows) and a validation round."""
    d = tmp_path_factory.mktemp("vocab")
    rng = np.random.default_rng(3)
    rows = []
    for i in range(90):
        truth = LABELS[int(rng.integers(3))]
        rows.append(
            {
                "prompt_id": f"p{i}",
                "domain": "profession",
                "group": "abc"[i % 3],
                "model": "m" if i % 2 else "wikipedia",
                "page_id": f"pg{i % 9}",
                "vader_label": truth if rng.random() < 0.7 else LABELS[int(rng.integers(3))],
                "vader_compound": float(rng.normal()),
                "human": truth if i % 2 else None,
            }
        )
    pq.write_table(pa.Table.from_pylist(rows), d / "scores.parquet")
    samples = [
        {"sample_id": f"s{i}", "round": "r1", "task_type": "sentiment", "text": "x", "group": r["group"], "is_gold": False}
        | {"vader_label": r["vader_label"], "vader_compound": r["vader_compound"]}
        for i, r in enumerate(rows)
    ]
    truth = {f"s{i}": r["human"] or r["vader_label"] for i, r in enumerate(rows)}
    ann = [{"sample_id": s, "round": "r1", "annotator": w, "label": t, "task_type": "sentiment"} for s, t in truth.items() for w in "xyz"]
    pq.write_table(pa.Table.from_pylist(samples), d / "samples.parquet")
    pq.write_table(pa.Table.from_pylist(ann), d / "ann.parquet")
    return d


def _run(*args) -> None:
    res = CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    "argv",
    [
        ["stats", "ztest", "{d}/scores.parquet", "--within", "domain,model"],
        ["stats", "ztest", "{d}/scores.parquet", "--correction", "bh", "--cluster", "none"],
        ["stats", "family", "{d}/scores.parquet", "--kind", "group-gap"],
        ["stats", "family", "{d}/scores.parquet", "--kind", "model-vs-wikipedia"],
        ["stats", "aggregate", "{d}/scores.parquet", "--labels", "vader_label", "--means", "vader_compound", "--n-boot", "20"],
        ["stats", "aggregate", "{d}/scores.parquet", "--labels", "vader_label", "--cluster", "none", "--prop-ci", "bootstrap"],
        ["stats", "ppi", "{d}/scores.parquet", "--metric-column", "vader_label", "--human-column", "human", "--label", "negative"],
    ],
    ids=["ztest", "ztest-bh", "family-gap", "family-wiki", "aggregate-clustered", "aggregate-bootstrap", "ppi"],
)
def test_stats_commands_write_only_the_vocabulary(tiny, tmp_path, argv):
    out = tmp_path / "t.csv"
    _run(*[a.format(d=tiny) for a in argv], "--out", out)
    t = pd.read_csv(out)
    _check(t.columns, argv[1])
    assert {voc.CI_LOW, voc.CI_HIGH, voc.METHOD} <= set(t.columns)
    if argv[1] in ("ztest", "family"):
        assert {voc.GROUP_A, voc.GROUP_B, voc.DIFF, voc.P_VALUE, voc.REASON} <= set(t.columns)
        assert voc.P_BH in t.columns if "bh" in argv else {voc.P_HOLM, voc.SIGNIFICANT_HOLM} <= set(t.columns)
    if argv[1] == "family":
        assert {voc.FAMILY, voc.FAMILY_SIZE} <= set(t.columns)
    if argv[1] in ("aggregate", "ppi"):
        assert voc.ESTIMATE in t.columns
    if argv[1] == "ppi":
        # per-group rows name their group in `group`, pairwise (gap_*) rows theirs in group_a / group_b
        gaps = t[t["measure"].str.startswith("gap_")]
        assert gaps["group"].isna().all() and gaps[voc.GROUP_A].notna().all() and gaps[voc.GROUP_B].notna().all()
        shares = t[t["measure"].str.startswith("share_")]
        assert shares["group"].notna().all() and shares[voc.GROUP_A].isna().all()


def test_annotate_validate_by_group_writes_only_the_vocabulary(tiny, tmp_path):
    out = tmp_path / "val.parquet"
    _run(
        *("annotate", "validate", tiny / "ann.parquet", "--samples", tiny / "samples.parquet", "--metric", "vader", "--by", "group"),
        *("--bootstrap", "20", "--cv-folds", "0", "--out", out, "--ledger", tmp_path / "ledger.jsonl"),
    )
    t = pq.read_table(out).to_pandas()
    _check(t.columns, "annotate validate --by")
    per_group = t[t["measure"].str.startswith("group_")]
    pairs = t[t["measure"].str.startswith(("diff_", "ratio_"))]
    # the per-group rows carry their group; the pairwise rows group_a and group_b, the raw and the Holm p, the family
    assert sorted(set(per_group["group"])) == ["a", "b", "c"] and per_group[voc.GROUP_A].isna().all()
    assert pairs["group"].isna().all() and set(zip(pairs[voc.GROUP_A], pairs[voc.GROUP_B])) == {("a", "b"), ("a", "c"), ("b", "c")}
    tested = pairs[pairs[voc.P_VALUE].notna()]
    assert len(tested) and tested[voc.P_HOLM].notna().all() and (tested[voc.P_HOLM] >= tested[voc.P_VALUE]).all()
    assert tested[voc.FAMILY].str.startswith("metric fairness, ").all()
    assert t.loc[t["measure"] == "accuracy", voc.METHOD].tolist() == ["wilson"]


def test_the_agreement_stage_spells_the_vocabulary():
    names = [c.name for c in AGREEMENT.columns]
    _check(names, "agreement stage")
    want = (voc.ESTIMATE, voc.CI_LOW, voc.CI_HIGH, voc.METHOD, voc.REASON, voc.P_VALUE, voc.P_HOLM, voc.GROUP, voc.GROUP_A, voc.GROUP_B)
    assert set(want + (voc.FAMILY, voc.FAMILY_SIZE)) <= set(names)


def test_the_reports_test_tables_and_headline_csv_use_only_the_vocabulary(tiny, tmp_path):
    from biaskit.evaluate.report.build import build_report

    run = tmp_path / "run"
    run.mkdir()
    (run / "scores.parquet").write_bytes((tiny / "scores.parquet").read_bytes())
    _run(
        *("annotate", "validate", tiny / "ann.parquet", "--samples", tiny / "samples.parquet", "--metric", "vader", "--by", "group"),
        *("--bootstrap", "0", "--cv-folds", "0", "--no-calibrate", "--out", run / "validation.parquet", "--ledger", tmp_path / "l.jsonl"),
    )
    res = build_report(run, tmp_path / "report", n_boot=20)
    csvs = sorted((tmp_path / "report" / "tables").glob("*.csv"))
    names = {p.stem for p in csvs}
    # the group-gap z-tests, the model-vs-Wikipedia tests, the fairness tables and the headline are among them
    assert {"headline", "fairness_by_group", "fairness_pairs"} <= names, names
    assert any(n.endswith("_ztests") for n in names) and any(n.endswith("_vs_wikipedia") for n in names), names
    for p in csvs:
        _check(pd.read_csv(p).columns, p.name)
    # the per-group validity table names each row's group; the between-groups table both groups
    by_group = pd.read_csv(tmp_path / "report" / "tables" / "fairness_by_group.csv")
    assert sorted(set(by_group["group"])) == ["a", "b", "c"]
    pairs = pd.read_csv(tmp_path / "report" / "tables" / "fairness_pairs.csv")
    assert set(zip(pairs[voc.GROUP_A], pairs[voc.GROUP_B])) == {("a", "b"), ("a", "c"), ("b", "c")}
    head = pd.read_csv(tmp_path / "report" / "tables" / "headline.csv")
    assert {voc.ESTIMATE, voc.CI_LOW, voc.CI_HIGH, voc.P_HOLM, voc.FAMILY, voc.FAMILY_SIZE} <= set(head.columns)
    assert res.sections


def test_the_other_statistics_tables_use_the_vocabulary_too():
    from biaskit.evaluate.stats import class_proportion_differences, validity_tests
    from biaskit.evaluate.stats.pairs import pair_stats

    rng = np.random.default_rng(0)
    pairs = pd.DataFrame(
        {"pair_id": np.repeat([f"p{i}" for i in range(12)], 2), "variant": ["more", "less"] * 12, "bias_type": np.repeat(["x", "y"], 12)}
    ).assign(s=rng.normal(size=24))
    ps = pair_stats(pairs, "s")
    _check(ps.columns, "stats pairs")
    assert {voc.ESTIMATE, voc.METHOD, voc.P_VALUE, voc.P_HOLM, voc.FAMILY_SIZE} <= set(ps.columns)
    fills = pd.DataFrame({"subject_category": ["a", "b"] * 10, "model": "m", "validity_valid": rng.random(20) < 0.5})
    for correction, col in (("holm", voc.P_HOLM), ("bh", voc.P_BH)):
        v = validity_tests(fills, correction=correction)
        _check(v.columns, "stats validity")
        assert col in v.columns
    assert voc.P_HOLM not in validity_tests(fills, correction="none").columns  # no correction: no corrected p
    norms = pd.DataFrame({"group": ["a", "b"] * 10, "norms_valence_class": rng.choice(["low", "high"], 20)})
    d = class_proportion_differences(norms, voc.GroupPair("a", "b"), columns=["norms_valence_class"])
    _check(d.columns, "class differences")
    assert {voc.GROUP_A, voc.GROUP_B, voc.DIFF, voc.P_VALUE, voc.P_HOLM} <= set(d.columns)


def test_a_validation_table_written_before_the_vocabulary_is_read_under_its_names():
    old = pd.DataFrame(
        [
            {"round": "r1", "measure": "spearman_rho", "value": 0.4, "p_value": 0.01, "p_value_raw": None, "ci_method": "percentile bootstrap"},
            {"round": "r1", "measure": "group_accuracy", "value": 0.8, "group": "a", "group_b": None, "ci_method": "wilson"},
            {"round": "r1", "measure": "diff_accuracy", "value": 0.2, "group": "a", "group_b": "b", "p_value": 0.03, "p_value_raw": 0.01},
            {"round": "r1", "measure": "precision_neutral", "value": None, "error": "the metric never predicted 'neutral'"},
        ]
    )
    new = voc.upgrade_agreement_table(old)
    _check(new.columns, "upgraded validation table")
    rows = {r["measure"]: r for r in new.to_dict("records")}
    assert rows["spearman_rho"]["p_value"] == 0.01 and pd.isna(rows["spearman_rho"]["p_holm"])  # a raw p stays raw
    assert (rows["diff_accuracy"]["p_value"], rows["diff_accuracy"]["p_holm"]) == (0.01, 0.03)  # raw, then Holm
    assert (rows["diff_accuracy"]["group_a"], rows["diff_accuracy"]["group_b"]) == ("a", "b") and pd.isna(rows["diff_accuracy"]["group"])
    assert rows["group_accuracy"]["group"] == "a" and pd.isna(rows["group_accuracy"]["group_a"])
    assert rows["precision_neutral"]["reason"] == "the metric never predicted 'neutral'" and rows["group_accuracy"]["method"] == "wilson"
    assert voc.upgrade_agreement_table(new) is new  # a table in the vocabulary is left as it is
