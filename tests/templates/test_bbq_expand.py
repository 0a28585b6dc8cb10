"""`biaskit expand bbq`: BBQ rebuilt from its templates, with the published counts, seeded, and coded errors."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from biaskit.errors import BiaskitError
from biaskit.templates.bbq import expand_bbq
from biaskit.templates.bbq_data import CATEGORIES, PUBLISHED_COUNTS, bundled_dir, load_bbq

FIXTURES = Path(__file__).parents[1] / "fixtures" / "bbq"
KEY = ("category", "question_index", "context_condition", "question_polarity")


@cache
def full():
    return expand_bbq(seed=0).to_pylist()


def test_rebuilt_counts_equal_the_paper_for_every_category_and_58492_in_all():
    counts = Counter(r["category"] for r in full())
    # paper Table 1 / BBQ README: 3680 + 1556 + 5672 + 3080 + 1576 + 6880 + 11160 + 15960 + 1200 + 6864 + 864
    assert dict(counts) == PUBLISHED_COUNTS
    assert len(full()) == 58492
    assert set(counts) == set(CATEGORIES)


def test_rebuilt_counts_equal_the_published_files_per_question_condition_and_polarity():
    with (FIXTURES / "published_counts.csv").open(encoding="utf-8") as fh:
        published = {tuple(r[k] for k in KEY): int(r["n"]) for r in csv.DictReader(fh)}
    cats = {k[0] for k in published}
    assert cats == {"Age", "Disability_status", "Nationality", "Physical_appearance", "Religion", "Sexual_orientation"}
    rebuilt = Counter(tuple(str(r[k]) for k in KEY) for r in full() if r["category"] in cats)
    assert dict(rebuilt) == published
    assert sum(published.values()) == 11956  # 3680 + 1556 + 3080 + 1576 + 1200 + 864


def test_every_filled_pair_gives_the_four_conditions_with_the_unknown_answer_right_when_ambiguous():
    rows = [r for r in full() if r["category"] == "Religion"]
    for i in range(0, len(rows), 4):
        four = rows[i : i + 4]
        assert [(r["question_polarity"], r["context_condition"]) for r in four] == [
            ("neg", "ambig"),
            ("neg", "disambig"),
            ("nonneg", "ambig"),
            ("nonneg", "disambig"),
        ]
        info = json.loads(four[0]["answer_info"])
        groups = [info[f"ans{j}"][1] for j in range(3)]
        assert sorted(g == "unknown" for g in groups) == [False, False, True]
        unknown = groups.index("unknown")
        assert four[0]["label"] == four[2]["label"] == unknown
        assert four[1]["label"] != unknown and four[3]["label"] != unknown and four[1]["label"] != four[3]["label"]
        assert four[1]["context"].startswith(four[0]["context"])
        assert four[0]["target_loc"] != unknown


def test_same_seed_gives_the_same_table_and_another_seed_other_draws():
    a = expand_bbq(seed=3, categories=["Religion"]).to_pylist()
    b = expand_bbq(seed=3, categories=["Religion"]).to_pylist()
    c = expand_bbq(seed=4, categories=["Religion"]).to_pylist()
    assert a == b
    assert len(a) == len(c) == 1200 and [r["context"] for r in a] != [r["context"] for r in c]


def test_a_categorys_examples_do_not_depend_on_the_other_categories_expanded():
    alone = expand_bbq(seed=0, categories=["Sexual_orientation"]).to_pylist()
    assert alone == [r for r in full() if r["category"] == "Sexual_orientation"]


def test_articles_in_front_of_a_slot_follow_the_sound_of_the_word():
    ages = [r["context"] for r in full() if r["category"] == "Age"]
    assert not any(" a elderly" in c or " an young" in c for c in ages)
    assert any(" an elderly" in c or " an old" in c for c in ages)


def test_targeted_option_is_the_stereotyped_group_in_the_intersectional_categories():
    rows = [r for r in full() if r["category"] == "Race_x_gender" and r["label_type"] == "label"]
    for r in rows[:200]:
        info = json.loads(r["answer_info"])
        target = info[f"ans{r['target_loc']}"][1]  # e.g. "F-Black": the stereotyped gender and race
        assert target.split("-")[0] == r["stereotyped_var2"] and target.split("-", 1)[1] in json.loads(r["stereotyped_groups"])


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "templates"
    shutil.copytree(bundled_dir(), d)
    return d


def _edit(path: Path, q_id: str, column: str, value: str) -> None:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    fields = list(rows[0])
    for r in rows:
        if r["Q_id"] == q_id:
            r[column] = value
            break
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def test_unknown_slot_is_e410_naming_the_file_and_row(tmp_path):
    d = _copy(tmp_path)
    _edit(d / "new_templates - Age.csv", "2", "Ambiguous_Context", "I met a {{NAME1}} and a {{NAEM2}}.")
    with pytest.raises(BiaskitError) as e:
        load_bbq(d, ["Age"])
    assert e.value.code == "E410" and "new_templates - Age.csv row 4 (Q_id '2')" in str(e.value) and "NAEM2" in str(e.value)


def test_word_list_that_does_not_parse_is_e411_naming_the_row(tmp_path):
    d = _copy(tmp_path)
    _edit(d / "new_templates - Religion.csv", "3", "Lexical_diversity", "WORD1: [a, b]; WORD3: [c]")
    with pytest.raises(BiaskitError) as e:
        load_bbq(d, ["Religion"])
    assert e.value.code == "E411" and "Q_id '3'" in str(e.value) and "WORD3" in str(e.value)


def test_missing_vocabulary_category_is_e412(tmp_path):
    d = _copy(tmp_path)
    with (d / "vocabulary.csv").open(encoding="utf-8-sig", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Category"] != "Religion"]
    with (d / "vocabulary.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(BiaskitError) as e:
        load_bbq(d, ["Religion"])
    assert e.value.code == "E412" and "'Religion'" in str(e.value) and "row 2" in str(e.value)


def test_lists_the_generator_reads_in_part_are_noted_by_default_and_refused_when_strict():
    data = load_bbq(categories=["Disability_status"])
    assert len(data.notes) == 3 and all("Disability_status.csv" in n for n in data.notes)
    assert any("Q_id '19'" in n and "NAME2 left empty" in n for n in data.notes)
    with pytest.raises(BiaskitError) as e:
        load_bbq(categories=["Disability_status"], strict=True)
    assert e.value.code == "E411" and "Q_id '4'" in str(e.value)


def test_unknown_category_is_e414_listing_the_categories():
    with pytest.raises(BiaskitError) as e:
        load_bbq(categories=["Agee"])
    assert e.value.code == "E414" and "Race_x_SES" in str(e.value)


def test_folder_without_the_vocabularies_is_e413(tmp_path):
    (tmp_path / "new_templates - Age.csv").write_text("Q_id\n", encoding="utf-8")
    with pytest.raises(BiaskitError) as e:
        load_bbq(tmp_path, ["Age"])
    assert e.value.code == "E413" and "vocabulary.csv" in str(e.value)
