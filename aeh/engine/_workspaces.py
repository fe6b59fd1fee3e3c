"""A run's workspace root: created with an owner mark, released at run end, and swept when the
run that owned it died (SIGKILL, power loss) so temp dirs do not pile up.

The mark (`.aeh-owner`: run id, pid, host) is what makes the sweep safe: only directories aeh
created and marked are touched, and only when their owner process is gone on this host.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from aeh.store import host_name, owner_alive

__all__ = ["OWNER_MARK", "clean_stale_workspaces", "make_work_root", "release_work_root"]

OWNER_MARK = ".aeh-owner"


def make_work_root(run_id: str, work_dir: Path | None) -> Path:
    """A fresh `aeh-<run id>-*` directory under `work_dir` (default: the system temp dir), marked
    as owned by this process."""
    if work_dir is not None:
        Path(work_dir).mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=f"aeh-{run_id}-", dir=work_dir))
    mark = {"run_id": run_id, "pid": os.getpid(), "host": host_name()}
    (root / OWNER_MARK).write_text(json.dumps(mark))
    return root


def release_work_root(root: Path, keep: bool) -> None:
    """At run end: remove the root, or keep it (unmarked, so no sweep ever takes it)."""
    if keep:
        (root / OWNER_MARK).unlink(missing_ok=True)
    else:
        shutil.rmtree(root, ignore_errors=True)


def clean_stale_workspaces(work_dir: Path | None) -> list[Path]:
    """Remove marked workspace roots under `work_dir` whose owner process is gone; returns them."""
    parent = Path(work_dir) if work_dir is not None else Path(tempfile.gettempdir())
    removed = []
    for root in parent.glob("aeh-2*"):
        mark = root / OWNER_MARK
        try:
            owner = json.loads(mark.read_text())
            pid, host = int(owner["pid"]), str(owner["host"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # unmarked (kept on purpose, or not aeh's) or unreadable: leave it
        if owner_alive(pid, host) is False:
            shutil.rmtree(root, ignore_errors=True)
            removed.append(root)
    return removed
