"""Attempts in flight against a 200 ms model through the real openai client over loopback HTTP.

    .venv/bin/python benchmarks/http_concurrency.py [--levels 1 8 32 64] [--repeat 3] [--pin] [--write]
    .venv/bin/python benchmarks/http_concurrency.py --levels 64 256 --workers 1 2 --executor-only --write

The model is `aeh.testing.FakeOpenAIServer` in its own process (so its threads do not share this
process's CPU), answering every chat completion after 200 ms. Per level c it prints:

- server capacity: replies/s of the same server with no delay, driven by a raw-socket keep-alive
  load (c connections; ~0.1 ms client CPU a request), beside the c / 0.2 s the level needs, and the
  server's own CPU per request (from /proc);
- of ideal, bare openai client (no aeh), aeh's `HttpChatClient` alone, and through aeh: N = 4·c
  calls (at least 8) take at best ceil(N / c) × 0.2 s; the figure is that ideal over the measured
  wall (best of --repeat);
- CPU per model call: the CPU spent inside the awaiting coroutine (every step of it timed with
  `time.thread_time`), around `client.chat.completions.create` for the bare client (the floor) and
  around `SingleShotAdapter.run` for aeh (request building, the openai client, span recording,
  pricing, response parsing); median of --repeat;
- Inspect AI, the peer: its openai provider (chat completions, `max_connections` = `max_samples` =
  c) asking the same server the same N questions, a whole `eval` each: of ideal (best wall) and
  process CPU per sample (median); its token counter offline (`_inspect_offline`);
- CPU per attempt (whole): the extra process CPU of a run with 2N attempts over one with N (fixed
  costs cancel): the call plus the engine's workspace, grading, scoring and storing.

The agent is the `single_shot` adapter (one model call per attempt) on toy_math.

`--workers 1 2`: a second table, the same whole run at each level with `workers=W` (W worker
processes, each with its own event loop, this process writing the store; W = 1 is the run in
this process), the adapter by name, W interleaved round by round with Inspect at the same level.
Beside each: the CPU of the driver, of the busiest worker and of everything (driver, workers and
the model server, which share the machine), and the CPU-bound ceiling of of-ideal,
ideal ÷ max(ideal, driver, busiest worker, all CPU ÷ cores): what idle cores would give.
Targets: ≥ 0.9 of ideal at 64 and ≥ 0.8 at 256 in flight; ≤ 0.8 ms client CPU per call.
`--pin` puts the server on the last core and this process on the others, so the two do not
compete for one core (on 2 cores that leaves aeh's event loop and its store writer one core).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Coroutine, Generator
from pathlib import Path
from typing import Any, TypeVar

from _inspect_offline import count_tokens_offline
from _results import machine, write_section

import aeh
from aeh.adapters.single_shot import SingleShotAdapter

T = TypeVar("T")
DELAY_S = 0.2
PROBE_MODEL = "capacity-probe"  # the server answers this model at once: its capacity, not the delay
SERVER = f"""
import sys, time
from aeh.testing.openai_server import FakeOpenAIServer, Reply
def reply(request):
    delay = 0.0 if request.get("model") == {PROBE_MODEL!r} else {DELAY_S!r}
    return Reply.text("126", model="gpt-4o-mini", delay_s=delay)
server = FakeOpenAIServer(reply).start()
print(server.base_url, flush=True)
while True:
    time.sleep(3600)
