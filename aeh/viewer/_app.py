"""`aeh.view(db=None)`: the viewer's tabs and the navigation between them."""

from __future__ import annotations

import os
from html import escape

import ipywidgets as w

from aeh.report import attempt_scores, trace_document, trace_frame
from aeh.store import StoreLike
from aeh.viewer._attempts import AttemptList
from aeh.viewer._cells import STYLE
from aeh.viewer._compare import CompareView
from aeh.viewer._diff import DiffView
from aeh.viewer._ready import READY_ENV, load_compare_modules, load_scorecard_modules
from aeh.viewer._runs import RunIndex
from aeh.viewer._scorecard import Scorecard
from aeh.viewer._source import Source

__all__ = ["TABS", "Viewer", "view"]

#: The tabs, in order: run index → run → attempts → trace, and compare → trajectory diff.
TABS = ("runs", "run", "attempts", "trace", "compare", "trajectory diff")
_RUNS, _RUN, _ATTEMPTS, _TRACE, _COMPARE, _DIFF = range(len(TABS))


class Viewer(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """Every run of one store, read-only: a tab per view, and buttons that open the next one."""

    def __init__(self, db: StoreLike = None) -> None:
        self.source = Source(db)
        self.runs = RunIndex(self.source, self.open_run)
        self.run = Scorecard(self.source, self._open_task)
        self.attempts = AttemptList(self.source, self.open_attempt)
        self.trace = w.HTML("<i>open an attempt from the attempts list</i>")
        self.compare = CompareView(self.source, self.open_diff)
        self.diff = DiffView(self.source)
        self.current_run: str | None = None
        self.current_attempt: tuple[str, str, int] | None = None
        #: the trace tab's attempt as `trace_document` drew it (None before one is opened)
        self.document: dict[str, object] | None = None
        self.open_compare_button = w.Button(description="compare with…", tooltip="compare this run with another")
        self.open_compare_button.add_class("aeh-to-compare")
        self.open_compare_button.on_click(lambda _: self.open_compare(b=self.current_run))
        self.tabs = w.Tab(children=[
            self.runs, w.VBox([self.open_compare_button, self.run]), self.attempts,
            self.trace, self.compare, self.diff])
        self.tabs.titles = TABS
        self.tabs.observe(self._on_tab, names="selected_index")
        self._compare_options()
        super().__init__([STYLE, w.HTML(f"<b>aeh view</b> · store <code>{escape(str(self.source.path))}</code> "
                                        "(read-only)"), self.tabs])

    def _compare_options(self) -> None:
        page = self.runs.page_runs
        options = [(f"{s.info.run_id[:24]} · {s.info.suite} · {s.info.adapter}", s.info.run_id) for s in page]
        self.compare.set_runs(options)

    def open_run(self, run_id: str) -> None:
        """Show run `run_id`'s scorecard; its attempts list is read when the attempts tab is shown
        (a hidden tab's widgets cost the kernel and the browser as much as a shown one's)."""
        self.run.show(run_id)
        assert self.run.result is not None
        self.current_run = self.run.result.run_id
        self.attempts.show(self.current_run, self._tasks(), lazy=True)
        self.tabs.selected_index = _RUN

    def _on_tab(self, change: dict[str, object]) -> None:
        if change.get("new") == _ATTEMPTS:
            self.attempts.refresh_if_stale()

    def _tasks(self) -> list[str]:
        return self.run.task_ids

    def _open_task(self, task: str, bucket: str | None) -> None:
        if self.current_run is None:
            return
        self.attempts.show(self.current_run, self._tasks(), task=task or None, bucket=bucket)
        self.tabs.selected_index = _ATTEMPTS

    def open_attempt(self, run_id: str, task_id: str, attempt: int) -> None:
        """Show one attempt's trace."""
        self.current_attempt = (run_id, task_id, attempt)
        self._render_trace()
        self.tabs.selected_index = _TRACE

    def _render_trace(self) -> None:
        if self.current_attempt is None:
            return
        run_id, task_id, attempt = self.current_attempt
        with self.source.open() as store:
            record = store.attempt_record(run_id, task_id, attempt)
            spans = store.attempt_spans(run_id, task_id, attempt)
            scores = attempt_scores(store, record.run_id, task_id, attempt)
            run = store.run_info(run_id).model_dump(mode="json")
        self.document = trace_document(record, spans, run, scores=scores)
        self.trace.value = trace_frame(self.document)

    def open_compare(self, a: str | None = None, b: str | None = None) -> None:
        """Go to the comparison with A and B preselected (run it with the compare button)."""
        self._compare_options()
        ids = [v for _, v in self.compare.run_a.options]
        if b is not None and b not in ids:  # the run is on another page of the index: offer it too
            self.compare.set_runs([*self.compare.run_a.options, (b, b)], a=a, b=b)
        else:
            self.compare.set_runs(list(self.compare.run_a.options), a=a, b=b)
        self.tabs.selected_index = _COMPARE

    def open_diff(self, run_a: str, run_b: str, task_id: str) -> None:
        """Show the trajectory diff of one task under two runs."""
        self.diff.show(run_a, run_b, task_id)
        self.tabs.selected_index = _DIFF


def view(db: StoreLike = None) -> Viewer:
    """One viewer over every run in the store (`db`, else $AEH_DB, else the nearest runs.db), read-only.

    Run index → run scorecard → attempts → trace; compare two runs → trajectory diff of a task.
    Display it as a notebook cell's last value; `aeh view` serves the same app with Voila.
    """
    viewer = Viewer(db)
    if not os.environ.get(READY_ENV):  # a notebook: what opening a run needs, before the index shows
        load_scorecard_modules()  # (the first click came 0.1 s after the paint and shared the kernel)
    load_compare_modules(3.0 if os.environ.get(READY_ENV) else 0.0)
    return viewer
