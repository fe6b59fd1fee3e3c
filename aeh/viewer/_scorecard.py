"""A run's scorecard: the suite rate, the per-task table, trajectory dimensions and failure buckets."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from html import escape

import ipywidgets as w
import pandas as pd

from aeh.analysis import BUCKET_ABBREVIATIONS, RunResult, run_table
from aeh.store import dimension_means
from aeh.viewer._cells import Pager, grid, money, pct, rate_text
from aeh.viewer._source import Source

__all__ = ["Scorecard"]

_HEADER = ["task", "n", "passed", "rate [95% CI]", "harness errors", "failures", "cost", "latency p50"]
_COLUMNS = "240px 40px 60px 190px 100px 140px 90px 90px"


class Scorecard(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """Shows one run; each task's button lists that task's attempts."""

    def __init__(self, source: Source, open_task: Callable[[str, str | None], None], limit: int = 50) -> None:
        self._source, self._open_task = source, open_task
        self.result: RunResult | None = None
        self._dims: list[tuple[str, str, float, int]] = []
        # A run of a thousand tasks as one grid is thousands of widgets: the task table is paged too.
        self.pager = Pager(limit, lambda _: self._show_tasks(), "tasks")
        self.header = w.HTML("<i>pick a run in the run index</i>")
        self.tasks = w.VBox()
        self.dimensions = w.HTML()
        self.buckets = w.VBox()
        self.task_buttons: dict[str, w.Button] = {}
        self.bucket_buttons: dict[str, w.Button] = {}
        super().__init__([self.header, self.buckets, self.pager, self.tasks, self.dimensions])
        self.add_class("aeh-view")

    def show(self, run_id: str) -> None:
        """Read and show run `run_id` (per-task totals are aggregated by SQLite)."""
        with self._source.open() as store:
            result = run_table(run_id, store)
            dims = dimension_means(store, result.run_id)
        self.result = result
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
        self._dims = dims
        self._show_buckets(result.table)
        self.pager.go(0)

    def _show_tasks(self) -> None:
        if self.result is None:
            return
        start = self.pager.offset
        table = self.result.table.iloc[start:start + self.pager.limit]
        self.task_buttons = {}
        rows = []
        for r in table.itertuples():
            button = w.Button(description=str(r.task_id)[:34], tooltip=f"attempts of {r.task_id}",
                              layout=w.Layout(width="235px"))
            button.add_class("aeh-open-task")
            button.on_click(lambda _b, t=str(r.task_id): self._open_task(t, None))
            self.task_buttons[str(r.task_id)] = button
            rows.append([button, str(r.n), str(r.successes), rate_text(r.rate, r.low, r.high), str(r.harness_errors),
                         escape(str(r.failures)), money(None if not r.priced else r.cost_usd),
                         f"{r.latency_p50_s:.3f} s"])
        self.tasks.children = [w.HTML("<b>tasks</b> (click one for its attempts)"), grid(_HEADER, rows, _COLUMNS)]
        self.pager.update(len(self.result.table), len(table))
        shown = set(self.task_buttons)
        self.dimensions.value = _dimensions_html(self._dims, shown)

    def _show_buckets(self, table: pd.DataFrame) -> None:
        counts = {b: int(table[f"fail_{b}"].sum()) for b in BUCKET_ABBREVIATIONS if f"fail_{b}" in table.columns}
        counts["harness_error"] = int(table["harness_errors"].sum())
        self.bucket_buttons = {}
        for bucket, n in counts.items():
            if not n:
                continue
            short = BUCKET_ABBREVIATIONS.get(bucket, "harness")
            button = w.Button(description=f"{bucket} ({short}): {n}", tooltip=f"attempts in bucket {bucket}",
                              layout=w.Layout(width="auto"))
            button.add_class("aeh-open-bucket")
            button.on_click(lambda _b, bucket=bucket: self._open_task("", bucket))
            self.bucket_buttons[bucket] = button
        key = " · ".join(f"{short} = {escape(b)}" for b, short in BUCKET_ABBREVIATIONS.items())
        legend = w.HTML("<b>failure buckets</b> " + ("(click one for its attempts)" if self.bucket_buttons
                                                     else "— no failed attempt")
                        + f"<div style='color:#555;font-size:11px'>the failures column: {key}</div>")
        self.buckets.children = [legend, w.HBox(list(self.bucket_buttons.values()))]


def _dimensions_html(dims: list[tuple[str, str, float, int]], shown: set[str]) -> str:
    """The suite mean per dimension over every task, then the rows of the tasks on this page."""
    if not dims:
        return ("<b>trajectory dimensions</b> — none stored for this run (score them with "
                "<code>aeh score RUN</code>; the viewer never writes)")
    by_dim: dict[str, list[tuple[float, int]]] = defaultdict(list)
    tasks: dict[str, dict[str, float]] = defaultdict(dict)
    for task, dim, mean, n in dims:
        by_dim[dim].append((mean, n))
        if task in shown:
            tasks[task][dim] = mean
    names = sorted(by_dim)
    suite = {d: sum(m * n for m, n in v) / sum(n for _, n in v) for d, v in by_dim.items()}
    head = "".join(f"<th>{escape(d)}</th>" for d in names)
    body = "".join(f"<tr><td>{escape(t)}</td>" + "".join(f"<td>{v[d]:.2f}</td>" if d in v else "<td>—</td>"
                                                        for d in names) + "</tr>" for t, v in sorted(tasks.items()))
    mean_row = "<tr><td><b>suite (mean)</b></td>" + "".join(f"<td><b>{suite[d]:.2f}</b></td>" for d in names) + "</tr>"
    return (f"<b>trajectory dimensions</b> (mean score per task, 0–1)<table class='aeh-dimensions'><thead><tr>"
            f"<th>task</th>{head}</tr></thead><tbody>{mean_row}{body}</tbody></table>")
