"""The exit codes' older names, kept for command modules written against them: use `aeh.errors.ExitCode`."""

from aeh.errors import ExitCode

__all__ = ["EXIT_BAD_INPUT", "EXIT_BASELINE_MISMATCH", "EXIT_CANNOT_JUDGE", "EXIT_INTERRUPTED",
           "EXIT_INVALID_RUN", "EXIT_NOT_ENOUGH_RUNS", "EXIT_OK",
           "EXIT_REGRESSION", "EXIT_STORE_FAILURE"]

EXIT_OK = ExitCode.OK
EXIT_REGRESSION = ExitCode.REGRESSION
EXIT_BAD_INPUT = ExitCode.BAD_INPUT
EXIT_INVALID_RUN = ExitCode.INVALID_RUN
EXIT_CANNOT_JUDGE = ExitCode.CANNOT_JUDGE
EXIT_NOT_ENOUGH_RUNS = ExitCode.CANNOT_JUDGE  # drift's too-few-runs is one case of cannot-judge
EXIT_BASELINE_MISMATCH = ExitCode.BASELINE_MISMATCH
EXIT_STORE_FAILURE = ExitCode.STORE_FAILURE
EXIT_INTERRUPTED = ExitCode.INTERRUPTED
