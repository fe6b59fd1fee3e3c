"""A run's attempts, one page at a time: input, target, verdict, bucket, answer, cost, latency,
dimension scores; a search reads the task, its input and target, the answer and the error."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from html import escape

import ipywidgets as w

from aeh.models import FAILURE_PRIORITY
from aeh.report import input_and_target
from aeh.store import AttemptFilter, AttemptRow, Store, attempt_page
from aeh.viewer._cells import Pager, money, verdict_html
from aeh.viewer._source import Source
from aeh.viewer._table import RowButton, RowButtons, Table

__all__ = ["AttemptList"]

_ALL = "(all)"
_HEADER = ["attempt", "input", "target", "verdict", "answer", "cost", "latency", "steps", "dimensions",
           "cited steps"]
_COLUMNS = "230px minmax(140px, 1fr) minmax(120px, 0.8fr) 150px minmax(140px, 1fr) 80px 70px 50px 200px 120px"
#: Characters of a task's input and target shown in a row (the trace shows them whole).
_CELL_CHARS = 160


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
        self.search = w.Text(placeholder="search task, input, target, answer, error", continuous_update=False,
                             layout=w.Layout(width="300px"))
        self.pager = Pager(limit, lambda _: self.refresh(), "attempts")
        #: task → (input, target) of the run shown, read from one attempt of each task when needed
        self.task_text: dict[str, tuple[str, str]] = {}
        self.header = w.HTML("<i>pick a run first</i>")
        self.grid = Table(_HEADER, _COLUMNS, empty="<i>no attempt matches</i>")
        self.table = w.VBox([self.grid])
        self.rows: list[AttemptRow] = []
        self.buttons: dict[tuple[str, int], RowButton] = {}
        self._quiet = False
        self._buttons = RowButtons("225px", "aeh-open-attempt")
        self.stale = False  # a run was shown lazily and its page is not read yet
        for control in (self.task, self.bucket, self.failed_only, self.cited_only, self.search):
            control.observe(lambda _: None if self._quiet else self.pager.go(0), names="value")
        super().__init__([self.header, w.HBox([self.task, self.bucket, self.failed_only, self.cited_only]),
                          self.search, self.pager, self.table])
        self.add_class("aeh-view")

    def show(self, run_id: str, tasks: list[str], *, task: str | None = None, bucket: str | None = None,
             failed_only: bool = False, lazy: bool = False) -> None:
        """List run `run_id`'s attempts, filtered as given; `lazy`: set the filters now, read and draw
        the page when `refresh_if_stale` is called (the tab is shown) or a filter changes."""
        if run_id != self.run_id:
            self.task_text = {}
        self.run_id = run_id
        self._quiet = True
        try:
            self.task.options = [_ALL, *tasks]
            self.task.value = task if task in tasks else _ALL
            self.bucket.value = bucket if bucket in FAILURE_PRIORITY else _ALL
            self.failed_only.value = failed_only
            self.cited_only.value = False
            self.search.value = ""
        finally:
            self._quiet = False
        self.header.value = f"<b>attempts of run {escape(run_id)}</b>"
        self.pager.offset = 0
        self.stale = True
        if not lazy:
            self.refresh()

    def refresh_if_stale(self) -> None:
        """Read and draw the page if `show(..., lazy=True)` left it unread (the tab was not shown)."""
        if self.stale:
            self.refresh()

    def _texts(self, store: Store, keys: list[tuple[str, int]]) -> None:
        """Read the input and target of each task in `keys` not read yet (one attempt of it)."""
        assert self.run_id is not None
        for task, attempt in keys:
            if task not in self.task_text:
                record = store.attempt_record(self.run_id, task, attempt)
                self.task_text[task] = input_and_target(record, store.attempt_spans(self.run_id, task, attempt))

    def current_filter(self, store: Store | None = None) -> AttemptFilter:
        """The filter the controls describe (with `store`, a search also matches tasks' input and target)."""
        text = str(self.search.value).strip()
        tasks: tuple[str, ...] = ()
        if text and store is not None and self.run_id is not None:
            frame = store.attempts_frame(self.run_id, ["task_id", "attempt"])
            first: dict[str, int] = {}
            for t, a in frame.iter_rows():
                first.setdefault(str(t), int(a))
            self._texts(store, list(first.items()))
            tasks = tuple(t for t, (said, target) in self.task_text.items()
                          if text.lower() in said.lower() or text.lower() in target.lower())
        return AttemptFilter(task_id=None if self.task.value == _ALL else str(self.task.value),
                             failure_bucket=None if self.bucket.value == _ALL else str(self.bucket.value),
                             failed_only=bool(self.failed_only.value), cited_only=bool(self.cited_only.value),
                             text=text or None, text_tasks=tasks)

    def refresh(self) -> None:
        """Read the current page (only its rows) and show it."""
        if self.run_id is None:
            return
        self.stale = False
        with self._source.open() as store:
            page = attempt_page(store, self.run_id, self.current_filter(store), limit=self.pager.limit,
                                offset=self.pager.offset)
            self._texts(store, [(r.task_id, r.attempt) for r in page.rows])
        self.rows = page.rows
        self.buttons = {}
        rows: list[list[RowButton | str]] = []
        for r in page.rows:
            button = self._buttons.make(f"{r.task_id[:26]} #{r.attempt}", "open the trace",
                                        partial(self._open_attempt, self.run_id or "", r.task_id, r.attempt))
            button.add_class("aeh-passed" if r.success else "aeh-failed")
            self.buttons[(r.task_id, r.attempt)] = button
            rows.append([button, *_cells(r, self.task_text.get(r.task_id, ("", "")))])
        self.pager.update(page.total, len(page.rows))
        self.grid.show(rows)


def _short(text: str) -> str:
    cut = text if len(text) <= _CELL_CHARS else text[:_CELL_CHARS - 1] + "…"
    return f"<span title='{escape(text[:2000])}'>{escape(cut)}</span>" if text else "—"


def _cells(r: AttemptRow, task_text: tuple[str, str]) -> list[str]:
    answer = escape(r.answer or "") or "<i>no answer</i>"
    if r.error:
        answer += f"<div style='color:#b3261e'>error: {escape(r.error[:120])}</div>"
    dims = " ".join(f"{escape(d)} {s:.2f}" for d, s in sorted(r.dimensions.items())) or "—"
    cited = " ".join(f"{escape(d)}: {','.join(map(str, s))}" for d, s in sorted(r.cited_steps.items())) or "—"
    return [_short(task_text[0]), _short(task_text[1]), verdict_html(r.success, r.failure_bucket), answer,
            money(r.cost_usd), f"{r.latency_s:.2f} s",
            str(r.steps), f"<span style='font-size:11px'>{dims}</span>", cited]
