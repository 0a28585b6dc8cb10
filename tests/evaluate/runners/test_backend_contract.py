"""The backend contract (``Backend`` protocol, declared capabilities, refused options) and the prompt format
(``--format raw|chat``, ``--system-prompt``) on the tiny GPT-2 and on an OpenAI-compatible server serving it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from biaskit.cli import app
from biaskit.errors import BiaskitError
from biaskit.evaluate.runners import fill_mask, generate
from biaskit.evaluate.runners.backend import Backend, BackendBase, Capabilities
from biaskit.evaluate.runners.builtin import make_backend

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_openai import TinyServer  # noqa: E402


def _reference_greedy(model_dir: str, text: str, max_new_tokens: int) -> str:
    """Independent computation: plain transformers generate on one unpadded prompt."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    ids = tok(text, return_tensors="pt").input_ids
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.eos_token_id)
    new = out[0, ids.shape[1] :].tolist()
    if tok.eos_token_id in new:
        new = new[: new.index(tok.eos_token_id)]
    return tok.decode(new, skip_special_tokens=True)


CORE = Path(__file__).resolve().parents[3] / "src/biaskit/evaluate/runners/core.py"


def test_core_asks_the_protocol_not_hasattr():
    assert len(re.findall(r"\bhasattr\(", CORE.read_text())) <= 1


def test_an_option_the_backend_does_not_take_is_refused_before_loading(tmp_path):
    with pytest.raises(BiaskitError) as e:
        make_backend("hf", str(tmp_path / "not-loaded"), {"base_url": "http://127.0.0.1:9/v1"})
    assert e.value.code == "E312" and "hf backend" in str(e.value) and "base_url (--base-url)" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        make_backend("openai", "m", {"base_url": "http://127.0.0.1:9/v1", "device": "cuda"})
    assert e.value.code == "E312" and "openai backend" in str(e.value) and "--device" in str(e.value)


