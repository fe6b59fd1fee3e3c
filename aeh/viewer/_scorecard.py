"""A run's scorecard: the suite rate, the per-task table, trajectory dimensions and failure buckets."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from functools import partial
from html import escape
from typing import TYPE_CHECKING

import ipywidgets as w

from aeh import analysis
from aeh.store import dimension_means, dimension_overall
from aeh.viewer._cells import Pager, money, pct, rate_text
from aeh.viewer._source import Source
from aeh.viewer._table import RowButton, RowButtons, Table

if TYPE_CHECKING:  # pandas and the analysis load when a run is opened, not with the run index
    from aeh.analysis import RunResult, ScorecardPage

__all__ = ["Scorecard"]

_HEADER = ["task", "n", "passed", "rate [95% CI]", "harness errors", "failures", "cost", "latency p50"]
_COLUMNS = "240px 40px 60px 190px 100px 140px 90px 90px"


class Scorecard(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """Shows one run; each task's button lists that task's attempts."""

    def __init__(self, source: Source, open_task: Callable[[str, str | None], None], limit: int = 50) -> None:
        self._source, self._open_task = source, open_task
        #: the page shown: the run's summary, the page's task rows, every task id, the buckets
        self.page: ScorecardPage | None = None
        self._dims: list[tuple[str, str, float, int]] = []
        self._suite_dims: dict[str, tuple[float, int]] | None = None
        # A run of a thousand tasks as one grid is thousands of widgets: the task table is paged too,
        # and a page reads its own tasks' rows only (the summary is aggregated over the run).
        self.pager = Pager(limit, lambda _: self._show_tasks(), "tasks")
        self.header = w.HTML("<i>pick a run in the run index</i>")
        self.grid = Table(_HEADER, _COLUMNS)
        self.tasks = w.VBox([w.HTML("<b>tasks</b> (click one for its attempts)"), self.grid])
        self.tasks.layout.display = "none"  # until a run is shown
        self.dimensions = w.HTML()
        self.buckets = w.VBox()
        self.task_buttons: dict[str, RowButton] = {}
        self.bucket_buttons: dict[str, w.Button] = {}
        self._task_column = RowButtons("235px", "aeh-open-task")
        self._run_id: str | None = None
        super().__init__([self.header, self.buckets, self.pager, self.tasks, self.dimensions])
        self.add_class("aeh-view")

    @property
    def result(self) -> RunResult | None:
        """The run shown (summary fields over the whole run; rows: the tasks of this page)."""
        return self.page.result if self.page is not None else None

    @property
    def task_ids(self) -> list[str]:
        """Every task of the run shown, in table order."""
        return self.page.tasks if self.page is not None else []

    def show(self, run_id: str) -> None:
        """Read and show run `run_id`: its summary and its first page of tasks."""
        self._run_id, self._suite_dims = run_id, None
        self.pager.offset = 0
        self._read()
        assert self.page is not None
        result = self.page.result
        info = result.run
        rate = rate_text(result.suite_rate, result.suite_low, result.suite_high)
        warn = "".join(f"<div style='color:#a05a00'>⚠ {escape(x)}</div>" for x in result.warnings)
        self.header.value = (
            f"<h3 style='margin:4px 0'>Run {escape(result.run_id)}</h3>"
            f"<div>{escape(info.suite)} · {escape(info.adapter)} / {escape(info.model or '-')} · "
            f"{escape(info.created_at[:19])} · status <b>{escape(info.status)}</b></div>"
            f"<div class='aeh-suite-rate'>suite rate <b>{rate}</b> over {result.n_tasks} tasks "
            f"({escape(result.suite_rate_method)}) · {result.attempts_total} attempts · "
            f"harness errors {result.harness_errors} ({pct(result.harness_error_rate)}) · "
            f"cost {money(result.total_cost_usd)}</div>{warn}")
        self._show_buckets(self.page.buckets)
        self._draw_tasks()

    def _read(self) -> None:
        assert self._run_id is not None
        with self._source.open() as store:
            self.page = analysis.scorecard_page(self._run_id, store, offset=self.pager.offset, limit=self.pager.limit)
            run_id = self.page.result.run_id
            if self._suite_dims is None:
                self._suite_dims = dimension_overall(store, run_id)
            self._dims = dimension_means(store, run_id, tasks=[str(t) for t in self.page.result["task_id"]])

    def _show_tasks(self) -> None:
        if self._run_id is None:
            return
        self._read()
        self._draw_tasks()

    def _draw_tasks(self) -> None:
        assert self.page is not None
        table = self.page.result.table
        self.task_buttons = {}
        rows: list[list[RowButton | str]] = []
        for r in table.itertuples():
            task = str(r.task_id)
            button = self._task_column.make(task[:34], f"attempts of {task}", partial(self._open_task, task, None))
            self.task_buttons[task] = button
            rows.append([button, str(r.n), str(r.successes), rate_text(r.rate, r.low, r.high), str(r.harness_errors),
                         escape(str(r.failures)), money(None if not r.priced else r.cost_usd),
                         f"{r.latency_p50_s:.3f} s"])
        self.grid.show(rows)
        self.tasks.layout.display = None
        self.pager.update(len(self.page.tasks), len(table))
        self.dimensions.value = _dimensions_html(self._suite_dims or {}, self._dims)

    def _show_buckets(self, counts: dict[str, int]) -> None:
        self.bucket_buttons = {}
        for bucket, n in counts.items():
            short = analysis.BUCKET_ABBREVIATIONS.get(bucket, "harness")
            button = w.Button(description=f"{bucket} ({short}): {n}", tooltip=f"attempts in bucket {bucket}",
                              layout=w.Layout(width="auto"))
            button.add_class("aeh-open-bucket")
            button.on_click(lambda _b, bucket=bucket: self._open_task("", bucket))
            self.bucket_buttons[bucket] = button
        key = " · ".join(f"{short} = {escape(b)}" for b, short in analysis.BUCKET_ABBREVIATIONS.items())
        legend = w.HTML("<b>failure buckets</b> " + ("(click one for its attempts)" if self.bucket_buttons
                                                     else "— no failed attempt")
                        + f"<div style='color:#555;font-size:11px'>the failures column: {key}</div>")
        self.buckets.children = [legend, w.HBox(list(self.bucket_buttons.values()))]


def _dimensions_html(suite: dict[str, tuple[float, int]], dims: list[tuple[str, str, float, int]]) -> str:
    """The suite mean per dimension over every scored attempt, then the rows of the tasks on this page."""
    if not suite:
        return ("<b>trajectory dimensions</b> — none stored for this run (score them with "
                "<code>aeh score RUN</code>; the viewer never writes)")
    tasks: dict[str, dict[str, float]] = defaultdict(dict)
    for task, dim, mean, _n in dims:
        tasks[task][dim] = mean
    names = sorted(suite)
    head = "".join(f"<th>{escape(d)}</th>" for d in names)
    body = "".join(f"<tr><td>{escape(t)}</td>" + "".join(f"<td>{v[d]:.2f}</td>" if d in v else "<td>—</td>"
                                                        for d in names) + "</tr>" for t, v in sorted(tasks.items()))
    means = "".join(f"<td><b>{suite[d][0]:.2f}</b></td>" for d in names)
    mean_row = f"<tr><td><b>suite (mean)</b></td>{means}</tr>"
    return (f"<b>trajectory dimensions</b> (mean score per task, 0–1)<table class='aeh-dimensions'><thead><tr>"
            f"<th>task</th>{head}</tr></thead><tbody>{mean_row}{body}</tbody></table>")
