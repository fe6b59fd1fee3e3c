"""The run index: every run newest first, with its rate and interval, cost, harness errors and status."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from html import escape

import ipywidgets as w

from aeh.stats import suite_rate, wilson_interval
from aeh.store import RunSummary, run_choices, run_page
from aeh.viewer._cells import Pager, money, pct, rate_text
from aeh.viewer._source import Source
from aeh.viewer._table import RowButton, RowButtons, Table

__all__ = ["RunIndex", "summary_rate"]

_ALL = "(all)"
_HEADER = ["run", "suite", "adapter / model", "date", "rate [95% CI]", "cost", "harness errors", "status"]
_COLUMNS = "210px 90px 180px 150px 190px 90px 110px 90px"


def summary_rate(summary: RunSummary) -> tuple[float, float, float]:
    """The run's suite rate (mean of per-task rates) and its interval: task-clustered over ≥ 2 tasks
    (`aeh.stats.suite_rate`), the task's own Wilson interval for one task; NaN with no valid attempt."""
    valid = [t for t in summary.tasks if t.n]
    if len(valid) == 1:
        low, high = wilson_interval(valid[0].successes, valid[0].n)
        return valid[0].successes / valid[0].n, low, high
    s = suite_rate([t.successes / t.n for t in valid])
    return s.mean, s.low, s.high


class RunIndex(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """Filters, a page of runs, and a button per run that opens its scorecard."""

    def __init__(self, source: Source, open_run: Callable[[str], None], limit: int = 25) -> None:
        self._source, self._open_run = source, open_run
        with source.open() as store:
            choices = run_choices(store)
        self.suite = w.Dropdown(description="suite", options=[_ALL, *choices["suite"]])
        self.adapter = w.Dropdown(description="adapter", options=[_ALL, *choices["adapter"]])
        self.status = w.Dropdown(description="status", options=[_ALL, *choices["status"]])
        self.pager = Pager(limit, lambda _: self.refresh(), "runs")
        self.grid = Table(_HEADER, _COLUMNS, empty="<i>no run matches</i>")
        self.table = w.VBox([self.grid])
        self.buttons: dict[str, RowButton] = {}
        self.page_runs: list[RunSummary] = []
        self._buttons = RowButtons("205px", "aeh-open-run")
        for control in (self.suite, self.adapter, self.status):
            control.observe(lambda _: self.pager.go(0), names="value")
        super().__init__([w.HBox([self.suite, self.adapter, self.status]), self.pager, self.table])
        self.refresh()

    def _filter(self, control: w.Dropdown) -> str | None:
        return None if control.value == _ALL else str(control.value)

    def refresh(self) -> None:
        """Read the current page of runs (only those) and show it."""
        with self._source.open() as store:
            page = run_page(store, suite=self._filter(self.suite), adapter=self._filter(self.adapter),
                            status=self._filter(self.status), limit=self.pager.limit, offset=self.pager.offset)
        self.page_runs = page.runs
        self.buttons = {}
        rows: list[list[RowButton | str]] = []
        for s in page.runs:
            button = self._buttons.make(s.info.run_id, f"open run {s.info.run_id}",
                                        partial(self._open_run, s.info.run_id))
            self.buttons[s.info.run_id] = button
            rows.append([button, *self.cells(s)])
        self.pager.update(page.total, len(page.runs))
        self.grid.show(rows)

    @staticmethod
    def cells(s: RunSummary) -> list[str]:
        """The row's text cells after the run button."""
        rate, low, high = summary_rate(s)
        errors = f"{s.harness_errors} ({pct(s.harness_errors / s.attempts)})" if s.attempts else "0"
        status = s.info.status
        colour = {"finished": "#197a2c", "running": "#a05a00"}.get(status, "#b3261e")
        return [escape(s.info.suite), escape(f"{s.info.adapter} / {s.info.model or '-'}"),
                escape(s.info.created_at[:16].replace("T", " ")),
                "—" if math.isnan(rate) else rate_text(rate, low, high), money(s.cost_usd), errors,
                f"<span style='color:{colour}'>{escape(status)}</span>"]
