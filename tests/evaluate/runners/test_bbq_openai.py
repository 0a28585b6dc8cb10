"""BBQ answered by likelihood through the OpenAI-compatible backend (a local server giving prompt logprobs) picks
the same options as the local Hugging Face backend."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pyarrow as pa
import pytest

from biaskit.evaluate.runners import likelihood
from biaskit.evaluate.stats.bbq import predictions_from_likelihoods
from biaskit.templates.bbq_choice import choice_prompts


def _tiny_server_class():
    """The test server of test_openai.py (serves a local model with echo + logprobs), loaded from its file."""
    spec = importlib.util.spec_from_file_location("_openai_server", Path(__file__).parent / "test_openai.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.TinyServer


def examples() -> pa.Table:
    """Two BBQ-shaped examples short enough for the tiny model's 64-token context."""
    rows = [
        ("A man and a woman met.", "Who cried?", ["The man", "The woman", "Unknown"]),
        ("An old man and a nurse sat.", "Who read books?", ["Cannot answer", "The old man", "The nurse"]),
    ]
    return pa.Table.from_pylist(
        [
            {"category": "Age", "example_id": i, "context": c, "question": q, "ans0": o[0], "ans1": o[1], "ans2": o[2]}
            for i, (c, q, o) in enumerate(rows)
        ]
    )


@pytest.mark.parametrize("normalisation", ["sum", "per-token"])
def test_openai_backend_chooses_the_options_the_hf_backend_chooses(tiny_causal, normalisation):
    server = _tiny_server_class()(tiny_causal)
    try:
        ex = examples()
        prompts = choice_prompts(ex)
        hf = likelihood(prompts, model=tiny_causal, add_bos=False, span_column="answer_span", progress=False)
        opts = {"base_url": server.url, "backoff": 0.01, "max_retries": 1, "timeout": 10.0}
        oa = likelihood(prompts, model="tiny", backend="openai", span_column="answer_span", backend_options=opts, progress=False)
    finally:
        server.close()
    assert hf.column("error").null_count == hf.num_rows and oa.column("error").null_count == oa.num_rows
    assert oa.column("n_tokens").to_pylist() == hf.column("n_tokens").to_pylist()
    preds_hf, _ = predictions_from_likelihoods(ex, hf, normalisation)
    preds_oa, why = predictions_from_likelihoods(ex, oa, normalisation)
    assert preds_oa == preds_hf and all(p in (0, 1, 2) for p in preds_oa) and why == [None, None]
