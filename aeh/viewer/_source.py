"""Where the viewer reads: the store file the rule picks, opened read-only for each read.

A widget lives as long as its notebook or Voila page; holding a connection for that long would
keep the file open, so every read opens the store (cheap read-only: no migrations) and closes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from aeh.errors import StoreError
from aeh.store import Store, StoreLike, locate_store

__all__ = ["Source"]


class Source:
    """A store path; `open()` yields a read-only Store for one read."""

    def __init__(self, db: StoreLike = None) -> None:
        if isinstance(db, Store):
            db = db.path
        location = locate_store(db)
        if not location.exists:
            raise StoreError(f"no run store at {location.path} ({location.how}) — pass db= or `aeh view --db PATH` "
                             "with an existing runs.db, or make a run first: aeh run --suite smoke --adapter mock")
        self.path: Path = location.path

    @contextmanager
    def open(self) -> Iterator[Store]:
        """A read-only Store, closed when the block ends."""
        with Store(self.path, read_only=True) as store:
            yield store
