"""Completion validity: Hunspell dictionaries (a four-word test dictionary and Debian's cs/pl/sk/en-us),
per-group shares with Wilson intervals and a chi-square test between subject categories."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import score_table

TEST_DIC = str(Path(__file__).parent / "data" / "hunspell" / "xx_TEST.dic")
REAL = Path("/usr/share/hunspell")


def _valid(texts, **params):
    t = pa.table({"token": texts})
    out = score_table(t, ["validity"], text_column="token", params={"validity": {"language": "xx", "dictionary": TEST_DIC, **params}})
    return out.to_pylist()


def test_words_are_checked_with_the_dictionary_affix_and_case_rules():
    rows = _valid(
        [
            "teacher",
            "teachers",
            "Teachers",
            "teacherz",
            "Prague",
            "prague",
            "učitelka",
            "nurses.",
            "##s",
            ".",
            "1990",
            "teacher nurse",
            "teacher nursez",
        ]
    )
    got = [(r["validity_valid"], r["validity_unknown"]) for r in rows]
    assert got == [
        (True, None),
        (True, None),  # stem, stem + suffix rule S
        (True, None),  # a capitalised form of a lowercase word (Hunspell's case rule)
        (False, "teacherz"),
        (True, None),
        (False, "prague"),  # a proper noun must keep its capital
        (True, None),  # UTF-8 words
        (True, None),  # surrounding punctuation is stripped
        (False, "##s"),
        (False, "."),
        (False, "1990"),  # a subword piece, punctuation or a number is not a word
        (True, None),
        (False, "nursez"),  # several words: valid only when every word is
    ]
    assert all(r["validity_error"] is None for r in rows)
    assert _valid(["prague"], ignore_case=True)[0]["validity_valid"] is True


def test_language_per_row_from_the_language_column(tmp_path):
    d = tmp_path / "dicts"
    d.mkdir()
    for ext in ("aff", "dic"):
        (d / f"xx_TEST.{ext}").write_bytes(Path(TEST_DIC).with_suffix(f".{ext}").read_bytes())
    t = pa.table({"token": ["nurses", "nurses", "nurses"], "language": ["xx", None, "xx_TEST"]})
    out = score_table(t, ["validity"], text_column="token", params={"validity": {"dictionary_dir": str(d)}}).to_pylist()
    assert [r["validity_valid"] for r in out] == [True, None, True]  # "xx" finds xx_*.dic; "xx_TEST" by name
    assert out[1]["validity_error"] == "no language in column 'language'"


def test_a_missing_dictionary_is_e010_naming_the_path_and_the_fix(tmp_path):
    t = pa.table({"token": ["slovo"], "language": ["cs"]})
    with pytest.raises(BiaskitError) as ei:
        score_table(t, ["validity"], text_column="token", params={"validity": {"dictionary_dir": str(tmp_path)}})
    msg = str(ei.value)
    assert ei.value.code == "E010" and str(tmp_path / "cs_CZ.dic") in msg and "hunspell-cs" in msg
    assert "scripts/services/hunspell.sh" in msg
    with pytest.raises(BiaskitError) as ei:
        score_table(t, ["validity"], text_column="token", params={"validity": {"language": "cs", "dictionary": str(tmp_path / "no.dic")}})
    assert ei.value.code == "E010" and "no.aff" in str(ei.value)
    with pytest.raises(BiaskitError) as ei:  # an explicit dictionary needs a fixed language
        score_table(t, ["validity"], text_column="token", params={"validity": {"dictionary": TEST_DIC}})
    assert ei.value.code == "E070"


@pytest.mark.skipif(not (REAL / "cs_CZ.dic").is_file(), reason="Debian hunspell dictionaries not installed (scripts/services/hunspell.sh)")
def test_real_debian_dictionaries_for_the_study_languages():
    words = [
        ("en", "teachers", True),
        ("en", "teacherz", False),
        ("cs", "učitelka", True),
        ("cs", "kuchařka", True),
        ("cs", "učitelkaa", False),
        ("pl", "nauczycielka", True),
        ("pl", "dzieci", True),
        ("pl", "nauczycielkx", False),
        ("sk", "učiteľka", True),
        ("sk", "syn", True),
        ("sk", "učiteľkax", False),
    ]
    t = pa.table({"token": [w for _, w, _ in words], "language": [lang for lang, _, _ in words]})
    out = score_table(t, ["validity"], text_column="token").to_pylist()
    assert [r["validity_valid"] for r in out] == [v for _, _, v in words]


def _fillins():
    # model m, cs: female 2 of 4 valid, male 4 of 4 valid ; model m, pl: female 0 of 3, male 1 of 3 ; one failed row
    rows = []
    for lang, cat, vals in (
        ("cs", "female", [True, True, False, False]),
        ("cs", "male", [True, True, True, True]),
        ("pl", "female", [False, False, False]),
        ("pl", "male", [True, False, False]),
    ):
        for v in vals:
            rows.append({"model": "m", "language": lang, "subject_category": cat, "validity_valid": v, "validity_error": None})
    rows.append({"model": "m", "language": "pl", "subject_category": "male", "validity_valid": None, "validity_error": "no language"})
    return pa.Table.from_pylist(rows)


def test_validity_summary_counts_and_wilson_intervals():
    from statsmodels.stats.proportion import proportion_confint

    from biaskit.evaluate.stats import validity_summary

    s = validity_summary(_fillins()).set_index(["language", "subject_category"])
    assert s.loc[("cs", "female"), ["n", "n_scored", "valid"]].tolist() == [4, 4, 2]
    assert s.loc[("cs", "female"), "share_valid"] == 0.5
    assert s.loc[("pl", "male"), ["n", "n_scored", "n_null", "n_error", "valid"]].tolist() == [4, 3, 1, 1, 1]
    for key, (k, n) in {("cs", "female"): (2, 4), ("cs", "male"): (4, 4), ("pl", "female"): (0, 3), ("pl", "male"): (1, 3)}.items():
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert s.loc[key, "ci_low"] == pytest.approx(lo, abs=1e-12) and s.loc[key, "ci_high"] == pytest.approx(hi, abs=1e-12)
    assert s.loc[("pl", "female"), "ci_high"] > 0.4  # 0 of 3 still has a real upper bound


def test_validity_tests_equal_scipy_chi_square_per_language():
    from scipy.stats import chi2_contingency

    from biaskit.evaluate.stats import validity_tests

    r = validity_tests(_fillins()).set_index("language")
    # cs: female [valid 2, not 2], male [4, 0] ; pl: female [0, 3], male [1, 2]
    for lang, m in {"cs": [[2, 2], [4, 0]], "pl": [[0, 3], [1, 2]]}.items():
        ref = chi2_contingency(m, correction=False)
        assert r.loc[lang, "chi2"] == pytest.approx(ref.statistic, abs=1e-12)
        assert r.loc[lang, "p_value"] == pytest.approx(ref.pvalue, abs=1e-12)
        assert r.loc[lang, "groups"] == 2 and r.loc[lang, "dof"] == 1
    # cs by hand: expected 3/1 in each row; chi2 = 2 * ((2-3)^2/3 + (2-1)^2/1) = 8/3
    assert r.loc["cs", "chi2"] == pytest.approx(8 / 3, abs=1e-12)
    # Holm over the two tests: the smaller p doubled, the larger max(its p, that)
    ps = sorted(r["p_value"])
    assert sorted(r["p_holm"]) == pytest.approx([min(1, 2 * ps[0]), min(1, max(2 * ps[0], ps[1]))], abs=1e-12)


def test_stats_validity_command(tmp_path):
    from biaskit.cli import app
    from biaskit.io import write_table

    src = tmp_path / "valid.parquet"
    write_table(_fillins(), src)
    r = CliRunner().invoke(app, ["stats", "validity", str(src), "--out", str(tmp_path / "s.csv"), "--tests-out", str(tmp_path / "t.csv")])
    assert r.exit_code == 0, r.output
    import pandas as pd

    s = pd.read_csv(tmp_path / "s.csv")
    assert list(s.columns[:3]) == ["model", "language", "subject_category"] and s["valid"].tolist() == [2, 4, 0, 1]
    t = pd.read_csv(tmp_path / "t.csv")
    assert t["language"].tolist() == ["cs", "pl"] and t["chi2"].iloc[0] == pytest.approx(8 / 3)
    r = CliRunner().invoke(app, ["stats", "validity", str(src), "--ci", "normal"])
    assert r.exit_code == 1 and "E080" in r.output


def test_report_has_a_validity_section(tmp_path):
    from biaskit.evaluate.report import build_report
    from biaskit.io import write_table

    run = tmp_path / "run"
    run.mkdir()
    write_table(_fillins(), run / "fillins_valid.parquet")
    res = build_report(run, tmp_path / "rep", n_boot=10)
    assert "validity" in res.sections
    assert {"validity_shares", "validity_tests"} <= set(res.tables)
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "Completion validity" in md and "Wilson" in md
