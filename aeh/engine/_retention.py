"""Workspace retention: keep the newest N runs' kept workspaces in a directory, remove older ones."""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["prune_workspaces"]


def prune_workspaces(root: Path, keep: int) -> list[Path]:
    """Remove all but the newest `keep` run workspace dirs (`aeh-<run id>-*`) under `root`.

    Only directories aeh names that way are touched. Returns what was removed.
    """
    runs = sorted((p for p in Path(root).glob("aeh-2*") if p.is_dir()),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    removed = []
    for old in runs[max(0, keep):]:
        shutil.rmtree(old, ignore_errors=True)
        removed.append(old)
    return removed
