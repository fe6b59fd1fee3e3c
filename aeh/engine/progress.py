"""A progress bar for library runs: a widget in Jupyter, a text bar on a terminal, nothing elsewhere."""

from __future__ import annotations

import sys
from typing import Any

from aeh.engine.scheduler import RunProgress
from aeh.models import Attempt, RunInfo, Task

__all__ = ["BarProgress", "interactive"]


def in_jupyter() -> bool:
    """True inside a Jupyter/IPython kernel (not the shell `aeh report` runs its cells in)."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None) if shell is not None else None
    ipython = get() if callable(get) else None
    # The shell `aeh report` runs a notebook's cells in (aeh.report._inprocess) is not Jupyter.
    return ipython is not None and not getattr(ipython, "aeh_report_shell", False)


def interactive() -> bool:
    """True inside a Jupyter/IPython kernel or when stderr is a terminal; False under pytest or a pipe."""
    if in_jupyter():
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(callable(isatty) and isatty())


class BarProgress(RunProgress):
    """One tqdm bar over all attempts of a run (tqdm.auto picks the widget bar in a kernel)."""

    def __init__(self) -> None:
        self._bar: Any = None

    def run_started(self, info: RunInfo, tasks: list[Task]) -> None:
        # heavy: loaded on first use (the widget bar in Jupyter, the text bar elsewhere)
        if in_jupyter():
            from tqdm.auto import tqdm
        else:
            from tqdm import tqdm

        self._bar = tqdm(total=len(tasks) * info.attempts, unit="attempt", leave=True,
                         desc=f"{info.suite} · {info.adapter}", file=sys.stderr)

    def attempt_finished(self, attempt: Attempt) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def run_finished(self, info: RunInfo) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(f"run {info.run_id}", refresh=True)
            self._bar.close()
            self._bar = None
