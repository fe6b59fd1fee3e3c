"""An attempt's workspace directory, made the first time a tool, fixture or adapter needs it.

Most attempts of many suites never touch a file: on a slow file system the `mkdir` and the
final removal are a large part of what aeh adds per attempt, so the directory is only created
on first use. Graders see its path either way; a workspace nobody touched does not exist, which
reads as an empty one (a file grader reports the file missing).
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

__all__ = ["LazyWorkspace", "workspace_path"]


class LazyWorkspace:
    """`path` made on the first `get()` — once, also when sync tools ask from several threads."""

    __slots__ = ("_lock", "made", "path")

    def __init__(self, path: Path, *, made: bool = False) -> None:
        self.path = path
        self.made = made
        self._lock = threading.Lock()

    def get(self) -> Path:
        """The directory, created (empty) if this is its first use."""
        if not self.made:
            with self._lock:
                if not self.made:
                    _make_empty(self.path)
                    self.made = True
        return self.path

    def __repr__(self) -> str:
        return f"LazyWorkspace({str(self.path)!r}, made={self.made})"


def workspace_path(workspace: Path | LazyWorkspace) -> Path:
    """The directory itself, made now if it is a lazy workspace's first use."""
    return workspace.get() if isinstance(workspace, LazyWorkspace) else workspace


def _make_empty(path: Path) -> None:
    try:
        path.mkdir(parents=True)
    except FileExistsError:  # left by an earlier try of the same attempt: start clean
        shutil.rmtree(path)
        path.mkdir()
