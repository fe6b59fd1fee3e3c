"""Run ids: sortable by when the run started, unique, and optionally saying where the run came from."""

from __future__ import annotations

import datetime as dt
import uuid

__all__ = ["new_run_id"]


def new_run_id(prefix: str | None = None) -> str:
    """`YYYYmmdd-HHMMSS-xxxxxx` for a run aeh executes; `<prefix>-…` for one imported from elsewhere."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    run_id = f"{stamp}-{uuid.uuid4().hex[:6]}"
    return f"{prefix}-{run_id}" if prefix else run_id
