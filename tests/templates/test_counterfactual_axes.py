"""Counterfactual axes: the bundled word lists, user files that extend them, and their validation."""

from __future__ import annotations

import pytest

from biaskit.errors import BiaskitError
from biaskit.templates.counterfactual import data_dir, load_axis, names_entries


def test_gender_axis_terms_are_lower_cased_and_cover_pronouns_and_plural_nouns():
    terms = load_axis("gender").terms()
    for word in ("he", "she", "him", "her", "his", "hers", "himself", "herself", "grandfathers", "grandmothers", "mr", "ms", "mother-in-law"):
        assert word in terms
    assert all(t == t.lower() for t in terms)
    assert "grandparents" not in terms and "parent" not in terms  # neutral words are not a group of the axis


def test_gender_axis_lists_her_and_his_once_per_reading_with_the_role_of_each():
    readings = load_axis("gender").readings()
    her = [(g, e.forms["male"], e.roles.get("female")) for g, e in readings["her"]]
    assert her == [("female", "him", "object"), ("female", "his", "determiner")]
    his = [(g, e.forms["female"], e.roles.get("male")) for g, e in readings["his"]]
    assert his == [("male", "her", "determiner"), ("male", "hers", "standalone")]


def test_first_names_axis_equals_the_pairs_built_from_the_bundled_bbq_list():
    axis = load_axis("first_names")
    built = names_entries(data_dir("counterfactual", "bbq_vocabulary_proper_names.csv"))
    assert [e.forms for e in axis.entries] == built
    # 5 ethnicities x 10 first names per gender + 20 first_only names per gender (counted in the CSV)
    assert len(built) == 70
    assert built[0] == {"female": "Ebony", "male": "Jermaine"}  # first Black F row, first Black M row


def test_holistic_axis_makes_every_descriptor_of_the_axis_a_group():
    axis = load_axis("holistic:religion")
    assert len(axis.groups) == 39  # v1.0 religion/all lists 39 descriptors
    assert {"Buddhist", "Muslim", "atheist"} <= set(axis.groups)
    assert axis.terms() == {g.lower() for g in axis.groups}


def test_user_file_extends_a_bundled_axis_with_more_entries(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("extends: gender\nentries:\n  - {female: landlady, male: landlord}\n", encoding="utf-8")
    axis = load_axis(f)
    assert "landlady" in axis.terms() and "she" in axis.terms()
    assert axis.groups == ("female", "male")


@pytest.mark.parametrize(
    ("text", "code", "needle"),
    [
        ("groups: [a, b]\nentries:\n  - {a: x}\n", "E420", "no word for group"),
        ("groups: [a, b]\nentries:\n  - {a: x, b: y, role: {a: subject}}\n", "E420", "unknown role"),
        ("groups: [a]\nentries:\n  - {a: x}\n", "E420", "at least two"),
        ("groups: [a, b]\nentries: []\n", "E420", "non-empty"),
        ("groups: [a, b]\nwords: []\n", "E420", "unknown key"),
        ("groups: [a, b]\nentries:\n  - {a: x, b: on}\n", "E420", "must be text"),
    ],
)
def test_invalid_axis_file_is_a_coded_error_naming_the_problem(tmp_path, text, code, needle):
    f = tmp_path / "bad.yaml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(BiaskitError) as exc:
        load_axis(f)
    assert exc.value.code == code and needle in str(exc.value)


def test_unknown_axis_name_lists_the_bundled_axes():
    with pytest.raises(BiaskitError) as exc:
        load_axis("genderr")
    assert exc.value.code == "E421" and "gender" in exc.value.options
    with pytest.raises(BiaskitError) as exc:
        load_axis("holistic:religon")
    assert exc.value.code == "E421" and "religion" in exc.value.options
