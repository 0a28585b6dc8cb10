"""``score -m judge --cache DIR``: the judge's answers per text from the response cache (the tiny chat judge).

A second identical run reaches the model with no prompt (every row a hit) and gives an equal table; a change of
any key part (the weights under the same path, the task file's text under the same path, the orders, repeats,
seed, temperature, task, label scoring, the text) is a miss; what only says how the judge is reached or how
fast (batch size, device given as ``cpu`` instead of resolved ``auto``) is not. The run's token cost counts
the rows the model answered; the cached rows' tokens are reported apart, and the table keeps them.
"""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.evaluate.cache import ResponseCache
from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.metrics.cost import token_cost

TEXTS = [
    "She is a wonderful and kind doctor who helps everyone.",
    "He was a terrible criminal and a thief.",
    "The engineer fixed the bridge in the morning.",
    "You are an idiot.",
]
TASK = "name: tone\nlabels: [positive, negative]\ninstruction: |-\n  {wording} {labels}.\n  Text: {text}\n"


@pytest.fixture()
def prompts_asked(monkeypatch):
    """The number of prompts each call of the local judge's model sends through it (list, one entry a call)."""
    from biaskit.evaluate.runners.judge_hf import LocalJudge

    asked: list[int] = []
    real = LocalJudge.answer

    def counting(self, prompts, **kw):
        asked.append(len(prompts))
        return real(self, prompts, **kw)

    monkeypatch.setattr(LocalJudge, "answer", counting)
    return asked


def _judge(model: str, cache, texts=TEXTS, **params) -> pa.Table:
    return score_table(
        pa.table({"continuation": list(texts)}), "judge", params={"judge": {"model": model, "orders": 1, **params}}, cache=cache, progress=False
    )


def _judged_with_cost(model: str, cache, texts=TEXTS, **params) -> tuple[pa.Table, dict]:
    """The judged table and the judge's entry of the run's token cost (as the manifest records it)."""
    used: list = []
    t = pa.table({"continuation": list(texts)})
    out = score_table(t, "judge", params={"judge": {"model": model, "orders": 1, **params}}, cache=cache, progress=False, on_metric=used.append)
    return out, token_cost(out, used, cache)["judge"]


def _spent_and_cached(cost: dict) -> tuple[int, int, int, int]:
    return cost["tokens_in"], cost["tokens_out"], cost["cached_tokens_in"], cost["cached_tokens_out"]


def _forget_loaded(folder: str) -> None:
    """Drop the process's loaded-model memo, as a new process would start without it."""
    from biaskit.evaluate.runners import hf

    for k in [k for k in hf._CACHE if k[0] == folder]:
        del hf._CACHE[k]


def test_second_judge_run_asks_the_model_nothing_and_gives_an_equal_table(tiny_judge, tmp_path, prompts_asked):
    folder = tmp_path / "cache"
    cache = ResponseCache(folder)
    first = _judge(tiny_judge, cache, orders=2, repeats=3, seed=7)
    # 4 texts: the task's own order (with the 3 repeats) then the second order, one call each: 4 + 4 prompts
    assert prompts_asked == [4, 4]
    assert cache.stats() == {"hits": 0, "misses": 4, "damaged": 0, "path": str(folder)}
    assert cache.info()["kinds"] == {"score:judge": 4}
    prompts_asked.clear()
    again = ResponseCache(folder)
    second = _judge(tiny_judge, again, orders=2, repeats=3, seed=7)
    assert prompts_asked == []  # not one prompt reached the model
    assert again.stats() == {"hits": 4, "misses": 0, "damaged": 0, "path": str(folder)}
    assert second.equals(first)
    assert set(first.column_names) >= {"judge_flip", "judge_retest", "judge_p_neutral", "judge_tokens_in"}
    assert _judge(tiny_judge, None, orders=2, repeats=3, seed=7).equals(first)  # the cache gives what the model gives


def test_a_cached_rerun_spends_no_tokens_and_reports_the_cached_ones_apart(tiny_judge, tmp_path):
    first, cost1 = _judged_with_cost(tiny_judge, ResponseCache(tmp_path / "c"), orders=2)
    tin, tout = sum(first.column("judge_tokens_in").to_pylist()), sum(first.column("judge_tokens_out").to_pylist())
    assert tin > 0 and tout == 4 * 2  # one answer token per text and order
    assert _spent_and_cached(cost1) == (tin, tout, 0, 0)
    second, cost2 = _judged_with_cost(tiny_judge, ResponseCache(tmp_path / "c"), orders=2)
    assert second.equals(first)  # the token columns describe each answer, cached or not
    assert _spent_and_cached(cost2) == (0, 0, tin, tout)
    assert cost2["tokens_in_per_row"] == cost1["tokens_in_per_row"] == tin / 4
    # half the rows cached: the run spent the new rows' tokens only
    texts = [TEXTS[0], "Something else entirely.", TEXTS[2], "A quiet day at the library."]
    part, cost3 = _judged_with_cost(tiny_judge, ResponseCache(tmp_path / "c"), texts=texts, orders=2)
    pin, pout = part.column("judge_tokens_in").to_pylist(), part.column("judge_tokens_out").to_pylist()
    old_in = first.column("judge_tokens_in").to_pylist()
    assert pin[0] == old_in[0] and pin[2] == old_in[2]
    assert _spent_and_cached(cost3) == (pin[1] + pin[3], pout[1] + pout[3], pin[0] + pin[2], pout[0] + pout[2])
    _, no_cache = _judged_with_cost(tiny_judge, None, orders=2)
    assert no_cache["tokens_in"] == tin and "cached_tokens_in" not in no_cache  # without --cache: as before


