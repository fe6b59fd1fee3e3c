"""Where the run store is: one rule for the CLI, the library and the notebooks.

    1. an explicit path (`--db`, `db=`)
    2. `$AEH_DB`
    3. the nearest `runs.db` found walking up from the working directory
    4. `./runs.db` (created only by a run, never by a read)

The walk up matters in JupyterLab: a kernel starts in the notebook's folder (`notebooks/`),
while `aeh run` was typed one level above.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from aeh.errors import StoreError
from aeh.store._redact import Redactor
from aeh.store._seams import StoreLike
from aeh.store._store import Store

__all__ = ["DB_FILENAME", "DB_RULE", "StoreLocation", "default_db", "locate_store", "open_store", "resolve_db_path",
           "using_store"]

DB_FILENAME = "runs.db"
DB_RULE = ("--db/db=, else $AEH_DB, else the nearest runs.db walking up from the working "
           "directory, else ./runs.db")
_MEMORY = ":memory:"


@dataclass(frozen=True)
class StoreLocation:
    """A resolved store path and which step of the rule chose it."""

    path: Path
    how: str

    @property
    def exists(self) -> bool:
        return str(self.path) == _MEMORY or self.path.is_file()

    def __str__(self) -> str:
        state = "" if self.exists else " — does not exist yet"
        return f"store: {self.path} ({self.how}){state}"


def _walk_up(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / DB_FILENAME
        if candidate.is_file():
            return candidate
    return None


def locate_store(db: str | Path | None = None) -> StoreLocation:
    """Apply the rule and say how the path was found (notebooks print this first)."""
    if db is not None and str(db) != "":
        if str(db) == _MEMORY:
            return StoreLocation(Path(_MEMORY), "in memory")
        return StoreLocation(Path(db).expanduser().absolute(), "given explicitly")
    env = os.environ.get("AEH_DB", "").strip()
    if env:
        return StoreLocation(Path(env).expanduser().absolute(), "from $AEH_DB")
    cwd = Path.cwd()
    found = _walk_up(cwd)
    if found is not None:
        how = ("in the working directory" if found.parent == cwd
               else f"nearest {DB_FILENAME} walking up from {cwd}")
        return StoreLocation(found, how)
    return StoreLocation(cwd / DB_FILENAME, f"default: no {DB_FILENAME} in {cwd} or above")


def resolve_db_path(db: str | Path | None = None) -> Path:
    """The store path by the one rule: `db`, else $AEH_DB, else the nearest runs.db up from cwd, else ./runs.db."""
    return locate_store(db).path


def missing_store_message(location: StoreLocation) -> str:
    """What to say when a read finds no store file."""
    return (f"no run store at {location.path} ({location.how}); the store is found by: {DB_RULE} — "
            "make a run first: aeh run --suite smoke --adapter mock "
            "(or pass --db PATH / set $AEH_DB to an existing store)")


def open_store(db: StoreLike = None, *, secrets: list[str] | None = None,
               redact: bool = True, must_exist: bool = False, read_only: bool = False) -> Store:
    """Open the store the rule picks, creating it by default (as `aeh run` does). Reads pass
    `must_exist=True`: a missing file is a StoreError, and neither the file nor its folder is created.
    `read_only=True` (implies `must_exist`) opens it so that nothing can be written (viewers)."""
    if isinstance(db, Store):
        return db
    location = locate_store(db)
    if (must_exist or read_only) and not location.exists:
        raise StoreError(missing_store_message(location))
    return Store(location.path if str(location.path) != _MEMORY else _MEMORY,
                 redactor=Redactor(secrets or [], enabled=redact), read_only=read_only)


def default_db() -> str:
    """The store path by the one rule, as a string."""
    return str(resolve_db_path())


@contextmanager
def using_store(db: StoreLike = None, *, must_exist: bool = True,
                secrets: list[str] | None = None, redact: bool = True) -> Iterator[Store]:
    """The store `db` names, for the length of a `with` block.

    A Store passed in stays open (its owner closes it); a store opened here from a path is
    closed on the way out, so library calls never leave connections for the garbage collector.
    A Store passed in redacts `secrets` too for the length of the block, exactly as a store
    opened here from a path would (its own redactor decides whether redaction is on).
    """
    if isinstance(db, Store):
        own = db.redactor
        db.redactor = own.with_secrets(secrets)
        try:
            yield db
        finally:
            db.redactor = own
        return
    with open_store(db, secrets=secrets, redact=redact, must_exist=must_exist) as store:
        yield store
