"""How fast the viewer answers a click on a 100k-attempt store: every view reads one page.

    .venv/bin/python benchmarks/viewer_pages.py [--attempts 100000] [--db PATH] [--write]

Builds the store with `store_bench`'s generator (1,000 tasks, a trajectory score per attempt,
every tenth citing a step), then times, best of 3 (and the first call), in wall and CPU seconds:
the viewer opening on the run index, opening the run (its scorecard), the scorecard's next page
of tasks, the attempts tab (the run's first attempts page), an attempts page deep in the run, the
failed-only and cited-steps filters, one trace, compare (the run with itself), and a trajectory
diff. These are the kernel's side of a click; tests/browser/test_viewer_100k.py times the same
clicks in Chromium. `--write` records the figures in RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
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


def timed(fn: Callable[[], object], repeat: int = 3) -> tuple[float, float, float]:
    """Best wall, first wall, best CPU (seconds)."""
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(times), times[0], min(cpu)


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

    def attempts_tab() -> None:
        viewer.attempts.stale = True  # as after opening the run: the tab reads its page when shown
        viewer.attempts.refresh_if_stale()

    def deep_page() -> None:
        viewer.attempts.pager.go(deep)

    def filtered(**kw: bool) -> Callable[[], object]:
        def read() -> object:
            with Store(db, read_only=True) as store:
                return attempt_page(store, RUN, AttemptFilter(**kw), limit=50)
        return read

    viewer.open_run(RUN)
    load = os.getloadavg()[0]
    figures = [
        ("viewer opens (run index page)", timed(lambda: Viewer(db))),
        ("open the run: its scorecard (first 50 tasks)", timed(lambda: viewer.open_run(RUN))),
        ("scorecard: next page of tasks", timed(lambda: viewer.run.pager.go(50))),
        ("attempts tab: the run's first 50 attempts", timed(attempts_tab)),
        (f"attempts page at offset {deep:,}", timed(deep_page)),
        ("failed-only page", timed(filtered(failed_only=True))),
        ("cited-steps page", timed(filtered(cited_only=True))),
        ("one trace", timed(lambda: viewer.open_attempt(RUN, "task_0500", 3))),
        ("compare (the run with itself; the gate and drift wait for a click)",
         timed(lambda: viewer.compare.show(RUN, RUN))),
        ("trajectory diff (one task, two attempts)",
         timed(lambda: viewer.diff.show(RUN, RUN, "task_0500", 0, 1))),
    ]
    rows = "\n".join(f"| {name} | {best:.3f} | {first:.3f} | {cpu:.3f} |" for name, (best, first, cpu) in figures)
    body = (f"## viewer_pages — {time.strftime('%Y-%m-%d')} (`benchmarks/viewer_pages.py`)\n\n"
            f"{machine()} {args.attempts:,} attempts over 1,000 tasks, 4 spans each, one stored dimension score per "
            f"attempt; {built}store {db.stat().st_size / 1e6:.0f} MB; load average {load:.1f} at the start. "
            "Seconds: wall best of 3, the first call, and CPU best of 3.\n\n"
            "| view | wall best (s) | wall first (s) | CPU best (s) |\n| --- | --- | --- | --- |\n" + rows + "\n\n"
            "Each list reads one page (50 attempts, 50 tasks, 25 runs). The scorecard is "
            "`aeh.analysis.scorecard_page`: "
            "the run-wide figures (suite rate and interval, harness errors, cost, buckets) from the per-task totals "
            "stored when the run finished (`aeh/store/_totals.py`; one GROUP BY task_id of counts and sums when "
            "they are missing or stale), the page's rows from `task_totals` of its 50 tasks; each table page is "
            "one widget whose rows are data (`aeh/viewer/_table.py`). Compare runs `aeh.compare`; on "
            "runs of more than 20,000 attempts the dimension gate (which scores every attempt of both runs "
            "again) and the drift wait for a click.")
    publish("viewer_pages", body, args.write)


if __name__ == "__main__":
    main()
