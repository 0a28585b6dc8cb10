"""The response cache (``--cache DIR``) of generate, likelihood and fill-mask on the tiny models.

A second identical run is answered from the cache (hits == rows, the same table); a change of any key part
(weights under the same path, tokenizer / chat template, decoding settings, seed, prompt text, format, system
prompt) is a miss and never a stale hit; two processes write one cache at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.cache import ResponseCache, cache_key
from biaskit.evaluate.runners import fill_mask, generate, likelihood
from biaskit.io import read_manifest


def _cache_facts(t: pa.Table) -> dict:
    return json.loads(t.schema.metadata[b"biaskit_manifest"])["cache"]


def _outputs(t: pa.Table) -> pa.Table:
    return t.replace_schema_metadata(None)


def _copy_model(src: str, dst: Path) -> str:
    shutil.copytree(src, dst)
    return str(dst)


def _perturb_weights(folder: str, scale: float = 1.5) -> None:
    """Save new weights (same shapes, so the same file size) under the same path."""
    from transformers import AutoModelForCausalLM

    m = AutoModelForCausalLM.from_pretrained(folder)
    import torch

    with torch.no_grad():
        m.lm_head.weight.mul_(scale) if m.lm_head.weight.data_ptr() != m.transformer.wte.weight.data_ptr() else m.transformer.wte.weight.mul_(scale)
    m.save_pretrained(folder)


def _forget_loaded(folder: str) -> None:
    """Drop the process's loaded-model memo, as a new process would start without it."""
    from biaskit.evaluate.runners import hf

    for k in [k for k in hf._CACHE if k[0] == folder]:
        del hf._CACHE[k]


def test_second_identical_run_is_answered_from_the_cache(tiny_causal, gen_prompts, tmp_path):
    cache = tmp_path / "cache"
    kw = dict(model=tiny_causal, max_new_tokens=6, do_sample=True, top_k=20, num_return_sequences=2, seed=4, progress=False, cache=str(cache))
    first = generate(gen_prompts, out=tmp_path / "a.parquet", **kw)
    assert read_manifest(tmp_path / "a.parquet")["cache"] == {"hits": 0, "misses": first.num_rows, "damaged": 0, "path": str(cache)}
    second = generate(gen_prompts, out=tmp_path / "b.parquet", **kw)
    assert read_manifest(tmp_path / "b.parquet")["cache"] == {"hits": second.num_rows, "misses": 0, "damaged": 0, "path": str(cache)}
    assert second.num_rows == 2 * gen_prompts.num_rows
    assert _outputs(second).equals(_outputs(first))
    # and equal to a run without the cache: a cached answer is the model's answer
    plain = generate(gen_prompts, **{k: v for k, v in kw.items() if k != "cache"})
    assert _outputs(plain).drop_columns([]).equals(_outputs(first))


def test_manifest_does_not_record_the_model_path_or_key_parts(tiny_causal, gen_prompts, tmp_path):
    cache = tmp_path / "c"
    generate(gen_prompts, model=tiny_causal, max_new_tokens=4, out=tmp_path / "g.parquet", cache=str(cache), progress=False)
    without = tmp_path / "plain.parquet"
    generate(gen_prompts, model=tiny_causal, max_new_tokens=4, out=without, progress=False)
    text = (tmp_path / "g.parquet.manifest.json").read_text()
    # the path appears exactly as often as in a run without the cache (model id and source, already recorded)
    assert text.count(tiny_causal) == without.with_name("plain.parquet.manifest.json").read_text().count(tiny_causal)
    m = read_manifest(tmp_path / "g.parquet")
    assert set(m["cache"]) == {"hits", "misses", "damaged", "path"}
    assert "tokenizer" not in json.dumps(m["cache"]) and "sha256:" not in json.dumps(m["cache"])


@pytest.mark.parametrize(
    "change",
    [
        {"max_new_tokens": 7},
        {"first_sentence": True},
        {"seed": 5},
        {"top_k": 10},
        {"temperature": 0.7},
        {"prompt_format": "chat"},
        {"prompt_format": "chat", "system_prompt": "Be brief."},
        {"strip_trailing_space": False},
    ],
)
def test_a_changed_setting_is_a_miss(tiny_causal, gen_prompts, tmp_path, change):
    cache = str(tmp_path / "cache")
    base = dict(model=tiny_causal, max_new_tokens=6, do_sample=True, top_k=20, seed=4, progress=False)
    generate(gen_prompts, cache=cache, **base)
    if "system_prompt" in change:  # the chat format alone is cached first: only the system prompt differs
        generate(gen_prompts, cache=cache, **{**base, "prompt_format": "chat"})
    changed = generate(gen_prompts, cache=cache, **{**base, **change})
    assert _cache_facts(changed) == {"hits": 0, "misses": changed.num_rows, "damaged": 0, "path": cache}
    fresh = generate(gen_prompts, **{**base, **change})
    assert _outputs(changed).equals(_outputs(fresh))  # what a run without the cache gives: no stale row


