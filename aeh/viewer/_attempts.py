"""A run's attempts, one page at a time: verdict, bucket, answer, cost, latency, dimension scores."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import ipywidgets as w

from aeh.models import FAILURE_PRIORITY
from aeh.store import AttemptFilter, AttemptRow, attempt_page
from aeh.viewer._cells import Pager, grid, money, verdict_html
from aeh.viewer._source import Source

__all__ = ["AttemptList"]

_ALL = "(all)"
_HEADER = ["attempt", "verdict", "answer", "cost", "latency", "steps", "dimensions", "cited steps"]
_COLUMNS = "230px 150px minmax(160px, 1fr) 80px 70px 50px 220px 140px"


class AttemptList(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """Filters (task, bucket, failed only, cited steps) over a paged list; a button opens the trace."""

    def __init__(self, source: Source, open_attempt: Callable[[str, str, int], None], limit: int = 50) -> None:
        self._source, self._open_attempt = source, open_attempt
        self.run_id: str | None = None
        self.task = w.Dropdown(description="task", options=[_ALL], layout=w.Layout(width="340px"))
        self.bucket = w.Dropdown(description="bucket", options=[_ALL, *FAILURE_PRIORITY],
                                 layout=w.Layout(width="260px"))
        self.failed_only = w.Checkbox(description="failed only", value=False, indent=False,
                                      layout=w.Layout(width="110px"))
        self.cited_only = w.Checkbox(description="cited steps", value=False, indent=False,
                                     tooltip="attempts a trajectory dimension cites steps of",
                                     layout=w.Layout(width="110px"))
        self.pager = Pager(limit, lambda _: self.refresh(), "attempts")
        self.header = w.HTML("<i>pick a run first</i>")
        self.table = w.VBox()
        self.rows: list[AttemptRow] = []
        self.buttons: dict[tuple[str, int], w.Button] = {}
        self._quiet = False
        for control in (self.task, self.bucket, self.failed_only, self.cited_only):
            control.observe(lambda _: None if self._quiet else self.pager.go(0), names="value")
        super().__init__([self.header, w.HBox([self.task, self.bucket, self.failed_only, self.cited_only]),
                          self.pager, self.table])
        self.add_class("aeh-view")

    def show(self, run_id: str, tasks: list[str], *, task: str | None = None, bucket: str | None = None,
             failed_only: bool = False) -> None:
        """List run `run_id`'s attempts, filtered as given."""
        self.run_id = run_id
        self._quiet = True
        try:
            self.task.options = [_ALL, *tasks]
            self.task.value = task if task in tasks else _ALL
            self.bucket.value = bucket if bucket in FAILURE_PRIORITY else _ALL
            self.failed_only.value = failed_only
            self.cited_only.value = False
        finally:
            self._quiet = False
        self.header.value = f"<b>attempts of run {escape(run_id)}</b>"
        self.pager.go(0)

    def current_filter(self) -> AttemptFilter:
        """The filter the controls describe."""
        return AttemptFilter(task_id=None if self.task.value == _ALL else str(self.task.value),
                             failure_bucket=None if self.bucket.value == _ALL else str(self.bucket.value),
                             failed_only=bool(self.failed_only.value), cited_only=bool(self.cited_only.value))

    def refresh(self) -> None:
        """Read the current page (only its rows) and show it."""
        if self.run_id is None:
            return
        with self._source.open() as store:
            page = attempt_page(store, self.run_id, self.current_filter(), limit=self.pager.limit,
                                offset=self.pager.offset)
        self.rows = page.rows
        self.buttons = {}
        rows = []
        for r in page.rows:
            button = w.Button(description=f"{r.task_id[:26]} #{r.attempt}", tooltip="open the trace",
                              layout=w.Layout(width="225px"))
            button.add_class("aeh-open-attempt")
            button.add_class("aeh-passed" if r.success else "aeh-failed")
            button.on_click(lambda _b, r=r: self._open_attempt(self.run_id or "", r.task_id, r.attempt))
            self.buttons[(r.task_id, r.attempt)] = button
            rows.append([button, *_cells(r)])
        self.pager.update(page.total, len(page.rows))
        self.table.children = [grid(_HEADER, rows, _COLUMNS)] if rows else [w.HTML("<i>no attempt matches</i>")]


def _cells(r: AttemptRow) -> list[str]:
    answer = escape(r.answer or "") or "<i>no answer</i>"
    if r.error:
        answer += f"<div style='color:#b3261e'>error: {escape(r.error[:120])}</div>"
    dims = " ".join(f"{escape(d)} {s:.2f}" for d, s in sorted(r.dimensions.items())) or "—"
    cited = " ".join(f"{escape(d)}: {','.join(map(str, s))}" for d, s in sorted(r.cited_steps.items())) or "—"
    return [verdict_html(r.success, r.failure_bucket), answer, money(r.cost_usd), f"{r.latency_s:.2f} s",
            str(r.steps), f"<span style='font-size:11px'>{dims}</span>", cited]
