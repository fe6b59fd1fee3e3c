"""Which attempts changed verdict between two runs of the same tasks (e.g. a run and its replay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aeh.store import Store, using_store

__all__ = ["verdict_differences"]


def verdict_differences(original_run_id: str, replay_run_id: str,
                        db: str | Path | Store | None = None) -> list[dict[str, Any]]:
    """Attempts whose verdict (success, failure bucket) differs between two runs."""
    with using_store(db) as store:
        def verdicts(run_id: str) -> dict[tuple[str, int], tuple[bool, str | None]]:
            frame = store.attempts_frame(run_id)
            return {(r["task_id"], int(r["attempt"])): (bool(r["success"]), r["failure_bucket"])
                    for r in frame.iter_rows(named=True)}

        a, b = verdicts(original_run_id), verdicts(replay_run_id)
    out = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            out.append({"task_id": key[0], "attempt": key[1],
                        "original": a.get(key), "replay": b.get(key)})
    return out