def test_cli_refuses_an_endpoint_option_with_the_hf_backend(tiny_causal, make_prompts, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    p = tmp_path / "p.parquet"
    pq.write_table(make_prompts(["The woman worked as "]), p)
    r = CliRunner().invoke(app, ["generate", str(p), "--model", tiny_causal, "--timeout", "5", "--out", str(tmp_path / "g.parquet")])
    assert r.exit_code == 1 and "E312" in r.output and "timeout (--timeout)" in r.output
    # OPENAI_BASE_URL in the environment is for the openai backend: an hf run is not refused for it
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    r = CliRunner().invoke(app, ["generate", str(p), "--model", tiny_causal, "--max-new-tokens", "2", "--out", str(tmp_path / "g.parquet")])
    assert r.exit_code == 0, r.output


def test_backends_keep_the_protocol(tiny_causal):
    be = make_backend("hf", tiny_causal, {"task": "causal"})
    assert isinstance(be, Backend) and be.capabilities.supports("fill_mask")
    from biaskit.evaluate.runners.openai import OpenAIBackend

    oa = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")
    assert isinstance(oa, Backend) and not oa.capabilities.supports("fill_mask")


def test_a_kind_not_declared_and_an_object_that_is_no_backend(make_prompts):
    with pytest.raises(BiaskitError) as e:
        fill_mask(make_prompts(["a <mask>"]), model="m", backend="openai", backend_options={"base_url": "http://127.0.0.1:9/v1"})
    assert e.value.code == "E062" and "cannot run fill_mask" in str(e.value)

    class GenerateOnly(BackendBase):
        name = "toy"
        capabilities = Capabilities(kinds=("generate",), formats=("raw",))
        batch_sizes_used: list = []

        def generate(self, units, s, batch_size):
            yield [{"_unit": u, "continuation": "!", "full_text": u.text + "!", "truncated": False, "error": None} for u in units]

    from biaskit.evaluate.runners.common import GenerationSettings
    from biaskit.evaluate.runners.core import run
    from biaskit.evaluate.runners.options import RunOptions

    t = run("generate", make_prompts(["a", "b"]), GenerationSettings(), RunOptions("toy", backend_obj=GenerateOnly()))
    assert t.column("continuation").to_pylist() == ["!", "!"] and t.column("prompt_format").to_pylist() == ["raw", "raw"]
    with pytest.raises(BiaskitError) as e:
        run(
            "likelihood",
            make_prompts(["a"]),
            __import__("biaskit.evaluate.runners.common", fromlist=["x"]).LikelihoodSettings(),
            RunOptions("toy", backend_obj=GenerateOnly()),
        )
    assert e.value.code == "E062"
    with pytest.raises(BiaskitError) as e:
        run("generate", make_prompts(["a"]), GenerationSettings(prompt_format="chat"), RunOptions("toy", backend_obj=GenerateOnly()))
    assert e.value.code == "E313"
    with pytest.raises(BiaskitError) as e:
        run("generate", make_prompts(["a"]), GenerationSettings(), RunOptions("x", backend_obj=object()))
    assert e.value.code == "E062" and "not a model backend" in str(e.value)


# ------------------------------------------------------------------------------------------------ formats


def test_chat_format_with_a_system_prompt(tiny_causal, make_prompts):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_causal)
    t = generate(
        make_prompts(["Tell me about nurses"]), model=tiny_causal, max_new_tokens=5, prompt_format="chat", system_prompt="Be kind.", progress=False
    )
    rendered = tok.apply_chat_template(
        [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Tell me about nurses"}], add_generation_prompt=True, tokenize=False
    )
    assert t.column("continuation")[0].as_py() == _reference_greedy(tiny_causal, rendered, 5)
    assert t.column("full_text")[0].as_py() == "Tell me about nurses" + t.column("continuation")[0].as_py()  # the prompt + the answer
    assert rendered.startswith("<|endoftext|>system: Be kind.\n<|endoftext|>user: Tell me about nurses\nassistant:")
    cfg = json.loads(t.column("generation_config")[0].as_py())
    assert (cfg["prompt_format"], cfg["system_prompt"], cfg["chat"]) == ("chat", "Be kind.", True)
    assert t.column("prompt_format").to_pylist() == ["chat"]
    raw = generate(make_prompts(["Tell me about nurses"]), model=tiny_causal, max_new_tokens=5, progress=False)
    assert raw.column("prompt_format").to_pylist() == ["raw"] and json.loads(raw.column("generation_config")[0].as_py())["prompt_format"] == "raw"


def test_system_prompt_from_a_file_and_its_errors(tiny_causal, make_prompts, tmp_path):
    import pyarrow.parquet as pq

    sp = tmp_path / "system.txt"
    sp.write_text("Answer in one word.", encoding="utf-8")
    p = tmp_path / "p.parquet"
    pq.write_table(make_prompts(["Tell me about nurses"]), p)
    out = tmp_path / "g.parquet"
    r = CliRunner().invoke(
        app, ["generate", str(p), "--model", tiny_causal, "--max-new-tokens", "3", "--format", "chat", "--system-prompt", str(sp), "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    t = pq.read_table(out)
    assert json.loads(t.column("generation_config")[0].as_py())["system_prompt"] == "Answer in one word."
    same = generate(
        make_prompts(["Tell me about nurses"]),
        model=tiny_causal,
        max_new_tokens=3,
        prompt_format="chat",
        system_prompt="Answer in one word.",
        progress=False,
    )
    assert t.column("continuation").to_pylist() == same.column("continuation").to_pylist()
    for argv in (["--system-prompt", "hi"], ["--format", "xml"], ["--chat", "--format", "raw"]):
        r = CliRunner().invoke(app, ["generate", str(p), "--model", tiny_causal, *argv, "--out", str(tmp_path / "x.parquet")])
        assert r.exit_code == 1 and "E313" in r.output, (argv, r.output)


def test_both_formats_stack_into_one_table(tiny_causal, gen_prompts):
    from biaskit.schema import check_keys

    raw = generate(gen_prompts, model=tiny_causal, max_new_tokens=4, progress=False)
    chat = generate(gen_prompts, model=tiny_causal, max_new_tokens=4, prompt_format="chat", progress=False)
    both = pa.concat_tables([raw.replace_schema_metadata(None), chat.replace_schema_metadata(None)])
    check_keys(both, "generations")  # prompt_format is part of the row key: no duplicate


@pytest.fixture(scope="module")
def openai_server(tiny_causal):
    """The tiny GPT-2 behind /v1/completions and /v1/chat/completions, plus /v1/models (revision settable)."""
    s = TinyServer(tiny_causal)
    s.model_entry = {"id": "tiny", "object": "model", "created": 0, "meta": {"n_params": 1234}}

    def do_get(handler):
        if handler.path != "/v1/models":
            return handler._send(404, {"error": {"message": "not found"}})
        return handler._send(200, {"object": "list", "data": [{**s.model_entry, "created": __import__("time").time()}]})

    s.httpd.RequestHandlerClass.do_GET = do_get
    yield s
    s.close()


def _oa(server, **kw):
    return {"base_url": server.url, "backoff": 0.01, "max_retries": 2, "timeout": 5.0, **kw}


def test_openai_chat_sends_the_system_turn(openai_server, make_prompts):
    t = generate(
        make_prompts(["Tell me about nurses"]), model="tiny", backend="openai", prompt_format="chat", system_prompt="Be kind.",
        max_new_tokens=4, backend_options=_oa(openai_server), progress=False,
    )  # fmt: skip
    body = [b for b in openai_server.bodies if "messages" in b][-1]
    assert body["messages"] == [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Tell me about nurses"}]
    assert t.column("prompt_format").to_pylist() == ["chat"] and t.column("error").to_pylist() == [None]


def test_openai_cache_keys_on_the_served_model_and_model_revision(openai_server, make_prompts, tmp_path):
    cache = str(tmp_path / "cache")
    p = make_prompts(["The woman worked as ", "The man worked as "])

    def run(**opts):
        t = generate(p, model="tiny", backend="openai", max_new_tokens=4, backend_options=_oa(openai_server, **opts), cache=cache, progress=False)
        return json.loads(t.schema.metadata[b"biaskit_manifest"])["cache"], t

    first, t1 = run()
    n_calls = len(openai_server.bodies)
    again, t2 = run()  # /v1/models reports a new `created` each time (as vLLM does): still a hit
    assert (first["misses"], again["hits"]) == (2, 2) and len(openai_server.bodies) == n_calls
    assert t1.replace_schema_metadata(None).equals(t2.replace_schema_metadata(None))
    assert run(model_revision="v2")[0]["hits"] == 0
    openai_server.model_entry = {**openai_server.model_entry, "meta": {"n_params": 999}}  # another model behind the same name
    assert run()[0]["hits"] == 0


def test_run_options_beyond_the_model_are_given_by_name():
    """RunOptions("m", "hf", None, 8, ...) with a dozen positional values was how the API built it; now only the
    model is positional and a second positional value is a TypeError."""
    from biaskit.evaluate.runners.options import RunOptions

    assert RunOptions("m", backend="openai", limit=3).limit == 3
    with pytest.raises(TypeError):
        RunOptions("m", "hf")
