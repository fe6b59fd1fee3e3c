"""What the layers above see of the store: protocols for its readers and writers, and the one
type of a `db` argument.

The engine writes a run through `RunWriter` and reads back what a resumed run already stored
through `RunReader`, so it depends on these calls rather than on SQLite; `Store` satisfies both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from aeh.models import Attempt, RunInfo, Span

if TYPE_CHECKING:
    import polars as pl

    from aeh.store._store import Store

__all__ = ["RunReader", "RunStore", "RunWriter", "StoreLike"]

# A string alias, so that naming the type loads neither the Store nor polars.
StoreLike: TypeAlias = "Store | str | Path | None"
"""A store, or the path of one (None: the store the discovery rule finds)."""


class RunWriter(Protocol):
    """Writes one run: its row, then each finished attempt."""

    def create_run(self, info: RunInfo) -> None: ...

    def update_run(self, run_id: str, **fields: Any) -> None: ...

    def write_attempt(self, attempt: Attempt, spans: Sequence[Span] = ()) -> None: ...


class RunReader(Protocol):
    """Reads back one stored run: its metadata, attempt rows and whole attempts."""

    def run_info(self, run_id: str) -> RunInfo: ...

    def attempts_frame(self, run_id: str, columns: Sequence[str] | None = None, *,
                       failure_bucket: str | None = None) -> pl.DataFrame: ...

    def attempt_record(self, run_id: str, task_id: str, attempt: int) -> Attempt: ...


class RunStore(RunReader, RunWriter, Protocol):
    """A store a run executes against: written as it goes, read back when it resumes."""
