"""The judge reaches its model through the backend registry: a backend written and registered in this test (no
project file touched) judges as soon as its capabilities declare ``chat_template`` and ``logprobs``; one that does
not is E315 naming the backends that can. Its answers are a hand-written position-biased "model", so the judge's
order averaging is checked against hand arithmetic."""

from __future__ import annotations

import math
import re

import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.runners.backend import BackendBase, Capabilities, JudgeAnswer, JudgeSettings
from biaskit.registry import backends

#: probability mass of the label listed first, second, third (a judge that likes the first option)
POSITION = (0.6, 0.25, 0.15)
#: the model's own preference: it likes "c" twice as much as the others, wherever it is listed
LIKING = {"a": 1.0, "b": 1.0, "c": 2.0}
TASK = "name: abc\nlabels: [a, b, c]\ninstruction: |-\n  Options: {labels}.\n  Text: {text}\n"


class PositionSession:
    """Answers with log(POSITION[listed position] * LIKING[label]) per label, read from the prompt's option list."""

    def __init__(self, s: JudgeSettings) -> None:
        self.labels = s.labels
        self.settings = s

    def render(self, messages: list[dict[str, str]]) -> str:
        return "\n".join(f"<{m['role']}> {m['content']}" for m in messages) + "\n<assistant>"

    def answer(self, messages, *, repeats=0, temperature=1.0, seeds=()):
        out = []
        for m in messages:
            listed = re.search(r"Options: (.*)\.", m[-1]["content"]).group(1).split(", ")
            logp = [math.log(POSITION[listed.index(lab)] * LIKING[lab]) for lab in self.labels]
            out.append(JudgeAnswer(logp, tokens_in=len(self.render(m)), tokens_out=1))
        return out

    def describe(self):
        return {"backend": "position-test", "chat_template": "<role> content"}

    def cache_identity(self, cache):
        return None


class PositionBackend(BackendBase):
    name = "position-test"
    capabilities = Capabilities(kinds=(), options=("task",), judge=("chat_template", "logprobs"))
    built: list[tuple[str, dict]] = []

    def __init__(self, model: str, **options) -> None:
        PositionBackend.built.append((model, options))

    def judge_session(self, s: JudgeSettings) -> PositionSession:
        return PositionSession(s)


class GenerateOnlyBackend(BackendBase):
    name = "generate-only-test"
    capabilities = Capabilities(kinds=("generate",), options=("task",))


@pytest.fixture()
def task_file(tmp_path):
    backends.register("position-test", PositionBackend, help="test: a position-biased judge written by hand")
    backends.register("generate-only-test", GenerateOnlyBackend, help="test: a backend that cannot judge")
    p = tmp_path / "abc.yaml"
    p.write_text(TASK, encoding="utf-8")
    return str(p)


def _judge(task: str, **params) -> list[dict]:
    t = pa.table({"continuation": ["one text", "another text"]})
    return score_table(
        t, "judge", params={"judge": {"backend": "position-test", "model": "hand-made", "task": task, "orders": 1, **params}}, progress=False
    ).to_pylist()


def _per_order(order: tuple[str, ...]) -> dict[str, float]:
    """One order's restricted distribution, by hand: mass POSITION[pos] * LIKING[label], normalised."""
    mass = {lab: POSITION[order.index(lab)] * LIKING[lab] for lab in order}
    total = sum(mass.values())
    return {lab: v / total for lab, v in mass.items()}


def test_a_backend_registered_in_the_test_judges_through_its_declared_capabilities(task_file):
    rows = _judge(task_file)
    model, options = PositionBackend.built[-1]
    assert model == "hand-made" and options == {"task": "causal"}  # only the options the backend declares
    # one order (a, b, c): masses .6, .25, .15*2 = .3 of 1.15; the first-listed label wins
    for r in rows:
        assert r["judge_error"] is None and r["judge_label"] == "a"
        assert r["judge_p_a"] == pytest.approx(0.6 / 1.15, abs=1e-12)
        assert r["judge_p_c"] == pytest.approx(0.3 / 1.15, abs=1e-12)
        assert r["judge_prompt"].startswith("<user> Options: a, b, c.") and r["judge_prompt"].endswith("<assistant>")
        assert r["judge_tokens_out"] == 1