"""


class CpuTimed(Awaitable[T]):
    """Await a coroutine, summing the thread CPU of each of its steps (not of other tasks)."""

    def __init__(self, coro: Coroutine[Any, Any, T]) -> None:
        self.coro = coro
        self.cpu = 0.0

    def __await__(self) -> Generator[Any, Any, T]:
        steps = self.coro.__await__()
        value: Any = None
        error: BaseException | None = None
        while True:
            started = time.thread_time()
            try:
                yielded = steps.throw(error) if error is not None else steps.send(value)
            except StopIteration as stop:
                self.cpu += time.thread_time() - started
                return stop.value  # type: ignore[no-any-return]
            self.cpu += time.thread_time() - started
            try:
                value, error = (yield yielded), None
            except BaseException as exc:  # noqa: BLE001 — handed to the coroutine, as asyncio would
                value, error = None, exc


class TimedSingleShot(SingleShotAdapter):
    """`single_shot` whose `run` CPU (the whole model-call path) is summed across attempts."""

    cpu = 0.0
    calls = 0

    async def run(self, task: Any, ctx: Any) -> Any:
        timed = CpuTimed(super().run(task, ctx))
        try:
            return await timed
        finally:
            TimedSingleShot.cpu += timed.cpu
            TimedSingleShot.calls += 1


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid` (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def raw_load(base_url: str, c: int, seconds: float = 1.0) -> int:
    """Keep-alive POSTs of a small chat request on c connections for `seconds`; replies received."""
    host, port = base_url.split("//")[1].split("/")[0].split(":")
    body = json.dumps({"model": PROBE_MODEL, "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = (f"POST /v1/chat/completions HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
               f"content-length: {len(body)}\r\n\r\n").encode() + body
    deadline = time.perf_counter() + seconds
    done = 0

    async def connection() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection(host, int(port))
        while time.perf_counter() < deadline:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            await reader.readexactly(length)
            done += 1
        writer.close()

    await asyncio.gather(*(connection() for _ in range(c)))
    return done


def capacity(base_url: str, server_pid: int, c: int) -> tuple[float, float]:
    """(replies per second, server CPU ms per reply) at c connections with no model delay."""
    cpu = proc_cpu_s(server_pid)
    start = time.perf_counter()
    done = asyncio.run(raw_load(base_url, c))
    wall = time.perf_counter() - start
    return done / wall, (proc_cpu_s(server_pid) - cpu) / done * 1000


async def lean(base_url: str, c: int, n: int) -> tuple[float, float]:
    """(wall s, CPU s per call) of n calls, c at a time, through aeh's HttpChatClient alone."""
    from aeh.adapters._http_chat import HttpChatClient

    client = HttpChatClient(base_url, "x", 60.0)
    gate = asyncio.Semaphore(c)
    cpu = 0.0

    async def one() -> None:
        nonlocal cpu
        async with gate:
            timed = CpuTimed(client.post_chat({"model": "gpt-4o-mini",
                                               "messages": [{"role": "user", "content": "hi"}]}))
            await timed
            cpu += timed.cpu
    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    wall = time.perf_counter() - start
    await client.close()
    return wall, cpu / n


async def bare(base_url: str, c: int, n: int) -> tuple[float, float]:
    """(wall s, CPU s per call) of n calls, c at a time, through a fresh bare AsyncOpenAI."""
    import openai

    async with openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
        gate = asyncio.Semaphore(c)
        cpu = 0.0

        async def one() -> None:
            nonlocal cpu
            async with gate:
                timed = CpuTimed(client.chat.completions.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]))
                await timed
                cpu += timed.cpu
        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - start, cpu / n


def through_aeh(base_url: str, c: int, n: int, db: Path) -> tuple[float, float, float]:
    """(wall s, process CPU s, adapter-path CPU s per call) of an aeh run of n attempts."""
    adapter = TimedSingleShot(model="gpt-4o-mini", base_url=base_url, api_key="x")
    TimedSingleShot.cpu, TimedSingleShot.calls = 0.0, 0
    cpu, start = time.process_time(), time.perf_counter()
    aeh.run("toy_math", adapter=adapter, attempts=n, concurrency=c, seed=1, db=db,
            tasks=["add_then_multiply"], progress=False, max_connections=c)
    wall, used = time.perf_counter() - start, time.process_time() - cpu
    return wall, used, TimedSingleShot.cpu / max(1, TimedSingleShot.calls)


