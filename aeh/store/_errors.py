"""Store errors with messages that name the file and say how to fix the problem."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from aeh.errors import AehError, RunNotFoundError

__all__ = ["AmbiguousRunIdError", "explain", "integrity_hint", "is_busy", "is_store_failure"]

#: SQLite messages that mean the store itself is in trouble, not that the SQL or data is wrong.
_FAILURES = ("locked", "busy", "full", "disk i/o", "readonly", "unable to open")


def is_busy(exc: BaseException) -> bool:
    """Another connection holds the write lock (SQLITE_BUSY / SQLITE_LOCKED)."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def is_store_failure(exc: BaseException) -> bool:
    """A write failed because of the store's state (lock, space, I/O), not the data written."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and any(word in text for word in _FAILURES)


class AmbiguousRunIdError(RunNotFoundError):
    """A run-id prefix that matches more than one stored run."""

    def __init__(self, prefix: str, matches: Sequence[str], db: str) -> None:
        shown = ", ".join(matches[:5]) + (" …" if len(matches) > 5 else "")
        AehError.__init__(
            self, f"run id prefix {prefix!r} matches several runs in {db} ({shown}) — "
            "give more characters of the run id"
        )  # fmt: skip


def explain(path: str, exc: BaseException) -> str:
    """A message that says what went wrong with the store file and how to fix it."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        hint = "another process holds the write lock; wait for it or use a separate --db file"
    elif "full" in text:
        hint = "free space on the store's disk (or raise its size limit)"
    elif "disk i/o" in text.lower():
        hint = "the disk under the store failed a read or write; check it and its free space"
    elif "not a database" in text or "malformed" in text:
        hint = "the file is not an aeh store (or is damaged); point --db at another file"
    elif "unable to open" in text or isinstance(exc, OSError):
        hint = "check that the folder exists and is writable"
    elif "readonly" in text:
        hint = "the file or its folder is read-only; copy it somewhere writable"
    else:
        hint = "check the path and that no other program is rewriting the file"
    return f"store {path}: {exc} — {hint}"


def integrity_hint(path: str, exc: sqlite3.IntegrityError) -> str:
    text = str(exc)
    if "FOREIGN KEY" in text:
        hint = "call create_run(info) before writing its attempts"
    elif "UNIQUE" in text or "PRIMARY KEY" in text:
        hint = "that run, attempt or span id is already stored; ids must be unique per run"
    else:
        hint = "the record does not fit the schema"
    return f"store {path}: {text} — {hint}"
