"""How fast the viewer answers a click on a 100k-attempt store: every view reads one page.

    .venv/bin/python benchmarks/viewer_pages.py [--attempts 100000] [--db PATH] [--write]

Builds the store with `store_bench`'s generator (1,000 tasks, a trajectory score per attempt,
every tenth citing a step), then times, best of 3 (first in brackets): the viewer opening on the
run index, opening the run (scorecard + first attempts page), an attempts page deep in the run,
the failed-only and cited-steps filters, one trace, and a trajectory diff. `--write` records the
figures in RESULTS.md.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _results import machine, publish
from store_bench import _attempt, _run_info

from aeh.store import AttemptFilter, Redactor, Store, attempt_page
from aeh.viewer import Viewer

RUN = "bench-run"


def build(db: Path, attempts: int, tasks: int = 1000, spans: int = 4) -> float:
    rng = random.Random(0)
    started = time.perf_counter()
    with Store(db, redactor=Redactor(enabled=False)) as store:
        store.create_run(_run_info(RUN, attempts // tasks))
        per_task = attempts // tasks
        batch = []
        for n in range(attempts):
            a, ss = _attempt(RUN, n // per_task, n % per_task, spans, rng)
            cite = [1] if n % 10 == 0 else []
            a = a.model_copy(update={"dimension_scores": [
                {"dimension": "tool_selection", "score": 0.5 if cite else 1.0, "evidence": {"steps": cite}}]})
            batch.append((a, ss))
            if len(batch) == 2000:
                store.write_attempts(batch)
                batch = []
        if batch:
            store.write_attempts(batch)
        store.update_run(RUN, status="finished")
    return time.perf_counter() - started


def timed(fn: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), times[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=100_000)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--write", action="store_true", help="record the figures in RESULTS.md")
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp()) / "viewer.db"
    built = f"built in {build(db, args.attempts):.0f} s; " if not db.exists() or args.db is None else ""
    viewer = Viewer(db)
    deep = args.attempts // 2

    def deep_page() -> None:
        viewer.attempts.pager.go(deep)

    def filtered(**kw: bool) -> Callable[[], object]:
        def read() -> object:
            with Store(db, read_only=True) as store:
                return attempt_page(store, RUN, AttemptFilter(**kw), limit=50)
        return read

    viewer.open_run(RUN)
    figures = [
        ("viewer opens (run index page)", timed(lambda: Viewer(db))),
        ("open the run: scorecard + first attempts page", timed(lambda: viewer.open_run(RUN))),
        (f"attempts page at offset {deep:,}", timed(deep_page)),
        ("failed-only page", timed(filtered(failed_only=True))),
        ("cited-steps page", timed(filtered(cited_only=True))),
        ("one trace", timed(lambda: viewer.open_attempt(RUN, "task_0500", 3))),
        ("trajectory diff (one task, two attempts)",
         timed(lambda: viewer.diff.show(RUN, RUN, "task_0500", 0, 1))),
    ]
    rows = "\n".join(f"| {name} | {best:.3f} | {first:.3f} |" for name, (best, first) in figures)
    body = (f"## viewer_pages — {time.strftime('%Y-%m-%d')} (`benchmarks/viewer_pages.py`)\n\n"
            f"{machine()} {args.attempts:,} attempts over 1,000 tasks, 4 spans each, one stored dimension score per "
            f"attempt; {built}store {db.stat().st_size / 1e6:.0f} MB. Seconds, best of 3 and the first call.\n\n"
            "| view | best (s) | first (s) |\n| --- | --- | --- |\n" + rows + "\n\n"
            "Each list reads one page (50 attempts, 25 runs) by LIMIT/OFFSET on the attempts' primary key, and the "
            "dimension scores of that page only; opening the run is mostly `aeh.load_run` (per-task totals "
            "aggregated by SQLite, latency quantiles over every attempt of the run), and the scorecard shows 50 "
            "tasks a page. Measured with other work on the machine's 2 cores.")
    publish("viewer_pages", body, args.write)


if __name__ == "__main__":
    main()
