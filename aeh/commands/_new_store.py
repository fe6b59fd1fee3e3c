"""A store opened for a write that may be refused: when the command fails before it stored
anything, the store file it created (and the folders made for it) are removed again, so a
refused import leaves no empty runs.db behind."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from aeh.errors import ConfigError

if TYPE_CHECKING:
    from aeh.store import Store, StoreLike


__all__ = ["check_new_run_id", "store_for_write"]


def check_new_run_id(run_id: str | None) -> None:
    """Refuse a `--run-id` that could not be part of a path (`../../x`), before anything is made."""
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh._util.files import unsafe_id

    why = None if run_id is None else unsafe_id(run_id)
    if why is not None:
        raise ConfigError(f"--run-id {run_id!r} {why} — use letters, digits, '-', '_' and '.', e.g. --run-id nightly-1")


def _missing_dirs(path: Path) -> list[Path]:
    """The folders above `path` that do not exist yet, deepest first."""
    out: list[Path] = []
    parent = path.parent
    while not parent.exists():
        out.append(parent)
        parent = parent.parent
    return out


@contextmanager
def store_for_write(db: StoreLike, *, secrets: list[str] | None = None) -> Iterator[Store]:
    """`open_store(db, must_exist=False)` for a `with` block; on an exception, a store this
    call created and that holds no run is deleted with its WAL files and new folders."""
    # heavy: the store (polars) only when a command writes one
    from aeh.store import Store, locate_store, open_store

    location = None if isinstance(db, Store) else locate_store(db)
    created = location is not None and not location.exists and location.path.name != ":memory:"
    new_dirs = _missing_dirs(location.path) if created and location is not None else []
    store = open_store(db, must_exist=False, secrets=secrets)
    try:
        yield store
    except BaseException:
        empty = created and not store.runs()
        store.close()
        if empty and location is not None:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{location.path}{suffix}").unlink(missing_ok=True)
            for folder in new_dirs:
                try:
                    folder.rmdir()
                except OSError:
                    break
        raise
    else:
        store.close()
