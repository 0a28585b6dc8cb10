"""The round ledger: folded history, no secrets, clear error on a damaged file."""

import pytest

from biaskit.annotate import ledger as led
from biaskit.annotate.labelstudio import LabelStudio, public_url
from biaskit.errors import BiaskitError


def test_history_folds_events_per_round(tmp_path):
    p = tmp_path / "l.jsonl"
    led.record("sample", "r1", p, task_type="sentiment", samples=100, gold=5, samples_path="r1.parquet", seed=0)
    led.record("push", "r1", p, url="http://ls:8080", title="biaskit r1 (sentiment)", total=105, annotators=3)
    led.record("sample", "r2", p, task_type="regard", samples=50, gold=0)
    led.record("pull", "r1", p, kept=310, dropped={"duplicate_annotation": 2}, annotators=["a", "b", "c"], items=105, platform="label-studio")
    led.record("agreement", "r1", p, fleiss_kappa=0.61, krippendorff_alpha_nominal=0.6, careless=["c"])
    led.record("validate", "r1", p, metrics={"vader": {"accuracy": 0.7, "spearman_rho": 0.55}})
    h = led.history(p)
    assert [r["round"] for r in h] == ["r1", "r2"]
    r1 = h[0]
    assert r1["samples"] == 100 and r1["gold"] == 5 and r1["pushed"] == 105 and r1["annotators_per_task"] == 3
    assert r1["annotations"] == 310 and r1["dropped"] == {"duplicate_annotation": 2} and r1["careless"] == ["c"]
    assert r1["fleiss_kappa"] == 0.61 and r1["vader.accuracy"] == 0.7 and r1["events"] == 5
    assert h[1]["task_type"] == "regard"


def test_ledger_never_stores_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "sekret-token-42424242")
    p = tmp_path / "l.jsonl"
    led.record("push", "r1", p, url="http://x", note="token sekret-token-42424242 here", api_key="sekret-token-42424242")
    text = p.read_text()
    assert "sekret-token-42424242" not in text and "api_key" not in text


def test_damaged_ledger_is_a_coded_error(tmp_path):
    p = tmp_path / "l.jsonl"
    p.write_text('{"round": "r1", "at": "x", "event": "sample"}\nnot json\n')
    with pytest.raises(BiaskitError) as e:
        led.history(p)
    assert e.value.code == "E092" and "line 2" in str(e.value)


@pytest.mark.parametrize("line", ['{"sample_id": "s1", "round": "r1"}', "[1, 2]", '"text"'])
def test_a_table_passed_as_ledger_is_a_coded_error_not_a_traceback(tmp_path, line):
    # `biaskit annotate rounds --ledger annotations.jsonl` raised KeyError 'at' / TypeError from history()
    p = tmp_path / "annotations.jsonl"
    p.write_text(line + "\n")
    with pytest.raises(BiaskitError) as e:
        led.history(p)
    assert e.value.code == "E092" and "line 1" in str(e.value) and "fix:" in str(e.value)


def test_urls_lose_credentials_and_missing_token_is_clear(monkeypatch):
    assert public_url("http://user:pw@host:8080/ls/") == "http://host:8080/ls/"
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    with pytest.raises(BiaskitError) as e:
        LabelStudio("http://localhost:8080", None)
    assert e.value.code == "E090" and "LABEL_STUDIO_API_KEY" in str(e.value)
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    with pytest.raises(BiaskitError) as e:
        LabelStudio(None, "tok-123456")
    assert "--url" in str(e.value)


def test_earlier_items_are_the_exclude_files_and_the_same_pools_earlier_rounds(tmp_path):
    """Without the CLI: ids of --exclude tables plus the ledger's other rounds drawn from the same pool, not this
    round's own entry and not a round of another pool."""
    from biaskit.io import write_table

    p = tmp_path / "l.jsonl"
    pool, other_pool = tmp_path / "scores.parquet", tmp_path / "other.parquet"
    for name, ids in (("r1", ["a", "b"]), ("r2", ["c"]), ("x1", ["z"]), ("extra", ["e"])):
        write_table({"sample_id": ids, "round": [name] * len(ids), "task_type": ["sentiment"] * len(ids), "text": ids}, tmp_path / f"{name}.parquet")
    for name, src in (("r1", pool), ("r2", pool), ("x1", other_pool)):
        sp = tmp_path / f"{name}.parquet"
        led.record("sample", name, p, samples_path=str(sp), project=led.project_of(src), samples_sha256=led.sample_fingerprint(led.read_table(sp)))
    excl, used = led.earlier_items([tmp_path / "extra.parquet"], p, round_="r2", pool=pool)
    assert excl == {"e", "a", "b"}
    assert used == [str(tmp_path / "extra.parquet"), str(tmp_path / "r1.parquet")]
    assert led.earlier_items([], p, round_="r2", pool=pool, previous=False) == (set(), [])


def test_record_validation_keeps_each_metrics_figures_and_group_ci_widths(tmp_path):
    """The ledger entry `annotate validate` and the demo write: round from the tables, figures rounded to 4 places,
    the group CI widths (hi - lo) only with a group column."""
    from types import SimpleNamespace

    import pyarrow as pa

    def table(rows):
        base = {"round": "r3", "measure": None, "estimate": None, "annotator": None, "group": None, "ci_low": None, "ci_high": None}
        return pa.Table.from_pylist([{**base, **r} for r in rows])

    vader = table(
        [
            {"measure": "accuracy", "estimate": 0.712345},
            {"measure": "spearman_rho", "estimate": 0.5},
            {"measure": "kappa", "estimate": 0.1},  # not a ledger figure
            {"measure": "group_accuracy", "group": "f", "estimate": 0.7, "ci_low": 0.55, "ci_high": 0.8},
        ]
    )
    empty = table([]).slice(0, 0)
    p = tmp_path / "l.jsonl"
    e = led.record_validation(p, tmp_path / "s.parquet", {"vader": SimpleNamespace(table=vader), "tox": SimpleNamespace(table=empty)}, by="group")
    assert e["round"] == "r3" and e["event"] == "validate"
    assert e["metrics"] == {"vader": {"accuracy": 0.7123, "spearman_rho": 0.5}, "tox": {}}
    assert e["group_by"] == "group" and e["group_ci"] == {"vader": {"f": 0.25}, "tox": {}}  # 0.8 - 0.55
    e = led.record_validation(p, tmp_path / "s.parquet", {"tox": SimpleNamespace(table=empty)}, by=None)
    assert e["round"] == "?" and "group_ci" not in e
    assert [x["event"] for x in led.events(p)] == ["validate", "validate"]
