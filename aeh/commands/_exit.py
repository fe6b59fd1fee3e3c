"""The `aeh` command's exit codes, shared by every command module."""

__all__ = ["EXIT_BAD_INPUT", "EXIT_BASELINE_MISMATCH", "EXIT_CANNOT_JUDGE", "EXIT_INTERRUPTED",
           "EXIT_INVALID_RUN", "EXIT_NOT_ENOUGH_RUNS", "EXIT_OK",
           "EXIT_REGRESSION", "EXIT_STORE_FAILURE"]

EXIT_OK = 0
EXIT_REGRESSION = 1  # compare found a regression; drift found a decline
EXIT_BAD_INPUT = 2  # a suite, option, file or run id that does not validate
EXIT_INVALID_RUN = 3  # harness-error rate above 2%: not a valid measurement
#: compare, gate, drift: no verdict either way — a run with harness errors over the limit or
#: unfinished, two suites, too few shared tasks, too few runs for a trend. Never a pass.
EXIT_CANNOT_JUDGE = 4
EXIT_NOT_ENOUGH_RUNS = EXIT_CANNOT_JUDGE  # the older name: drift's too-few-runs is one case of it
EXIT_BASELINE_MISMATCH = 5  # gate: cannot judge because the baseline was recorded on another suite (hash differs)
EXIT_STORE_FAILURE = 6  # the store stopped taking writes (lock, full disk, I/O): resumable (StoreWriteError)
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM: the run is stored as interrupted and resumable
