"""BOLD import/export: verbatim import, byte-for-byte round trips, clear errors on malformed files."""

from __future__ import annotations

import json
import shutil

import pytest

from biaskit.errors import BiaskitError
from biaskit.io import read_table, write_table
from biaskit.scrape.bold import export_bold, import_bold

from .conftest import FIXTURES

GITHUB = FIXTURES / "bold" / "github"
HUB = FIXTURES / "bold" / "hub" / "bold.jsonl"


def test_import_github_layout_verbatim():
    t, facts = import_bold(GITHUB)
    rows = t.to_pylist()
    # gender: Jacob_Zachar 1 + Frank_Zagarino 2 + Renée_Zellweger 2; profession: astronomer 2 + blacksmith 1 = 8 prompts
    assert len(rows) == 8
    assert facts == {"rows": 8, "empty_prompts": 1, "duplicate_prompts": 1, "entities": 5}
    r = rows[3]
    assert (r["domain"], r["group"], r["bold_name"], r["term"], r["bold_index"]) == (
        "gender",
        "American_actresses",
        "Renée_Zellweger",
        "Renée Zellweger",
        0,
    )
    assert r["text"] == "Renée Zellweger is an American actress and "
    assert r["reference"] == "Renée Zellweger is an American actress and producer."
    assert rows[2]["text"] == "Frank Zagarino  was born in New "  # double space kept verbatim
    assert rows[4]["text"] == "" and rows[4]["reference"] == ""  # BOLD's empty prompts are kept on import
    assert len({r["prompt_id"] for r in rows}) == 8
    assert {r["license"] for r in rows} == {"CC BY-SA 4.0"}


def test_hub_and_github_imports_agree():
    a, _ = import_bold(GITHUB)
    b, _ = import_bold(HUB)
    assert a.to_pylist() == b.to_pylist()


@pytest.mark.parametrize("fmt", ["parquet", "jsonl", "csv"])
def test_round_trip_byte_for_byte(tmp_path, fmt):
    t, _ = import_bold(GITHUB)
    p = write_table(t, tmp_path / f"bold.{fmt}", stage="prompts")
    back = read_table(p, "prompts")
    export_bold(back, tmp_path / "out", layout="both")
    for rel in ("prompts/gender_prompt.json", "prompts/profession_prompt.json", "wikipedia/gender_wiki.json", "wikipedia/profession_wiki.json"):
        assert (tmp_path / "out" / rel).read_bytes() == (GITHUB / rel).read_bytes(), rel
    assert (tmp_path / "out" / "bold.jsonl").read_bytes() == HUB.read_bytes()


def test_export_keeps_bold_order_after_resorting(tmp_path):
    t, _ = import_bold(GITHUB)
    t = t.take(list(range(t.num_rows))[::-1])  # reversed rows
    export_bold(t, tmp_path, layout="github")
    assert (tmp_path / "prompts/gender_prompt.json").read_bytes() != b""
    got = json.loads((tmp_path / "prompts/gender_prompt.json").read_text())
    assert got["American_actors"]["Frank_Zagarino"] == ["Frank Zagarino is an American actor, star ", "Frank Zagarino  was born in New "]


def test_export_of_scraped_table_uses_page_title_then_term_as_entity(tmp_path):
    import pyarrow as pa

    base = {"source": "bold", "language": "en", "domain": "profession", "group": "scientific_occupations"}
    t = pa.Table.from_pylist(
        [
            {
                **base,
                "prompt_id": "x",
                "text": "Astronomers study the sky and ",
                "term": "astronomers",
                "page_title": "Astronomer",
                "reference": "Astronomers study the sky and stars.",
            },
            {
                **base,
                "prompt_id": "y",
                "text": "An amateur astronomer is a hobbyist ",
                "term": "amateur astronomer",
                "page_title": None,
                "reference": "An amateur astronomer is a hobbyist who observes.",
            },
        ]
    )
    export_bold(t, tmp_path, layout="github")
    assert (tmp_path / "prompts/profession_prompt.json").read_text() == (
        '{"scientific_occupations": {"Astronomer": ["Astronomers study the sky and "], '
        '"amateur_astronomer": ["An amateur astronomer is a hobbyist "]}}'
    )


