"""Errors aeh raises on purpose. The CLI turns any AehError into a clean message and exit code.

`ExitCode` is the one list of the `aeh` command's exit codes (README's table is checked against it).

    AehError
    ├── ValidationError        bad input: lists every problem as `file:field: what — fix`
    │   └── SuiteLoadError     a suite that does not load
    ├── ConfigError            a bad option or combination of options
    ├── RunNotFoundError       a run id that is not in the store
    ├── StoreError             the store cannot be read or written
    │   └── StoreWriteError    a write failed on a lock held too long, a full disk, I/O (exit 6)
    ├── AdapterError           an adapter cannot start (missing key, unknown model …)
    └── MissingExtraError      a feature whose optional dependencies are not installed
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING

from aeh._util.install import install_command

if TYPE_CHECKING:
    from aeh._util.files import InputJsonError

__all__ = [
    "AdapterError",
    "AehError",
    "ConfigError",
    "ExitCode",
    "HARNESS_ERROR_LIMIT",
    "MissingExtraError",
    "Problem",
    "RunNotFoundError",
    "StoreError",
    "StoreWriteError",
    "SuiteLoadError",
    "ValidationError",
]


#: The share of attempts that may end in a harness error; above it a run is not a valid measurement.
HARNESS_ERROR_LIMIT = 0.02


class ExitCode(IntEnum):
    """The `aeh` command's exit codes."""

    OK = 0
    REGRESSION = 1
    """compare found a regression, gate a hard regression, drift a decline, run --fail-under a low rate."""
    BAD_INPUT = 2
    """A suite, option, file or run id that does not validate."""
    INVALID_RUN = 3
    """The run finished but its harness-error rate is above HARNESS_ERROR_LIMIT: not a valid measurement."""
    CANNOT_JUDGE = 4
    """compare, gate, drift: no verdict either way (an invalid or unfinished run, two suites, too few
    shared tasks, too few runs for a trend). Never a pass."""
    BASELINE_MISMATCH = 5
    """gate cannot judge: the baseline was recorded on another suite (its hash differs)."""
    STORE_FAILURE = 6
    """The store stopped taking writes (lock, full disk, I/O); the run is resumable."""
    INTERRUPTED = 130
    """Ctrl-C or SIGTERM: the run is stored as interrupted and resumable."""


class AehError(Exception):
    """Base of every error aeh raises deliberately."""

    exit_code: int = ExitCode.BAD_INPUT


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file."""

    file: str
    field: str
    message: str
    fix: str | None = None

    def __str__(self) -> str:
        text = f"{self.file}:{self.field}: {self.message}"
        return f"{text} — {self.fix}" if self.fix else text

    @classmethod
    def from_json_error(cls, where: str | Path, exc: InputJsonError) -> Problem:
        """The problem for JSON `aeh._util.files` refused (NaN, a duplicate key, nesting), at its line."""
        return cls(f"{where}:{exc.line}" if exc.line else str(where), exc.field, exc.problem, exc.fix or "fix the JSON")


class ValidationError(AehError):
    """Input that does not validate. Carries every problem found, not just the first."""

    def __init__(self, problems: list[Problem], what: str = "input") -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{what} is invalid ({len(self.problems)} problem(s)):\n{lines}")


class SuiteLoadError(ValidationError):
    """A suite that fails to load; a silently skipped task would corrupt the measurement."""

    def __init__(self, problems: list[Problem], suite: str = "suite") -> None:
        super().__init__(problems, what=f"suite {suite!r}")


class ConfigError(AehError):
    pass


class RunNotFoundError(AehError):
    def __init__(self, run_id: str, db: str) -> None:
        super().__init__(
            f"run {run_id!r} is not in {db} — list stored runs with `aeh runs --db {db}`"
        )


class StoreError(AehError):
    pass


class StoreWriteError(StoreError):
    """The store stopped taking writes (lock never released, disk full, I/O error).

    Not bad input: the run stops cleanly, keeps what was written, and can be resumed.
    """

    exit_code = ExitCode.STORE_FAILURE


class AdapterError(AehError):
    pass


class MissingExtraError(AehError):
    """A feature needs an optional extra that is not installed; the message says how to add it."""

    def __init__(self, feature: str, extra: str, missing: list[str]) -> None:
        self.feature, self.extra, self.missing = feature, extra, list(missing)
        super().__init__(
            f"{feature} needs the optional '{extra}' tools ({', '.join(missing)} not installed) — "
            f"install them with: {install_command(extra)}"
        )
