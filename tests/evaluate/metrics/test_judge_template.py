"""A chat template that raises (jinja2's ``raise_exception``, as many real templates do for a role they do not take)
is E316 naming the model, the template and the fix, for the judge and for ``generate --format chat``, never a
jinja2 traceback."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.runners import generate

#: a template in the shape of real ones that refuse a system message
REFUSING = (
    "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{{ m['content'] }}{% endfor %}"
)


@pytest.fixture()
def refusing_model(tiny_judge, tmp_path):
    d = tmp_path / "refusing-judge"
    shutil.copytree(tiny_judge, d)
    cfg_path = d / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["chat_template"] = REFUSING
    cfg_path.write_text(json.dumps(cfg))
    if (d / "chat_template.jinja").exists():
        (d / "chat_template.jinja").write_text(REFUSING)
    return str(d)


def _check(err: BiaskitError, model: str) -> None:
    msg = str(err)
    assert err.code == "E316" and model in msg
    assert "System role not supported" in msg and "{% for m in messages %}" in msg  # jinja2's reason and the template
    assert "chat_template" in err.fix


def test_a_judge_task_whose_system_message_the_template_refuses_is_e316(refusing_model, tmp_path):
    task = tmp_path / "sys.yaml"
    task.write_text("labels: ['yes', 'no']\nsystem: You are a careful rater.\ninstruction: 'Pick {labels}. Text: {text}'\n")
    with pytest.raises(BiaskitError) as e:
        score_table(pa.table({"continuation": ["a text"]}), "judge", params={"judge": {"model": refusing_model, "task": str(task)}}, progress=False)
    _check(e.value, refusing_model)


def test_generate_in_chat_format_with_a_refusing_template_is_e316(refusing_model):
    prompts = pa.table({"prompt_id": ["p0"], "text": ["The nurse said "], "source": ["test"], "language": ["en"]})
    with pytest.raises(BiaskitError) as e:
        generate(prompts, model=refusing_model, max_new_tokens=2, chat=True, system_prompt="Be brief.", progress=False)
    _check(e.value, refusing_model)