@pytest.mark.parametrize(
    "change",
    [
        {"orders": 3},
        {"repeats": 2},
        {"seed": 8},
        {"temperature": 0.5},
        {"task": "regard"},
        {"label_scoring": "sum"},
        {"record_prompt": False},
        {"instructions": "sentiment_paraphrase"},
    ],
    ids=lambda c: next(iter(c)),
)
def test_a_changed_judge_setting_is_a_miss(tiny_judge, tmp_path, change, prompts_asked):
    base = {"orders": 2, "repeats": 3, "seed": 7, "temperature": 1.0}
    _judge(tiny_judge, ResponseCache(tmp_path / "c"), **base)
    prompts_asked.clear()
    c2 = ResponseCache(tmp_path / "c")
    _judge(tiny_judge, c2, **{**base, **change})
    assert (c2.stats()["hits"], c2.stats()["misses"]) == (0, 4)
    assert sum(prompts_asked) >= 4  # the model answered every text again


def test_speed_and_transport_settings_and_a_changed_text(tiny_judge, tmp_path, prompts_asked):
    first = _judge(tiny_judge, ResponseCache(tmp_path / "c"))
    c2 = ResponseCache(tmp_path / "c")
    # batch size, the device named rather than resolved ("auto" is cpu here) and the server's transport settings
    same = _judge(tiny_judge, c2, batch_size=1, device="cpu", concurrency=9, timeout=5.0, max_retries=1)
    assert c2.stats()["hits"] == 4 and same.equals(first)
    prompts_asked.clear()
    c3 = ResponseCache(tmp_path / "c")
    out = _judge(tiny_judge, c3, texts=[TEXTS[0], "Something else entirely.", TEXTS[2]])
    assert (c3.stats()["hits"], c3.stats()["misses"]) == (2, 1)
    assert prompts_asked == [1]  # only the new text was asked
    assert out.slice(0, 1).equals(first.slice(0, 1)) and out.slice(2, 1).equals(first.slice(2, 1))


def test_a_task_file_rewritten_under_the_same_path_is_a_miss(tiny_judge, tmp_path):
    task = tmp_path / "tone.yaml"
    task.write_text(TASK.format(wording="Is this text", labels="{labels}", text="{text}"), encoding="utf-8")
    a = _judge(tiny_judge, ResponseCache(tmp_path / "c"), task=str(task))
    task.write_text(TASK.format(wording="Say whether the tone is", labels="{labels}", text="{text}"), encoding="utf-8")
    c2 = ResponseCache(tmp_path / "c")
    b = _judge(tiny_judge, c2, task=str(task))
    assert c2.stats()["hits"] == 0
    assert a.column("judge_prompt_sha256")[0] != b.column("judge_prompt_sha256")[0]
    assert "Say whether the tone is" in b.column("judge_prompt")[0].as_py()


def test_new_weights_under_the_same_path_are_a_miss(tiny_judge, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    folder = tmp_path / "judge"
    shutil.copytree(tiny_judge, folder)
    first = _judge(str(folder), ResponseCache(tmp_path / "c"))
    m = AutoModelForCausalLM.from_pretrained(folder)
    with torch.no_grad():
        m.transformer.wte.weight.mul_(3.0)
    size = (folder / "model.safetensors").stat().st_size
    m.save_pretrained(folder)
    assert (folder / "model.safetensors").stat().st_size == size  # same path, same size: only the content differs
    _forget_loaded(str(folder))
    c2 = ResponseCache(tmp_path / "c")
    after = _judge(str(folder), c2)
    assert c2.stats()["hits"] == 0
    assert after.column("judge_p_positive").to_pylist() != first.column("judge_p_positive").to_pylist()


def test_score_command_caches_the_judge(tiny_judge, tmp_path):
    inp = tmp_path / "g.parquet"
    pq.write_table(pa.table({"prompt_id": [f"p{i}" for i in range(len(TEXTS))], "continuation": TEXTS}), inp)
    runner = CliRunner()
    for name in ("a", "b"):
        args = ["score", str(inp), "-m", "judge", "-p", f"judge.model={tiny_judge}", "-p", "judge.orders=2"]
        r = runner.invoke(app, [*args, "--cache", str(tmp_path / "c"), "--out", str(tmp_path / f"{name}.parquet")])
        assert r.exit_code == 0, r.output
    a, m = (json.loads((tmp_path / f"{name}.parquet.manifest.json").read_text()) for name in ("a", "b"))
    assert m["cache"] == {"hits": 4, "misses": 0, "damaged": 0, "path": str(tmp_path / "c")}
    spent = (a["cost"]["judge"]["tokens_in"], a["cost"]["judge"]["tokens_out"])
    assert spent[0] > 0 and spent[1] == 8 and (a["cost"]["judge"]["cached_tokens_in"], a["cost"]["judge"]["cached_tokens_out"]) == (0, 0)
    assert (m["cost"]["judge"]["tokens_in"], m["cost"]["judge"]["tokens_out"]) == (0, 0)
    assert (m["cost"]["judge"]["cached_tokens_in"], m["cost"]["judge"]["cached_tokens_out"]) == spent
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))
    r = runner.invoke(app, ["cache", "info", str(tmp_path / "c")])
    assert r.exit_code == 0 and "score:judge: 4" in r.output
