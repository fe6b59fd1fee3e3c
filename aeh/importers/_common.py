"""Shared pieces of the importers: run metadata, JSON loading with clean errors, the write."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aeh._util.files import InputFileError, InputJsonError, load_json_file
from aeh._version import __version__
from aeh.engine.run_id import new_run_id
from aeh.errors import Problem, ValidationError
from aeh.models import Attempt, RunInfo, Span
from aeh.pricing import PriceTable, load_price_table
from aeh.store import Store, StoreLike, open_store, redaction_record

__all__ = ["iso_to_epoch", "load_json", "new_run_id", "now_iso", "run_info", "short_hash", "write_run"]


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def short_hash(data: bytes) -> str:
    """First 16 hex digits of the sha256, the same length as a suite hash."""
    return hashlib.sha256(data).hexdigest()[:16]


def iso_to_epoch(value: Any) -> float | None:
    """Seconds since the epoch of an ISO-8601 string, or None when absent or unreadable."""
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def load_json(path: Path, what: str, fix: str | None = None) -> tuple[Any, bytes]:
    """The parsed JSON and the raw bytes of `path`, read under `aeh._util.files`' bounds (regular
    file, size limit, strict JSON, nesting limit); a clean ValidationError when refused."""
    try:
        return load_json_file(path)
    except FileNotFoundError:
        raise ValidationError([Problem(str(path), "-", "file not found",
                                       fix or f"pass the path of an existing {what} file")], what) from None
    except IsADirectoryError:
        raise ValidationError([Problem(str(path), "-", "is a directory, not a file",
                                       f"pass the {what} file itself")], what) from None
    except InputFileError as exc:
        raise ValidationError([Problem(str(path), "-", str(exc), f"pass the {what} file itself")], what) from None
    except OSError as exc:
        raise ValidationError([Problem(str(path), "-", f"cannot read: {exc}",
                                       "check the path and its permissions")], what) from None
    except InputJsonError as exc:
        raise ValidationError([Problem.from_json_error(path, exc)], what) from None
    except json.JSONDecodeError as exc:
        raise ValidationError([Problem(str(path), f"line {exc.lineno}", f"not valid JSON: {exc.msg}",
                                       f"pass an uncut {what} (the file may be truncated)")], what) from None


def run_info(*, run_id: str, suite: str, suite_hash: str, adapter: str, model: str | None,
             attempts: int, concurrency: int, config: dict[str, Any],
             prices: PriceTable | None = None) -> RunInfo:
    """A finished run's metadata, stamped with the price table it was priced with (default: the shipped one)."""
    prices = prices or load_price_table()
    now = now_iso()
    return RunInfo(
        run_id=run_id, created_at=now, finished_at=now, aeh_version=__version__, suite=suite,
        suite_hash=suite_hash, adapter=adapter, model=model, seed=0, attempts=attempts,
        concurrency=concurrency, price_table_version=prices.version, price_table_date=prices.date,
        status="finished", config={"imported_at": now, **config},
    )


def write_run(db: StoreLike, info: RunInfo, batch: Sequence[tuple[Attempt, Sequence[Span]]]) -> str:
    """Create the run and write every attempt in one transaction; close the store if we opened it."""
    store = open_store(db, must_exist=False)  # an import creates the store, as a run does
    try:
        if info.config.redaction is None:
            info.config.redaction = redaction_record(store.redactor)
        store.create_run(info)
        try:
            store.write_attempts(batch)
        except BaseException:
            # The attempts rolled back as one; leave no half-imported run that looks finished.
            store.update_run(info.run_id, status="failed")
            raise
    finally:
        if not isinstance(db, Store):
            store.close()
    return info.run_id
