"""A third-party importer, registered through the `aeh.importers` entry point.

It reads a JSON-lines file of `{"task_id": …, "success": …, "output": …}` records, one per
attempt, and writes them as one stored aeh run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aeh.plugins import Attempt, new_run_id, run_info, write_run


class DemoJsonlImporter:
    name = "demo-jsonl"
    help = "demo JSON-lines results: one {task_id, success, output} object per line"

    def import_(self, paths: Sequence[str | Path], store: Any = None, **options: Any) -> str:
        rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]
        run_id = options.get("run_id") or new_run_id("demo")
        seen: dict[str, int] = {}
        batch = []
        for row in rows:
            attempt = seen[row["task_id"]] = seen.get(row["task_id"], -1) + 1
            batch.append((Attempt(run_id=run_id, task_id=row["task_id"], attempt=attempt, seed=0,
                                  success=bool(row["success"]), status="answered",
                                  final_output=row.get("output"),
                                  failure_bucket=None if row["success"] else "wrong_answer"), []))
        info = run_info(run_id=run_id, suite="demo-jsonl", suite_hash="0" * 16, adapter="demo-jsonl",
                        model=options.get("model"), attempts=max(seen.values(), default=-1) + 1,
                        concurrency=1, config={"source": "demo-jsonl"})
        return write_run(store, info, batch)


IMPORTER = DemoJsonlImporter()
