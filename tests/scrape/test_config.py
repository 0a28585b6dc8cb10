"""Domain configs: validation errors name the value and the fix; seeds resolve to pages."""

from __future__ import annotations

import pytest

from biaskit.errors import BiaskitError
from biaskit.scrape.config import Assignment, load_config, parse_config, resolve_assignments, snake, title_term


def test_shipped_configs_load():
    bold = load_config("bold")
    assert sorted(bold.domains) == ["gender", "political_ideology", "profession", "race", "religious_ideology"]
    seeds = {v for d in bold.domains.values() for g in d.groups.values() for s in g.seeds for k, v in s.items() if k != "match"}
    assert bold.domains["profession"].seeds == [{"lists_of": "Lists_of_occupations"}]
    # every seed page BOLD lists (besides Lists_of_occupations above)
    assert seeds == {
        "List_of_American_film_actresses",
        "Category:American_male_film_actors",
        "List_of_African_Americans",
        "List_of_Asian_Americans",
        "List_of_Hispanic_and_Latino_Americans",
        "List_of_English_Americans",
        "List_of_Italian_Americans",
        "List_of_Irish_Americans",
        "List_of_German_Americans",
        "List_of_Polish_Americans",
        "Major_religious_groups",
        "List_of_political_ideologies",
    }
    assert len(bold.domains["religious_ideology"].groups) == 7 and len(bold.domains["political_ideology"].groups) == 12
    race = bold.domains["race"].groups
    assert sorted(race) == ["African_Americans", "Asian_Americans", "European_Americans", "Hispanic_and_Latino_Americans"]
    assert len(race["European_Americans"].seeds) == 5
    assert bold.domains["gender"].groups["American_actors"].seeds == [{"category": "Category:American_male_film_actors"}]
    demo = load_config("demo")
    assert demo.rule.window == 8 and demo.rule.n_first == 5 and demo.rule.min_words == 6


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"domains": {}}, "`domains` must be a non-empty mapping"),
        ({"domains": {"d": {"groups": {"g": {"pages": ["A", "A"]}}}}}, "lists an entry twice"),
        ({"domains": {"d": {"groups": {"g": {"pages": ["A "]}}}}}, "surrounding whitespace"),
        ({"domains": {"d": {"groups": {"g": {"terms": ["a"]}}}}}, "a group needs pages or seeds"),
        ({"domains": {"d": {"groups": {"g": {"seeds": [{"link": "X"}]}}}}}, "invalid seed"),
        ({"domains": {"d": {"groups": {"g": {"pages": ["A"], "term": "a"}}}}}, "unknown key(s)"),
        ({"domains": {"d": {"groups": {"g": ["A"]}}}, "splitter": "nltk"}, "unknown splitter"),
        ({"domains": {"d": {"groups": {"g": ["A"]}}}, "rule": {"window": -1}}, "window must be a positive integer"),
        ({"domains": {"d": {"groups": {"g": ["A"]}}}, "language": "English"}, "BCP-47"),
    ],
)
def test_invalid_configs(data, needle):
    with pytest.raises(BiaskitError) as e:
        parse_config(data, source="t.yaml")
    assert e.value.code == "E021" and needle in str(e.value)


def test_missing_config_file():
    with pytest.raises(BiaskitError) as e:
        load_config("no/such/file.yaml")
    assert e.value.code == "E021" and "'bold'" in str(e.value)


def test_resolve_assignments_with_seeds_and_caps():
    cfg = parse_config(
        {
            "domains": {
                "profession": {"term_case": "lower", "seeds": [{"lists_of": "Lists of occupations"}]},
                "gender": {
                    "groups": {
                        "actresses": {"seeds": [{"links": "List of actresses"}], "max_pages": 2},
                        "b_names": {"seeds": [{"links": "List of actresses", "match": "^B"}]},
                        "actors": {"seeds": [{"category": "Category:Actors"}], "pages": ["Extra Person (actor)"]},
                    }
                },
            }
        }
    )

    def link_fn(page):
        if page not in links:  # what the API client does for a missing page
            raise BiaskitError("E033", "seed page not found on the wiki", value=page)
        return links[page]

    links = {
        "Lists of occupations": ["List of scientific occupations", "Astronomy", "List of dance occupations", "List of gone occupations"],
        "List of scientific occupations": ["Astronomer", "Chemist"],
        "List of dance occupations": ["Ballet dancer"],
        "List of actresses": ["Ann A", "Bea B", "Cy C"],
    }
    cats = {"Category:Actors": ["Dan D", "Extra Person (actor)"]}
    got, per_group = resolve_assignments(cfg, links=link_fn, category=cats.__getitem__)
    # a discovered list page that no longer exists is skipped (0 pages); a seed the user named must exist
    assert per_group == {
        "profession/scientific_occupations": 2,
        "profession/dance_occupations": 1,
        "profession/gone_occupations": 0,
        "gender/actresses": 2,
        "gender/b_names": 1,
        "gender/actors": 2,
    }
    assert got["Astronomer"] == [Assignment("profession", "scientific_occupations", ("astronomer",))]
    assert got["Ballet dancer"] == [Assignment("profession", "dance_occupations", ("ballet dancer",))]
    assert "Cy C" not in got  # max_pages 2
    assert got["Extra Person (actor)"] == [Assignment("gender", "actors", ("Extra Person",))]
    with pytest.raises(BiaskitError) as e:
        resolve_assignments(cfg)
    assert e.value.code == "E021" and "cannot be resolved" in str(e.value)
    cfg2 = parse_config({"domains": {"d": {"groups": {"g": {"seeds": [{"links": "List of gone occupations"}]}}}}})
    with pytest.raises(BiaskitError) as e:
        resolve_assignments(cfg2, links=link_fn)
    assert e.value.code == "E033"
    from biaskit.scrape.config import cap_pages

    capped, per_group = resolve_assignments(cap_pages(cfg, 1), links=link_fn, category=cats.__getitem__)
    assert per_group["profession/scientific_occupations"] == 1 and per_group["gender/actresses"] == 1


def test_title_helpers():
    assert title_term("Apollo_(band)") == "Apollo"
    assert title_term("Astronomer", "lower") == "astronomer"
    assert snake("List of scientific occupations") == "scientific_occupations"
    assert snake("Lists_of_occupations") == "occupations"


def test_rule_preset_in_config_and_from_the_command_line():
    data = {"rule": {"preset": "bold", "n_first": 4}, "domains": {"d": {"groups": {"g": {"pages": ["A"]}}}}}
    cfg = parse_config(data)
    assert (cfg.rule.preset, cfg.rule.match, cfg.rule.within, cfg.rule.n_first, cfg.rule.min_words) == ("bold", "substring", "prompt", 4, 0)
    assert cfg.settings()["rule"]["preset"] == "bold"  # recorded in manifests and in the resume state
    # --preset replaces the config's rule, the other options apply on top
    cfg = load_config({"rule": {"window": 10}, "domains": data["domains"]}, rule_overrides={"preset": "bold", "dedupe": "domain"})
    assert (cfg.rule.preset, cfg.rule.window, cfg.rule.within, cfg.rule.dedupe) == ("bold", 8, "prompt", "domain")
    # --window on a config with the bold rule: the window counts
    cfg = load_config(data, rule_overrides={"window": 9})
    assert (cfg.rule.preset, cfg.rule.within, cfg.rule.window, cfg.rule.n_first) == ("bold", "window", 9, 4)
    with pytest.raises(BiaskitError) as e:
        parse_config({"rule": {"preset": "gpt"}, "domains": data["domains"]})
    assert e.value.code == "E021" and "'gpt'" in str(e.value)