def test_the_judge_label_is_the_argmax_of_the_probabilities_averaged_over_the_orders(task_file):
    # orders=2: (a, b, c) gives a .6/1.15, b .25/1.15, c .3/1.15; (c, b, a) gives c 1.2/1.6, b .25/1.6, a .15/1.6
    two = _judge(task_file, orders=2)
    p_a = (0.6 / 1.15 + 0.15 / 1.6) / 2  # 0.307745
    p_b = (0.25 / 1.15 + 0.25 / 1.6) / 2  # 0.186821
    p_c = (0.3 / 1.15 + 1.2 / 1.6) / 2  # 0.505435
    for r in two:
        assert (r["judge_p_a"], r["judge_p_b"], r["judge_p_c"]) == pytest.approx((p_a, p_b, p_c), abs=1e-12)
        assert r["judge_label"] == "c" and r["judge_flip"] is True  # debiased: the liked label, not the first listed
    # orders=3 adds the first rotation (b, c, a): b .6/1.25, c .5/1.25, a .15/1.25
    three = _judge(task_file, orders=3)
    want = {lab: sum(_per_order(o)[lab] for o in (("a", "b", "c"), ("c", "b", "a"), ("b", "c", "a"))) / 3 for lab in "abc"}
    assert want["c"] == pytest.approx((0.3 / 1.15 + 0.75 + 0.4) / 3, abs=1e-12)  # 0.470290
    for r in three:
        assert {lab: r[f"judge_p_{lab}"] for lab in "abc"} == pytest.approx(want, abs=1e-12)
        assert r["judge_label"] == "c"


def test_a_registered_backend_without_the_judge_capabilities_is_e315_naming_those_that_can(task_file):
    with pytest.raises(BiaskitError) as e:
        _judge(task_file, backend="generate-only-test")
    err = e.value
    assert err.code == "E315" and "chat_template, logprobs" in str(err)
    assert {"hf", "openai", "position-test"} <= set(err.options) and "generate-only-test" not in err.options
    with pytest.raises(BiaskitError) as e:
        _judge(task_file, backend="no-such-backend")
    assert e.value.code == "E020"


def test_summed_label_scoring_is_refused_for_a_backend_that_gives_only_top_tokens(task_file):
    with pytest.raises(BiaskitError) as e:
        _judge(task_file, backend="openai", base_url="http://127.0.0.1:9/v1", label_scoring="sum")
    assert e.value.code == "E324" and "top tokens" in str(e.value)


def test_score_says_when_the_judges_labels_are_degenerate_and_that_the_shipped_judge_is_a_smoke_test_model(task_file, tmp_path):
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from biaskit.cli import app

    inp = tmp_path / "t.parquet"
    pq.write_table(pa.table({"prompt_id": [f"p{i}" for i in range(4)], "continuation": ["w", "x", "y", "z"]}), inp)
    base = ["score", str(inp), "-m", "judge", "-p", "judge.backend=position-test", "-p", f"judge.task={task_file}"]
    # two orders: the averaged label is "c" for every row and every row flips
    r = CliRunner().invoke(app, [*base, "-p", "judge.model=smollm2-135m", "-p", "judge.orders=2", "--out", str(tmp_path / "a.parquet")])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "note: degenerate labels: 'c' for 100% of the 4 labelled rows (>= 90%)" in out
    assert "note: degenerate labels: the label changed with the option order for 100% of 4 rows (>= 50%)" in out
    assert "smollm2-135m judge (135M parameters) is a smoke-test model" in out
    r = CliRunner().invoke(app, [*base, "-p", "judge.model=my-judge", "-p", "judge.orders=1", "--out", str(tmp_path / "b.parquet")])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "'a' for 100%" in out and "smoke-test" not in out and "changed with the option order" not in out
    assert "one order only (judge.orders=1): not order-debiased" in out and "the default judge.orders=2 averages" in out
    # the default is order-debiased: two orders, the flip rate measured, no one-order note
    r = CliRunner().invoke(app, [*base, "-p", "judge.model=my-judge", "--out", str(tmp_path / "c.parquet")])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "one order only" not in out and "changed with the option order for 100% of 4 rows" in out
    assert pq.read_table(tmp_path / "c.parquet").column("judge_label").to_pylist() == ["c"] * 4


@pytest.mark.parametrize(
    ("top", "flips", "want"),
    [(8, 4, []), (9, 4, ["'a' for 90% of the 10"]), (8, 5, ["for 50% of 10 rows"]), (9, 5, ["'a' for 90%", "for 50% of 10 rows"])],
)
def test_degenerate_label_notes_start_at_ninety_percent_one_label_or_half_the_rows_flipping(top, flips, want):
    from biaskit.evaluate.metrics.judge import judge_notes

    labels = ["a"] * top + ["b"] * (10 - top)
    t = pa.table({"judge_label": labels, "judge_flip": [True] * flips + [False] * (10 - flips)})
    notes = judge_notes(t, "judge", "my-judge")
    assert len(notes) == len(want) and all(w in " ".join(notes) for w in want)
