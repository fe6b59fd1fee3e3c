"""How soon llama.cpp's server stops generating after aeh's client hangs up, streamed vs not.

    .venv/bin/python benchmarks/budget_cut.py [--backend xllamacpp|skulk] [--runs 5] [--write]

Starts `aeh-llama-server` (SmolLM2-135M, one thread) on loopback, warms it, then per run sends a
long chat request (`max_tokens` 600) through aeh's own client (`HttpChatClient`) and cancels it
after `--cut-s` seconds, as an attempt's budget does — streamed (`"stream": true`, the live
adapters' default) and plain, alternately. Meanwhile a monitor reads `/metrics` every 0.1 s (as
a scraper or the live test does). Figures per mode: seconds from the cut until `/slots` shows no
slot processing (capped at `--max-wait-s`) and the tokens the server generated that never reached
the client (`tokens_predicted_total` less the tokens that arrived: a plain request's reply never
arrives, so all of it). Medians, with min and max, and the
1-minute load average at the time. The llama tests assert the behaviour; this keeps the figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from _results import machine, publish

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from aeh.adapters._http_chat import HttpChatClient  # noqa: E402
from aeh.adapters._stream import StreamReply  # noqa: E402

PROMPT = "Write a very long essay about the history of mathematics, in detail."


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


def predicted(root: str) -> float:
    for line in _get(f"{root}/metrics").decode().splitlines():
        if line.startswith("llamacpp:tokens_predicted_total"):
            return float(line.split()[1])
    raise RuntimeError("no llamacpp:tokens_predicted_total in /metrics")


def busy(root: str) -> bool:
    return any(s.get("is_processing") for s in json.loads(_get(f"{root}/slots")))


def start(backend: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "aeh.integrations.llama_server", "--backend", backend,
                             "--alias", "smollm2", "--jinja", "-t", "1", "-tb", "1", "--port", str(port),
                             "--metrics", "--slots"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    root = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"aeh-llama-server exited with {proc.returncode}")
        try:
            _get(f"{root}/health")
            return proc, root
        except OSError:
            time.sleep(0.25)
    proc.terminate()
    raise RuntimeError("aeh-llama-server did not become ready")


async def cut_request(root: str, stream: bool, cut_s: float) -> int:
    """Send the request, cancel it after `cut_s`; the tokens that had arrived."""
    client = HttpChatClient(f"{root}/v1", "local", 300)
    body: dict[str, Any] = {"model": "smollm2", "messages": [{"role": "user", "content": PROMPT}],
                            "max_tokens": 600, "temperature": 0}
    streams: list[StreamReply] = []
    if stream:
        body |= {"stream": True, "stream_options": {"include_usage": True}}
    task = asyncio.ensure_future(client.post_chat(body, streams=streams))
    await asyncio.sleep(cut_s)
    task.cancel()
    try:
        await task
    except BaseException:  # noqa: BLE001 — the cut, or the reply finishing first
        pass
    await client.close()
    return streams[0].output_events if streams else 0


def one(root: str, stream: bool, cut_s: float, max_wait_s: float) -> tuple[float, float]:
    while busy(root):
        time.sleep(0.5)
    before = predicted(root)
    arrived = asyncio.run(cut_request(root, stream, cut_s))
    cut = time.monotonic()
    while busy(root) and time.monotonic() - cut < max_wait_s:
        time.sleep(0.05)
    stopped = time.monotonic() - cut
    while busy(root):  # let a request that was not stopped finish before counting
        time.sleep(0.5)
    return stopped, predicted(root) - before - arrived


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="xllamacpp", choices=("xllamacpp", "skulk"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cut-s", type=float, default=2.0)
    parser.add_argument("--max-wait-s", type=float, default=15.0)
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    proc, root = start(args.backend)
    stop_monitor = threading.Event()

    def monitor() -> None:
        while not stop_monitor.wait(0.1):
            predicted(root)

    try:
        _get(f"{root}/health")
        urllib.request.urlopen(urllib.request.Request(  # warm: the first decode pages the model in
            f"{root}/v1/chat/completions", data=json.dumps({"model": "smollm2", "max_tokens": 1, "messages": [
                {"role": "user", "content": "Hi"}]}).encode(), headers={"content-type": "application/json"}),
            timeout=120).read()
        watcher = threading.Thread(target=monitor, daemon=True)
        watcher.start()
        figures: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        loads = []
        for _ in range(args.runs):
            for stream in (True, False):
                loads.append(os.getloadavg()[0])
                figures[stream].append(one(root, stream, args.cut_s, args.max_wait_s))
        stop_monitor.set()
        watcher.join()
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    def cell(values: list[float], cap: float | None = None, digits: int = 2) -> str:
        def fmt(v: float) -> str:
            return f"≥{cap:.0f}" if cap is not None and v >= cap else f"{v:.{digits}f}"

        return f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})"

    rows = []
    for stream in (True, False):
        stops = [s for s, _ in figures[stream]]
        extra = [float(e) for _, e in figures[stream]]
        name = "streamed (default)" if stream else "plain (`stream=false`)"
        rows.append(f"| {name} | {len(stops)} | {cell(stops, args.max_wait_s)} | {cell(extra, digits=0)} |")
    body = "\n".join([
        f"## budget_cut ({args.backend}) — {time.strftime('%Y-%m-%d')}", "",
        f"{machine()} Server: aeh-llama-server --backend {args.backend}, SmolLM2-135M, 1 thread; the client "
        f"hangs up {args.cut_s:.1f} s into a 600-token reply while /metrics is read every 0.1 s. "
        f"Load (1-min average) {min(loads):.1f}–{max(loads):.1f}.", "",
        "| request | runs | s from the cut until no slot processes: median (min–max) "
        "| tokens generated that never reached the client: median (min–max) |",
        "| --- | ---: | --- | --- |", *rows])
    publish(f"budget_cut_{args.backend}", body, args.write)


if __name__ == "__main__":
    main()