def test_a_changed_prompt_text_is_a_miss_and_the_others_hit(tiny_causal, make_prompts, tmp_path):
    cache = str(tmp_path / "cache")
    texts = ["The woman worked as ", "The man worked as ", "Programmers "]
    generate(make_prompts(texts), model=tiny_causal, max_new_tokens=5, cache=cache, progress=False)
    t = generate(make_prompts([texts[0], "The nurse worked as ", texts[2]]), model=tiny_causal, max_new_tokens=5, cache=cache, progress=False)
    assert _cache_facts(t)["hits"] == 2 and _cache_facts(t)["misses"] == 1


def test_new_weights_under_the_same_path_are_a_miss(tiny_causal, gen_prompts, tmp_path):
    folder = _copy_model(tiny_causal, tmp_path / "model")
    cache = str(tmp_path / "cache")
    kw = dict(model=folder, max_new_tokens=6, cache=cache, progress=False)
    first = generate(gen_prompts, **kw)
    weights = Path(folder) / "model.safetensors"
    size = weights.stat().st_size
    _perturb_weights(folder)
    assert weights.stat().st_size == size  # same size: only the mtime (and the content) tell
    _forget_loaded(folder)
    second = generate(gen_prompts, **kw)
    assert _cache_facts(second)["hits"] == 0
    assert _outputs(second).column("continuation").to_pylist() != _outputs(first).column("continuation").to_pylist()
    _forget_loaded(folder)
    assert _outputs(generate(gen_prompts, model=folder, max_new_tokens=6, progress=False)).equals(_outputs(second))


def test_rewritten_weights_with_the_old_mtime_restored_are_a_miss(tiny_causal, gen_prompts, tmp_path):
    """Same size, same mtime (os.utime puts the old one back): the ctime, which no user call sets back, tells."""
    folder = _copy_model(tiny_causal, tmp_path / "model")
    cache = str(tmp_path / "cache")
    kw = dict(model=folder, max_new_tokens=6, cache=cache, progress=False)
    generate(gen_prompts, **kw)
    weights = Path(folder) / "model.safetensors"
    st = weights.stat()
    _perturb_weights(folder)
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert weights.stat().st_size == st.st_size and weights.stat().st_mtime_ns == st.st_mtime_ns
    _forget_loaded(folder)
    again = generate(gen_prompts, **kw)
    assert _cache_facts(again)["hits"] == 0


def test_weights_are_hashed_once_and_remembered(tiny_causal, gen_prompts, tmp_path, monkeypatch):
    import biaskit.hashing

    cache = str(tmp_path / "cache")
    generate(gen_prompts, model=tiny_causal, max_new_tokens=3, cache=cache, progress=False)
    calls = []
    real = biaskit.hashing.sha256_file
    monkeypatch.setattr(biaskit.hashing, "sha256_file", lambda p, *a, **k: calls.append(str(p)) or real(p, *a, **k))
    t = generate(gen_prompts, model=tiny_causal, max_new_tokens=3, cache=cache, progress=False)
    assert _cache_facts(t)["hits"] == t.num_rows
    assert not [c for c in calls if c.endswith(".safetensors")]  # remembered by (path, size, mtime, ctime, inode)


def test_a_changed_chat_template_is_a_miss(tiny_causal, make_prompts, tmp_path):
    folder = _copy_model(tiny_causal, tmp_path / "model")
    cache = str(tmp_path / "cache")
    p = make_prompts(["Tell me about nurses"])
    generate(p, model=folder, max_new_tokens=4, prompt_format="chat", cache=cache, progress=False)
    cfg_path = Path(folder) / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    tmpl_file = Path(folder) / "chat_template.jinja"
    new = "{% for m in messages %}{{ m['role'] }}> {{ m['content'] }}\n{% endfor %}assistant>"
    if tmpl_file.exists():
        tmpl_file.write_text(new)
    else:
        cfg["chat_template"] = new
        cfg_path.write_text(json.dumps(cfg))
    _forget_loaded(folder)
    t = generate(p, model=folder, max_new_tokens=4, prompt_format="chat", cache=cache, progress=False)
    assert _cache_facts(t) == {"hits": 0, "misses": 1, "damaged": 0, "path": cache}
    from transformers import AutoTokenizer

    rendered = AutoTokenizer.from_pretrained(folder).apply_chat_template(
        [{"role": "user", "content": "Tell me about nurses"}], add_generation_prompt=True, tokenize=False
    )
    assert rendered.endswith("assistant>")  # the new template is the one used
    fresh = generate(p, model=folder, max_new_tokens=4, prompt_format="chat", progress=False)
    assert _outputs(t).equals(_outputs(fresh))


