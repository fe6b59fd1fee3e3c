"""Compare two runs: per-task deltas with intervals (`aeh.compare`), per-dimension deltas against
noise bands (`aeh.gate`, with run A as the baseline), the drift of A's suite (`aeh.drift`), and
every validity refusal. The statistics are the analysis layer's; this view only lays them out."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from html import escape
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from aeh import analysis
from aeh.errors import AehError
from aeh.viewer._cells import Pager, pct
from aeh.viewer._source import Source
from aeh.viewer._table import RowButton, RowButtons, Table

if TYPE_CHECKING:
    from aeh.analysis import CompareResult

__all__ = ["GATE_INLINE_ATTEMPTS", "CompareView"]

#: Above this many attempts in A and B together, the dimension gate (which scores every attempt of
#: both runs again: minutes on 100k) and the drift wait for a click instead of running with compare.
GATE_INLINE_ATTEMPTS = 20_000

_HEADER = ["task", "A rate [CI]", "B rate [CI]", "Δ [95% CI]", "q", "verdict", "trajectory"]
_COLUMNS = "240px 170px 170px 190px 60px 110px 130px"


def _num(x: Any, fmt: str = "{:+.3f}") -> str:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return "—"
    return "—" if math.isnan(value) else fmt.format(value)


def _rate(rate: Any, low: Any, high: Any, n: Any) -> str:
    if _num(rate) == "—":
        return "—"
    return f"{pct(float(rate))} [{pct(float(low))}, {pct(float(high))}] n={int(n)}"


def _refusals_html(title: str, refusals: list[Any]) -> str:
    if not refusals:
        return ""
    items = "".join(f"<li><b>{escape(r.check)}</b>: {escape(r.reason)} — {escape(r.fix)}</li>" for r in refusals)
    return f"<div class='aeh-refusals'><b>{escape(title)}: cannot judge</b><ul>{items}</ul></div>"


class CompareView(w.VBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """Pick run A (baseline) and run B; a task's button opens its trajectory diff."""

    def __init__(self, source: Source, open_diff: Callable[[str, str, str], None]) -> None:
        self._source, self._open_diff = source, open_diff
        self.run_a = w.Dropdown(description="run A", options=[], layout=w.Layout(width="420px"))
        self.run_b = w.Dropdown(description="run B", options=[], layout=w.Layout(width="420px"))
        self.go = w.Button(description="compare", button_style="primary")
        self.go.add_class("aeh-compare-go")
        self.go.on_click(lambda _: self.show(str(self.run_a.value), str(self.run_b.value)))
        self.verdicts = w.HTML()
        self.grid = Table(_HEADER, _COLUMNS)
        self.tasks = w.VBox([w.HTML("<b>per task</b> (success rate, B − A; exact test, BH q)"), self.grid])
        self.tasks.layout.display = "none"  # until a comparison is shown
        self.dimensions = w.HTML()
        self.drift = w.HTML()
        self.result: CompareResult | None = None
        self.diff_buttons: dict[str, RowButton] = {}
        self._buttons = RowButtons("120px", "aeh-open-diff")
        self.pager = Pager(50, lambda _: self._tasks(), "tasks")
        self.deep = w.Button(description="run the dimension gate and the drift",
                             layout=w.Layout(width="auto", display="none"),
                             tooltip="scores every attempt of both runs again", disabled=True)
        self.deep.add_class("aeh-compare-deep")
        self.deep.on_click(lambda _: self._run_deep())
        super().__init__([w.HBox([self.run_a, self.run_b, self.go]), self.verdicts, self.deep, self.pager,
                          self.tasks, self.dimensions, self.drift])
        self.add_class("aeh-view")

    def set_runs(self, options: list[tuple[str, str]], a: str | None = None, b: str | None = None) -> None:
        """The runs to choose from (label, run id), and the pair to preselect."""
        ids = [v for _, v in options]
        self.run_a.options = self.run_b.options = options
        if ids:
            self.run_b.value = b if b in ids else ids[0]
            self.run_a.value = a if a in ids else ids[1 if len(ids) > 1 else 0]

    def show(self, run_a: str, run_b: str) -> None:
        """Compare A (baseline) with B and show every verdict (on big runs, the gate and the drift
        after a click on `deep`)."""
        with self._source.open() as store:
            result = analysis.compare(run_a, run_b, store, overlap=True)
            tasks = result.table[~result.table["task_id"].astype(str).str.startswith("<")]
            scored = int(tasks["n_a"].sum() + tasks["n_b"].sum())
            inline = scored <= GATE_INLINE_ATTEMPTS
            if inline:
                gate_html, gate_line = self._gate(store, result)
                drift_html, drift_line = self._drift(store, result)
        self.result = result
        if not inline:
            gate_html = drift_html = ""
            gate_line = (f"gate (dimensions, A as baseline): <b>not run yet</b> — it scores the {scored:,} attempts "
                         "of both runs again; click “run the dimension gate and the drift”")
            drift_line = f"drift of {escape(result.run_a_info.suite)}: <b>not run yet</b>"
        self.deep.disabled = inline
        self.deep.layout.display = None if not inline else "none"
        self._head(result, gate_line, drift_line)
        self.pager.go(0)
        self.dimensions.value = gate_html
        self.drift.value = drift_html

    def _run_deep(self) -> None:
        if self.result is None:
            return
        with self._source.open() as store:
            gate_html, gate_line = self._gate(store, self.result)
            drift_html, drift_line = self._drift(store, self.result)
        self.deep.disabled = True
        self._head(self.result, gate_line, drift_line)
        self.dimensions.value = gate_html
        self.drift.value = drift_html

    def _head(self, result: CompareResult, gate_line: str, drift_line: str) -> None:
        v = result.verdict
        self.verdicts.value = (
            f"<h3 style='margin:4px 0'>A {escape(result.run_a)} → B {escape(result.run_b)}</h3>"
            f"<div class='aeh-compare-verdict' data-verdict='{escape(v.status)}'>success rate: <b>{escape(v.status)}"
            f"</b> — {escape(v.headline)}</div>"
            + "".join(f"<div>· {escape(r)}</div>" for r in v.reasons if r != v.headline)
            + f"<div>suite A {pct(result.suite_a.rate)} [{pct(result.suite_a.low)}, {pct(result.suite_a.high)}] · "
            f"suite B {pct(result.suite_b.rate)} [{pct(result.suite_b.low)}, {pct(result.suite_b.high)}] · "
            f"{escape(result.method)}</div>"
            f"<div class='aeh-gate-verdict'>{gate_line}</div><div class='aeh-drift-verdict'>{drift_line}</div>"
            + "".join(f"<div style='color:#a05a00'>⚠ {escape(x)}</div>" for x in result.warnings)
            + _refusals_html("success-rate comparison", v.cannot_judge))

    def _tasks(self) -> None:
        """The page of per-task rows the pager points at (a thousand tasks are a thousand rows)."""
        result = self.result
        if result is None:
            return
        page = result.table.iloc[self.pager.offset:self.pager.offset + self.pager.limit]
        self.diff_buttons = {}
        rows: list[list[RowButton | str]] = []
        for r in page.itertuples():
            task = str(r.task_id)
            if task.startswith("<"):
                button: RowButton | str = ""
            else:
                button = self._buttons.make("diff steps", f"trajectory diff of {task}",
                                            partial(self._open_diff, result.run_a, result.run_b, task))
                self.diff_buttons[task] = button
            verdict = ("<span style='color:#b3261e'>regressed</span>" if r.regressed is True
                       else "<span style='color:#197a2c'>improved</span>" if r.improved is True
                       else escape(str(r.note or "")) if isinstance(r.note, str) and r.note else "")
            rows.append([f"<b>{escape(task)}</b>" if task.startswith("<") else escape(task),
                         _rate(r.rate_a, r.low_a, r.high_a, r.n_a), _rate(r.rate_b, r.low_b, r.high_b, r.n_b),
                         f"{_num(r.delta)} [{_num(r.delta_low)}, {_num(r.delta_high)}]", _num(r.q_value, "{:.3f}"),
                         verdict, button])
        self.pager.update(len(result.table), len(page))
        self.grid.show(rows)
        self.tasks.layout.display = None

    def _gate(self, store: Any, result: CompareResult) -> tuple[str, str]:
        """Per-dimension deltas against the noise band: the gate with run A as the baseline."""
        try:
            baseline = analysis.build_baseline(result.run_a, store, allow_unfinished=True)
            g = analysis.gate(baseline, result.run_b, store, allow_unfinished=True)
        except AehError as exc:  # e.g. run A is no valid measurement, or its suite cannot be loaded
            return (f"<b>trajectory dimensions</b> — not compared: {escape(str(exc))}",
                    f"gate: <b>not run</b> ({escape(str(exc).splitlines()[0])})")
        rows = "".join(
            f"<tr style='background:{'#fbe3e0' if f.regressed else 'none'}'><td>{escape(f.task_id or 'suite')}</td>"
            f"<td>{escape(f.dimension)}</td><td>{f.base:.3f}</td><td>{f.new:.3f}</td><td>{f.delta:+.3f}</td>"
            f"<td>±{f.band:.3f}</td><td>{f.threshold:.3f}</td><td>{'regressed' if f.regressed else ''}</td></tr>"
            for f in g.suite + g.tasks)
        table = ("<b>trajectory dimensions</b> (gate: a drop past the threshold and the noise band)"
                 "<table class='aeh-gate'><thead><tr><th>task</th><th>dimension</th><th>A</th><th>B</th><th>Δ</th>"
                 f"<th>band</th><th>threshold</th><th></th></tr></thead><tbody>{rows}</tbody></table>")
        reasons = "".join(f"<div>· {escape(r)}</div>" for r in g.reasons)
        return (table + _refusals_html("gate", g.cannot_judge),
                f"gate (dimensions, A as baseline): <b>{escape(g.verdict)}</b>{reasons}")

    def _drift(self, store: Any, result: CompareResult) -> tuple[str, str]:
        """The success-rate drift over A's suite's recent runs (dimension drift would score and store:
        the viewer never writes)."""
        suite = result.run_a_info.suite
        try:
            d = analysis.drift(suite, db=store, dimensions=False, allow_mixed=True, allow_unfinished=True)
        except AehError as exc:
            return "", f"drift of {escape(suite)}: <b>not computed</b> ({escape(str(exc))})"
        notes = "".join(f"<div style='color:#555'>{escape(n)}</div>" for n in d.notes)
        return (f"<b>drift of {escape(suite)}</b> over {len(d.table)} runs: slope {_num(d.slope)} per run "
                f"[{_num(d.slope_low)}, {_num(d.slope_high)}]{notes}" + _refusals_html("drift", d.cannot_judge),
                f"drift of {escape(suite)}: <b>{escape(d.status)}</b>")