def through_workers(base_url: str, c: int, n: int, db: Path, workers: int, server_pid: int) -> dict[str, Any]:
    """A whole aeh run of n attempts on `workers` processes (1: this process): its wall, and the
    CPU of this process, of each worker (kept warm between runs) and of the model server."""
    from aeh.integrations.processes import idle_workers

    pids = idle_workers() if workers > 1 else []
    before = {pid: proc_cpu_s(pid) for pid in pids}
    server, cpu, start = proc_cpu_s(server_pid), time.process_time(), time.perf_counter()
    aeh.run("toy_math", adapter="single_shot", model="gpt-4o-mini", attempts=n, concurrency=c, seed=1, db=db,
            tasks=["add_then_multiply"], progress=False, max_connections=c, workers=workers,
            adapter_options={"base_url": base_url, "api_key": "x"})
    wall, used = time.perf_counter() - start, time.process_time() - cpu
    spent = {pid: proc_cpu_s(pid) - before[pid] for pid in idle_workers() if pid in before}
    return {"wall": wall, "driver": used, "workers": spent, "server": proc_cpu_s(server_pid) - server}


def executor_table(base_url: str, server_pid: int, levels: list[int], counts: list[int], repeat: int,
                   tmp: Path) -> list[str]:
    """Per level and worker count: of ideal (best, median), CPU, and the CPU-bound ceiling."""
    cores = os.cpu_count() or 1
    rows = ["| in flight | attempts | workers | of ideal, best (median) | Inspect AI: of ideal | "
            "driver CPU (s) | busiest worker CPU (s) | all CPU incl. server (s) | CPU ceiling: of ideal | "
            "load (1 min) |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for w in counts:  # start the workers and load what attempts use, as a notebook's first runs do
        for k in range(2):
            through_workers(base_url, 8, 32, tmp / f"warm{w}-{k}.db", w, server_pid)
    for c in levels:
        n = max(8, 4 * c)
        ideal = math.ceil(n / c) * DELAY_S
        runs: dict[int, list[dict[str, Any]]] = {w: [] for w in counts}
        peer: list[tuple[float, float]] = []
        loads = []
        for r in range(repeat):  # interleaved rounds: every variant sees the same load
            for w in counts:
                runs[w].append(through_workers(base_url, c, n, tmp / f"w{w}c{c}r{r}.db", w, server_pid))
            found = inspect_eval(base_url, c, n)
            if found is not None:
                peer.append(found)
            loads.append(float(Path("/proc/loadavg").read_text().split()[0]))
        inspect = f"{ideal / min(w for w, _ in peer):.2f}" if peer else "—"
        for w in counts:
            walls = [m["wall"] for m in runs[w]]
            driver = statistics.median(m["driver"] for m in runs[w])
            busiest = statistics.median(max(m["workers"].values(), default=m["driver"]) for m in runs[w])
            total = statistics.median(m["driver"] + sum(m["workers"].values()) + m["server"] for m in runs[w])
            bound = max(ideal, driver, busiest, total / cores)
            rows.append(f"| {c} | {n} | {w} | {ideal / min(walls):.2f} ({ideal / statistics.median(walls):.2f}) | "
                        f"{inspect} | {driver:.2f} | {busiest:.2f} | {total:.2f} | {ideal / bound:.2f} | "
                        f"{statistics.median(loads):.1f} |")
            print(rows[-1], flush=True)
    return rows


def inspect_eval(base_url: str, c: int, n: int) -> tuple[float, float] | None:
    """(wall s, process CPU s per sample) of Inspect AI asking the same server n questions, c at a
    time (its openai provider, chat completions, `max_connections` = `max_samples` = c); None
    when Inspect is not installed."""
    try:
        from inspect_ai import Task, eval
        from inspect_ai.dataset import Sample
        from inspect_ai.scorer import match
        from inspect_ai.solver import generate
    except ImportError:
        return None
    count_tokens_offline()
    os.environ.setdefault("OPENAI_API_KEY", "unused")  # the fake server takes any key
    task = Task(dataset=[Sample(input="What is 6 * 21?", target="126", id=i) for i in range(n)],
                solver=[generate()], scorer=match(), name="http_concurrency")
    with tempfile.TemporaryDirectory() as tmp:
        cpu, start = time.process_time(), time.perf_counter()
        logs = eval(task, model="openai/gpt-4o-mini", model_base_url=base_url, model_args={"responses_api": False},
                    max_connections=c, max_samples=c, log_dir=tmp, display="none", log_format="eval")
        wall, used = time.perf_counter() - start, time.process_time() - cpu
    if logs[0].status != "success":
        raise RuntimeError(f"Inspect's run ended {logs[0].status!r}")
    return wall, used / n


def start_server(pin: bool) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    if pin and (cores := sorted(os.sched_getaffinity(0))) and len(cores) > 1:
        os.sched_setaffinity(proc.pid, {cores[-1]})
        os.sched_setaffinity(0, set(cores[:-1]))
    return proc, base_url


def level(base_url: str, server_pid: int, c: int, repeat: int, tmp: Path) -> str:
    n = max(8, 4 * c)
    ideal = math.ceil(n / c) * DELAY_S
    rps, server_ms = capacity(base_url, server_pid, c)
    bare_runs, lean_runs = [], []
    for _ in range(repeat):  # interleaved, so both see the same load
        bare_runs.append(asyncio.run(bare(base_url, c, n)))
        lean_runs.append(asyncio.run(lean(base_url, c, n)))
    peer = [inspect_eval(base_url, c, n) for _ in range(repeat)]
    inspect_runs = [r for r in peer if r is not None]
    aeh_runs = [through_aeh(base_url, c, n, tmp / f"c{c}r{i}.db") for i in range(repeat)]
    doubled = [through_aeh(base_url, c, 2 * n, tmp / f"c{c}x2r{i}.db") for i in range(repeat)]
    per_attempt = statistics.median((d[1] - a[1]) / n for a, d in zip(aeh_runs, doubled, strict=True))
    peer_cells = ([f"{ideal / min(w for w, _ in inspect_runs):.2f}",
                   f"{statistics.median(cpu for _, cpu in inspect_runs) * 1000:.1f}"] if inspect_runs else ["—", "—"])
    cells = [str(c), str(n), f"{ideal:.1f}", f"{rps:.0f} (needs {c / DELAY_S:.0f})", f"{server_ms:.2f}",
             f"{ideal / min(w for w, _ in bare_runs):.2f}", f"{ideal / min(w for w, _ in lean_runs):.2f}",
             f"{ideal / min(r[0] for r in aeh_runs):.2f}", *peer_cells,
             f"{statistics.median(cpu for _, cpu in bare_runs) * 1000:.2f}",
             f"{statistics.median(cpu for _, cpu in lean_runs) * 1000:.2f}",
             f"{statistics.median(r[2] for r in aeh_runs + doubled) * 1000:.2f}", f"{per_attempt * 1000:.1f}"]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32, 64, 256])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best wall, median CPU)")
    parser.add_argument("--pin", action="store_true", help="server on the last core, this process on the rest")
    parser.add_argument("--workers", type=int, nargs="+", default=[], metavar="W",
                        help="also a whole run with workers=W at each level (e.g. 1 2)")
    parser.add_argument("--executor-only", action="store_true", help="only the --workers table")
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    proc, base_url = start_server(args.pin)
    load_before = Path("/proc/loadavg").read_text().split()[:3]
    rows = ["| in flight | attempts | ideal (s) | server capacity (replies/s) | server CPU per reply (ms) | "
            "bare openai client: of ideal | aeh HttpChatClient alone: of ideal | through aeh: of ideal | "
            "Inspect AI: of ideal | Inspect CPU per sample (ms) | "
            "bare client CPU per call (ms) | HttpChatClient CPU per call (ms) | "
            "aeh CPU per model call (ms) | aeh CPU per attempt (ms) |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    executor_rows: list[str] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            through_aeh(base_url, 2, 2, Path(tmp) / "warm.db")  # imports, first-use set-up
            asyncio.run(bare(base_url, 2, 2))
            inspect_eval(base_url, 2, 2)
            for c in args.levels if not args.executor_only else []:
                rows.append(level(base_url, proc.pid, c, args.repeat, Path(tmp)))
                print(rows[-1], flush=True)
            if args.workers:
                executor_rows = executor_table(base_url, proc.pid, args.levels, args.workers, args.repeat, Path(tmp))
    finally:
        proc.kill()
    load_after = Path("/proc/loadavg").read_text().split()[:3]
    if executor_rows:
        publish_executor(args, load_before, load_after, executor_rows)
    if args.executor_only:
        return
    body = "\n".join([
        f"## http_concurrency — {time.strftime('%Y-%m-%d')}", "", machine(),
        f"Load average before/after: {' '.join(load_before)} / {' '.join(load_after)}"
        f"{'; server pinned to the last core, the client to the others' if args.pin else ''}.", "",
        f"`benchmarks/http_concurrency.py --levels {' '.join(map(str, args.levels))} --repeat {args.repeat}"
        f"{' --pin' if args.pin else ''}`: a {DELAY_S * 1000:.0f} ms model (FakeOpenAIServer in its own "
        "process); the bare `openai.AsyncOpenAI` client, aeh's lean `HttpChatClient` alone (interleaved with it), "
        "and the `single_shot` adapter (one call per attempt, default `http_client=aeh`) through a whole aeh run; "
        "Inspect AI's openai provider (chat completions, max_connections = max_samples = in flight) on the same "
        "questions, a whole `eval` each. "
        "\"of ideal\" = ceil(N/c)·0.2 s ÷ best measured wall. Server capacity: the same server with no delay "
        "under a raw-socket keep-alive load. CPU per model call: CPU inside the awaiting coroutine (the bare "
        "`create()` call is the floor; aeh's is the whole `single_shot` run). CPU per attempt: runs of N and "
        "2N attempts, the marginal attempt's process CPU (call + workspace, grading, scoring, storing). "
        "Targets: ≥ 0.9 of ideal at 64 and ≥ 0.8 at 256 in flight; ≤ 0.8 ms client CPU per call.", "", *rows])
    print(body)
    if args.write:
        write_section("http_concurrency", body)


def publish_executor(args: argparse.Namespace, load_before: list[str], load_after: list[str],
                     rows: list[str]) -> None:
    body = "\n".join([
        f"## http_concurrency_workers — {time.strftime('%Y-%m-%d')}", "", machine(),
        f"Load average before/after: {' '.join(load_before)} / {' '.join(load_after)}.", "",
        f"`benchmarks/http_concurrency.py --levels {' '.join(map(str, args.levels))} --workers "
        f"{' '.join(map(str, args.workers))} --repeat {args.repeat}"
        f"{' --executor-only' if args.executor_only else ''}`: "
        f"the {DELAY_S * 1000:.0f} ms model; a whole aeh run (`single_shot` by name, toy_math, one call an attempt) "
        "with `workers=W` (W = 1: attempts on this process's loop; W ≥ 2: W worker processes started once, each "
        "with its share of the in-flight attempts, this process writing the store), rounds interleaved with "
        "Inspect AI's `eval` at the same level. of ideal = ceil(N/c)·0.2 s ÷ wall (best, and median of the "
        "rounds). CPU: medians over the rounds. CPU ceiling = ideal ÷ max(ideal, driver CPU, busiest worker CPU, "
        "all CPU ÷ cores): the of-ideal idle cores would allow. Targets: ≥ 0.9 of ideal at 64 and ≥ 0.8 at 256.",
        "", *rows])
    print(body)
    if args.write:
        write_section("http_concurrency_workers", body)


if __name__ == "__main__":
    main()
