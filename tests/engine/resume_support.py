"""Per-attempt digests and store helpers shared by the resume and store-trouble tests."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from aeh.engine.scheduler import RunProgress
from aeh.models import Attempt
from aeh.store import Store

Digest = tuple[str, int, bool, str | None, str | None, int]


def digests(db: str | Path | Store, run_id: str) -> list[Digest]:
    """(task, attempt index, verdict, failure bucket, answer, seed) of every stored attempt."""
    columns = ["task_id", "attempt", "success", "failure_bucket", "final_output", "seed"]
    if isinstance(db, Store):
        return [tuple(r) for r in db.attempts_frame(run_id, columns=columns).rows()]  # type: ignore[misc]
    with Store(db) as store:
        return [tuple(r) for r in store.attempts_frame(run_id, columns=columns).rows()]  # type: ignore[misc]


def stored_count(db: Path) -> int:
    """Attempts stored so far, read the way another process would (0 before the store exists)."""
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return int(conn.execute("SELECT count(*) FROM attempts").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0  # the schema is still being created


def only_run_id(db: Path) -> str:
    with Store(db) as store:
        runs = store.runs()
    assert len(runs) == 1, [r.run_id for r in runs]
    return runs[0].run_id


def clean_digests(tmp: Path, suite: str, attempts: int, seed: int, **options: Any) -> list[Digest]:
    """The digests of an uninterrupted run of the same suite and seed."""
    import aeh

    db = tmp / "clean.db"
    run_id = aeh.run(suite, attempts=attempts, concurrency=8, seed=seed, db=db, **options).run_id
    return digests(db, run_id)


class CancelAfter(RunProgress):
    """Cancels the run once `n` attempts have finished, as Ctrl-C does."""

    def __init__(self, n: int) -> None:
        self.n, self.seen = n, 0
        self.task: asyncio.Task[Any] | None = None

    def attempt_finished(self, attempt: Attempt) -> None:
        self.seen += 1
        if self.seen == self.n and self.task is not None:
            self.task.cancel()