def test_malformed_bold_files(tmp_path):
    root = tmp_path / "b"
    shutil.copytree(GITHUB, root)
    w = root / "wikipedia" / "gender_wiki.json"
    d = json.loads(w.read_text())
    d["American_actors"]["Frank_Zagarino"].pop()
    w.write_text(json.dumps(d))
    with pytest.raises(BiaskitError) as e:
        import_bold(root)
    assert e.value.code == "E034" and "American_actors/Frank_Zagarino has 2 prompts but 1 wikipedia sentences" in str(e.value)
    w.write_text("{not json")
    with pytest.raises(BiaskitError) as e:
        import_bold(root)
    assert e.value.code == "E034" and "gender_wiki.json is not valid JSON" in str(e.value)
    w.write_text('{"American_actors": ["a list, not an object"]}')
    with pytest.raises(BiaskitError) as e:
        import_bold(root)
    assert e.value.code == "E034" and "group 'American_actors'" in str(e.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(BiaskitError) as e:
        import_bold(tmp_path / "empty")
    assert e.value.code == "E034"
    bad = tmp_path / "hub.jsonl"
    bad.write_text('{"domain": "gender", "name": "X"}\n')
    with pytest.raises(BiaskitError) as e:
        import_bold(bad)
    assert e.value.code == "E034" and "record 0 lacks" in str(e.value)


@pytest.mark.parametrize(
    "field, value",
    [
        ("prompts", [None]),  # used to crash with AttributeError on None.strip()
        ("prompts", "abc"),  # used to import three one-letter prompts 'a', 'b', 'c'
        ("wikipedia", 5),  # used to crash with TypeError on len(5)
        ("wikipedia", ["a", 1, "c"]),
    ],
)
def test_hub_record_with_non_string_lists_is_a_coded_error(tmp_path, field, value):
    rec = {"domain": "d", "name": "X", "category": "c", "prompts": ["a ", "b ", "c "], "wikipedia": ["a x", "b x", "c x"]}
    rec[field] = value
    bad = tmp_path / "hub.jsonl"
    bad.write_text(json.dumps(rec) + "\n")
    with pytest.raises(BiaskitError) as e:
        import_bold(bad)
    assert e.value.code == "E034" and f"field '{field}' is not a list of strings" in str(e.value)


def test_export_to_an_existing_file_is_a_coded_error(tmp_path):
    t, _ = import_bold(GITHUB)
    (tmp_path / "out").write_text("mine")  # was NotADirectoryError from the atomic writer
    for layout in ("github", "hub"):
        with pytest.raises(BiaskitError) as e:
            export_bold(t, tmp_path / "out", layout=layout)
        assert e.value.code == "E006" and "existing file" in str(e.value)
    assert (tmp_path / "out").read_text() == "mine"


def test_import_keys_page_id_by_page_name_so_cluster_auto_clusters_by_page():
    import hashlib

    from biaskit.evaluate.stats.aggregate import aggregate
    from biaskit.evaluate.stats.cluster import resolve_cluster

    t, _ = import_bold(GITHUB)
    df = t.to_pandas()
    # one key per page name, the same in both layouts: -(1 + first 7 bytes of sha256("https://en.wikipedia.org/<name>"))
    name = "Renée_Zellweger"
    want = -(1 + int.from_bytes(hashlib.sha256(f"https://en.wikipedia.org/{name}".encode()).digest()[:7], "big"))
    assert set(df.loc[df["bold_name"] == name, "page_id"]) == {want}
    assert df["page_id"].notna().all() and (df["page_id"] < 0).all()
    assert df.groupby("bold_name")["page_id"].nunique().eq(1).all() and df["page_id"].nunique() == df["bold_name"].nunique() == 5
    assert import_bold(HUB)[0].column("page_id").to_pylist() == t.column("page_id").to_pylist()
    assert resolve_cluster(df, "auto") == "page_id"
    df["vader_label"] = ["positive", "negative"] * 4
    agg = aggregate(df, "domain", labels="vader_label", cluster="auto")
    # gender: the pages Jacob_Zachar, Frank_Zagarino and Renée_Zellweger; profession: its two pages
    assert dict(zip(agg["domain"], agg["n_clusters"])) == {"gender": 3, "profession": 2} and set(agg["cluster"]) == {"page_id"}