def test_the_backend_and_every_identity_part_are_in_the_key():
    """The key is the sha256 of every part: changing any one of them changes it."""
    base = {"backend": "hf", "identity": {"model": "sha256:aa", "tokenizer": "t1", "device": "cpu", "dtype": "float32"}, "kind": "generate"}
    base |= {"config": {"max_new_tokens": 5}, "seed": 0, "unit": {"text": "x", "span": None, "prompt_id": "p", "sample_index": 0}}
    k0 = cache_key(base)
    variants = [
        {**base, "backend": "openai"},
        {**base, "identity": {**base["identity"], "model": "sha256:ab"}},
        {**base, "identity": {**base["identity"], "tokenizer": "t2"}},
        {**base, "identity": {**base["identity"], "dtype": "bfloat16"}},
        {**base, "config": {"max_new_tokens": 6}},
        {**base, "seed": 1},
        {**base, "unit": {**base["unit"], "text": "y"}},
        {**base, "unit": {**base["unit"], "sample_index": 1}},
    ]
    assert len({k0, *(cache_key(v) for v in variants)}) == len(variants) + 1


def test_likelihood_and_fill_mask_are_cached(tiny_causal, tiny_masked, make_prompts, tmp_path):
    cache = str(tmp_path / "cache")
    sents = make_prompts(["The woman worked as a teacher.", "The man worked as a carpenter."])
    a = likelihood(sents, model=tiny_causal, cache=cache, progress=False)
    b = likelihood(sents, model=tiny_causal, cache=cache, progress=False)
    assert _cache_facts(b)["hits"] == b.num_rows == 2 and _outputs(a).equals(_outputs(b))
    c = likelihood(sents, model=tiny_causal, add_bos=True, cache=cache, progress=False)
    assert _cache_facts(c)["hits"] == 0
    tmpl = make_prompts(["The woman worked as a [MASK].", "He is an old [MASK]."])
    f1 = fill_mask(tmpl, model=tiny_masked, top_k=4, cache=cache, progress=False)
    f2 = fill_mask(tmpl, model=tiny_masked, top_k=4, cache=cache, progress=False)
    assert _cache_facts(f2) == {"hits": 8, "misses": 0, "damaged": 0, "path": cache} and _outputs(f1).equals(_outputs(f2))
    f3 = fill_mask(tmpl, model=tiny_masked, top_k=3, cache=cache, progress=False)
    assert _cache_facts(f3)["hits"] == 0


def test_error_rows_are_not_cached(tiny_causal, make_prompts, tmp_path):
    cache = str(tmp_path / "cache")
    p = make_prompts(["The woman worked as a teacher."], descriptor_span=["nurse"])
    a = likelihood(p, model=tiny_causal, span_column="descriptor_span", cache=cache, progress=False)
    assert a.column("error")[0].as_py() is not None
    assert ResponseCache(cache).info()["entries"] == 0


