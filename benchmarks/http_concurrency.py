"""Attempts in flight against a 200 ms model through the real openai client over loopback HTTP.

    .venv/bin/python benchmarks/http_concurrency.py [--levels 1 8 32 64] [--write]

The model is `aeh.testing.FakeOpenAIServer` in its own process (so its threads do not share this
process's CPU), answering every chat completion after 200 ms. The agent is the `single_shot`
adapter (one model call per attempt) on toy_math, so an attempt is one HTTP round trip plus aeh's
own work. At concurrency c, N = 4·c attempts (at least 8) take at best ceil(N / c) × 0.2 s: the
figure is that ideal over the measured run wall. The server's own capacity is measured first,
beside it, with the bare openai client (no aeh) at the same concurrency. Client CPU per model call
is the extra CPU time of this process when the run has N more attempts (fixed costs cancel).
Target: ≥ 0.9 of ideal at 64 in flight, ≤ 1 ms CPU a call.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import machine, write_section

import aeh

DELAY_S = 0.2
SERVER = f"""
import sys, time
from aeh.testing.openai_server import FakeOpenAIServer, Reply
server = FakeOpenAIServer(lambda request: Reply.text("126", model="gpt-4o-mini", delay_s={DELAY_S!r})).start()
print(server.base_url, flush=True)
while True:
    time.sleep(3600)
"""


async def bare(base_url: str, c: int, n: int) -> float:
    import openai

    async with openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
        gate = asyncio.Semaphore(c)

        async def one() -> None:
            async with gate:
                await client.chat.completions.create(model="gpt-4o-mini",
                                                     messages=[{"role": "user", "content": "hi"}])
        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - start


def through_aeh(base_url: str, c: int, n: int, db: Path) -> tuple[float, float]:
    tasks = ["add_then_multiply"]
    cpu, start = time.process_time(), time.perf_counter()
    aeh.run("toy_math", adapter="single_shot", model="gpt-4o-mini", attempts=n, concurrency=c, seed=1, db=db,
            tasks=tasks, progress=False, max_connections=c,
            adapter_options={"base_url": base_url, "api_key": "x"})
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    args = parser.parse_args()
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        rows = ["| in flight | attempts | ideal (s) | bare openai client: of ideal | through aeh: of ideal | "
                "aeh CPU per model call (ms) |", "| ---: | ---: | ---: | ---: | ---: | ---: |"]
        with tempfile.TemporaryDirectory() as tmp:
            through_aeh(base_url, 2, 2, Path(tmp) / "warm.db")  # imports, client set-up
            for c in args.levels:
                n = max(8, 4 * c)
                ideal = math.ceil(n / c) * DELAY_S
                bare_wall = asyncio.run(bare(base_url, c, n))
                wall, cpu = through_aeh(base_url, c, n, Path(tmp) / f"c{c}.db")
                _, cpu_twice = through_aeh(base_url, c, 2 * n, Path(tmp) / f"c{c}x2.db")
                per_call = (cpu_twice - cpu) / n  # the marginal attempt: the run's fixed cost cancels
                rows.append(f"| {c} | {n} | {ideal:.1f} | {ideal / bare_wall:.2f} | {ideal / wall:.2f} | "
                            f"{per_call * 1000:.1f} |")
                print(rows[-1], flush=True)
    finally:
        proc.kill()
    body = "\n".join([f"## http_concurrency — {time.strftime('%Y-%m-%d')}", "", machine(), "",
                      f"`benchmarks/http_concurrency.py --levels {' '.join(map(str, args.levels))}`: a "
                      f"{DELAY_S * 1000:.0f} ms model in its own process, the `single_shot` adapter (one call per "
                      "attempt) through the real openai client; \"of ideal\" = ceil(N/c)·0.2 s ÷ measured wall. "
                      "The CPU column is the marginal attempt (runs of N and 2N): one HTTP call plus grading, "
                      "scoring and storing.", "", *rows])
    print(body)
    if args.write:
        write_section("http_concurrency", body)


if __name__ == "__main__":
    main()