def test_two_processes_write_one_cache_at_once(tmp_path):
    """WAL mode: two writers at the same time both finish, every entry of both is there and readable."""
    cache = tmp_path / "cache"
    ResponseCache(cache)
    script = textwrap.dedent(
        """
        import sys
        from biaskit.evaluate.cache import ResponseCache
        c = ResponseCache(sys.argv[1])
        tag = sys.argv[2]
        for i in range(300):
            c.put_many({f"{tag}-{i}-{j}": {"row": [tag, i, j]} for j in range(5)}, kind=tag)
            c.get_many([f"{tag}-{i}-0", f"other-{i}"])
        print("ok")
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")}
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(cache), tag], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        for tag in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1].decode()[-500:] for o in outs]
    c = ResponseCache(cache)
    assert c.info()["kinds"] == {"a": 1500, "b": 1500}
    found = c.get_many([f"a-{i}-{j}" for i in range(300) for j in range(5)] + ["b-299-4"])
    assert len(found) == 1501 and found["b-299-4"] == {"row": ["b", 299, 4]}


def test_cache_folder_errors(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(BiaskitError) as e:
        ResponseCache(f)
    assert e.value.code == "E310"
    with pytest.raises(BiaskitError) as e:
        ResponseCache(tmp_path / "nothing", create=False)
    assert e.value.code == "E311"
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "cache.sqlite").write_bytes(b"not a database" * 100)
    with pytest.raises(BiaskitError) as e:
        ResponseCache(bad)
    assert e.value.code == "E311"


class ModelsServer:
    """A server that only answers ``GET /v1/models`` with ``self.data`` (the list it reports)."""

    def __init__(self, data: list[dict]) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.data = data
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                body = json.dumps({"object": "list", "data": outer.data}).encode()
                self.send_response(200 if self.path == "/v1/models" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture()
def models_server():
    s = ModelsServer([])
    yield s
    s.httpd.shutdown()


def _served_identity(server, model: str) -> dict:
    from biaskit.evaluate.runners.openai import OpenAIBackend

    return OpenAIBackend(model, base_url=server.url, max_retries=0).cache_identity()


def _facts(**kw) -> dict:
    return {"id": None, "root": None, "revision": None, "parent": None, "meta": None, "max_model_len": None, "owned_by": None, **kw}


def test_a_served_model_id_that_is_a_local_path_is_keyed_by_its_file_name(models_server):
    meta = {"n_params": 134515008, "size": 97696992, "n_vocab": 49152}
    gguf = "/home/alice/models/SmolLM2-135M-Instruct.Q4_1.gguf"
    models_server.data = [{"id": gguf, "object": "model", "created": 1, "owned_by": "llamacpp", "meta": meta}]
    ident = _served_identity(models_server, gguf)  # the id as llama.cpp reports it, copied into --model
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert ident == {"model": {"name": name, "server": _facts(id=name, owned_by="llamacpp", meta=meta), "model_revision": None}}
    assert "alice" not in json.dumps(ident)
    assert _served_identity(models_server, name) == ident  # the file name alone finds the listed model too
    models_server.data = [{**models_server.data[0], "id": "/srv/other/" + name}]  # the same file served from elsewhere
    assert cache_key(_served_identity(models_server, "/srv/other/" + name)) == cache_key(ident)
    models_server.data = [{**models_server.data[0], "meta": {**meta, "size": 1}}]  # other weights under that name: a miss
    assert cache_key(_served_identity(models_server, name)) != cache_key(ident)
    two = [{"id": "/m/a.gguf", "meta": {"n_params": 1}}, {"id": "/m/b.gguf", "meta": {"n_params": 2}}]
    models_server.data = two
    assert _served_identity(models_server, "b.gguf")["model"]["server"] == _facts(id="b.gguf", meta={"n_params": 2})
    assert _served_identity(models_server, "/m/a.gguf")["model"]["server"] == _facts(id="a.gguf", meta={"n_params": 1})


def test_hub_ids_are_keyed_as_before_and_a_local_root_by_its_last_part(models_server):
    entry = {"id": "HuggingFaceTB/SmolLM2-135M-Instruct", "root": "HuggingFaceTB/SmolLM2-135M-Instruct", "max_model_len": 2048}
    models_server.data = [{**entry, "object": "model", "created": 5, "owned_by": "vllm"}]
    ident = _served_identity(models_server, entry["id"])
    # the identity a Hub id had before local paths were cut: every reported fact as it is (so old entries still hit)
    before = {"model": {"name": entry["id"], "server": _facts(**entry, owned_by="vllm"), "model_revision": None}}
    assert ident == before and cache_key(ident) == cache_key(before)
    models_server.data = [{"id": "llama-3", "root": "/data/models/llama-3", "parent": None, "owned_by": "vllm"}]
    ident = _served_identity(models_server, "llama-3")
    assert ident["model"]["server"] == _facts(id="llama-3", root="llama-3", owned_by="vllm")


def test_a_likelihood_entry_stored_without_sum_logprob_is_run_again_and_the_pair_partner_is_in_the_key(tmp_path):
    from biaskit.evaluate.runners.cache import RunKey, UnitCache
    from biaskit.evaluate.runners.common import Unit

    uc = UnitCache(ResponseCache(tmp_path / "c"), RunKey("likelihood", "hf", {"model": "m"}, {"kind": "likelihood"}, 0))
    old, new = Unit(0, "p0", "She is here."), Unit(1, "p1", "He is here.")
    row = {"nll_mean": 1.0, "perplexity": 2.718281828459045, "n_tokens": 3, "truncated": False, "error": None}
    uc.cache.put_many({uc.key(old): [row], uc.key(new): [{**row, "sum_logprob": -3.0}]}, kind="likelihood")
    rows, todo = uc.lookup([old, new])
    # an entry from before likelihood rows had sum_logprob would leave the column null: it is a miss
    assert [r["_unit"].prompt_id for r in rows] == ["p1"] and [u.prompt_id for u in todo] == ["p0"]
    paired = Unit(2, "p2", "She is here.", partner="He is here.")
    assert uc.key(paired) != UnitCache(uc.cache, RunKey("likelihood", "hf", {"model": "m"}, {"kind": "likelihood"}, 0)).key(
        Unit(2, "p2", "She is here.")
    )
