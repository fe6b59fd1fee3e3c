"""The run report's charts as HTML tables with inline CSS bars: no figure drawn, no PNG embedded.

Each chart of the run report was a matplotlib figure rendered to a PNG (about a fifth of the
report's CPU with the imports its rendering pulled in, and a third of its bytes). A row per task
with its figures as text and its marks on a track says the same: every number the figure
carried is printed in the row, and every mark (interval, dot, box, stacked segment) is an
absolutely positioned `<i>` on a 0–100% track, with a `title` that says its value. One `<style>`
block per chart, scoped to `.aeh-bars`, so a chart reads the same in the exported report and in
a live notebook.

The matplotlib functions in `views` (`interval_chart`, `failure_chart`, ...) stay for notebooks
that want a figure; these are what `notebooks/run_suite.ipynb` shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

import pandas as pd

from aeh._util.figure import MISSING, figure, money
from aeh.analysis import BUCKET_ABBREVIATIONS, RunResult, ScoresResult
from aeh.report._charts import PALETTE, categories
from aeh.report._expect import expect as _expect

__all__ = ["STYLE", "cost_bars", "dimension_bars", "failing_tasks", "failure_bars", "latency_bars", "pass_k_bars",
           "rate_bars"]

#: Shared by every chart (repeated per chart: each is one self-contained output).
STYLE = (
    "<style>.aeh-bars{margin:8px 0 14px}.aeh-bars figcaption{font-weight:600;margin:0 0 4px}"
    ".aeh-bars table{border-collapse:collapse;font-size:12px}"
    ".aeh-bars table td,.aeh-bars table th{padding:1px 8px;text-align:left;white-space:nowrap;border:0}"
    ".aeh-bars table td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".aeh-track{position:relative;width:360px;height:18px;"
    "background:linear-gradient(to right,#e3e3e3 1px,transparent 1px) 0 0/25% 100%,#f7f7f9}"
    ".aeh-track i{position:absolute;display:block;top:6px;height:6px}"
    ".aeh-track i.dot{top:4px;width:9px;height:9px;margin-left:-5px;border-radius:50%;border:1px solid #fff;z-index:2}"
    ".aeh-track i.band{top:0;height:18px;background:rgba(128,128,128,.18)}"
    ".aeh-track i.line{top:0;height:18px;width:0;border-left:1px dashed #777}"
    ".aeh-track i.tick{top:2px;height:14px;width:0;border-left:2px solid #444}"
    ".aeh-scale{position:relative;width:360px;height:14px;font-size:10px;color:#666}"
    ".aeh-scale span{position:absolute;transform:translateX(-50%)}"
    ".aeh-bars .key{font-size:11px;color:#555;margin:3px 0 0}"
    ".aeh-swatch{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px;vertical-align:middle}</style>"
)
_MISS_BAR = "#b0b0b0"


def _html(text: str) -> Any:
    # heavy: loaded on first use
    from IPython.display import HTML

    return HTML(text)  # type: ignore[no-untyped-call]  # IPython.display is unannotated


def _pos(value: float, top: float) -> float:
    """`value` as a percentage of a track spanning [0, top], kept on the track."""
    if top <= 0:
        return 0.0
    return max(0.0, min(100.0, 100.0 * value / top))


def _mark(kind: str, title: str, *, left: float, width: float | None = None, color: str | None = None,
          extra: str = "") -> str:
    """One mark on a track: `left` (and `width`) in percent of the track."""
    if width is not None:  # a zero-length bar still shows, inside the track
        width = max(width, 0.4)
        left = min(left, 100.0 - width)
    style = f"left:{left:.2f}%"
    if width is not None:
        style += f";width:{width:.2f}%"
    if color:
        style += f";background:{color}"
    style += extra
    cls = f' class="{kind}"' if kind else ""
    return f'<i{cls} style="{style}" title="{escape(title)}"></i>'


def _track(marks: Sequence[str]) -> str:
    return f'<td><div class="aeh-track">{"".join(marks)}</div></td>'


def _scale(top: float, fmt: Any, columns: int) -> str:
    """The track's axis: labels at 0, 25, 50, 75 and 100% of `top`, under the track column."""
    labels = "".join(f'<span style="left:{p}%">{escape(fmt(top * p / 100))}</span>' for p in (0, 25, 50, 75, 100))
    return f'<tr>{"<td></td>" * columns}<td><div class="aeh-scale">{labels}</div></td></tr>'


def _figure(chart_id: str, title: str, head: Sequence[str], rows: Sequence[str], key: str) -> Any:
    header = "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr>"
    return _html(f'{STYLE}<figure class="aeh-bars" id="{chart_id}"><figcaption>{escape(title)}</figcaption>'
                 f'<table>{header}{"".join(rows)}</table><p class="key">{key}</p></figure>')


def _rate(value: Any) -> str:
    return figure(value, "{:.2f}")


def rate_bars(result: RunResult) -> Any:
    """Each task's pass rate (dot) with its Wilson 95% interval (bar), worst first; the suite rate
    (dashed line) and its 95% interval (grey band) on every row: `views.interval_chart` as rows."""
    _expect(result, RunResult)
    table = result.table
    data = table[table["n"] > 0].sort_values("rate", kind="stable")
    if data.empty:
        return _html("<p id='rate-bars'>No task has a valid attempt: no pass rate to show.</p>")
    suite: list[str] = []
    if result.n_tasks >= 2:  # one task has no suite interval to shade
        suite = [_mark("band", f"suite 95% CI [{_rate(result.suite_low)}, {_rate(result.suite_high)}]",
                       left=_pos(result.suite_low, 1), width=_pos(result.suite_high - result.suite_low, 1)),
                 _mark("line", f"suite {_rate(result.suite_rate)}", left=_pos(result.suite_rate, 1))]
    rows = []
    for r in data.itertuples():
        label = (f"{r.task_id}: rate {_rate(r.rate)} ({int(r.successes)}/{int(r.n)}), "
                 f"Wilson 95% [{_rate(r.low)}, {_rate(r.high)}]")
        marks = [*suite,
                 _mark("", label, left=_pos(r.low, 1), width=_pos(r.high - r.low, 1), color=PALETTE[0] + "99"),
                 _mark("dot", label, left=_pos(r.rate, 1), color=PALETTE[0])]
        rows.append(f"<tr><th>{escape(str(r.task_id))} (n={int(r.n)})</th><td class='num'>{_rate(r.rate)}</td>"
                    f"<td class='num'>[{_rate(r.low)}, {_rate(r.high)}]</td>{_track(marks)}</tr>")
    rows.append(_scale(1.0, lambda v: f"{v:.2f}", 3))
    key = "dot: pass rate · bar: its Wilson 95% interval · worst task first"
    if suite:
        key += (f" · dashed line: suite rate {_rate(result.suite_rate)} · grey band: suite 95% CI "
                f"[{_rate(result.suite_low)}, {_rate(result.suite_high)}]")
    return _figure("rate-bars", "Per-task pass rate",
                   ["task", "rate", "Wilson 95%", "pass rate with Wilson 95% interval"], rows, escape(key))


def failing_tasks(result: RunResult) -> tuple[pd.DataFrame, list[str]] | None:
    """The tasks with failed attempts, most first (with their count as `_total`), and the `fail_*`
    columns that have any; None when no attempt failed."""
    table = result.table
    cols = [c for c in table.columns if c.startswith("fail_")]
    failing = table[table[cols].sum(axis=1) > 0] if cols else table.iloc[0:0]
    if failing.empty:
        return None
    present = [c for c in cols if failing[c].sum() > 0]
    order = failing.assign(_total=failing[present].sum(axis=1)).sort_values("_total", ascending=False, kind="stable")
    return order, present


def failure_bars(result: RunResult) -> Any:
    """One row per task with failures, most first, its failed attempts stacked by bucket (harness
    errors excluded): `views.failure_chart` as rows. None when no attempt failed."""
    _expect(result, RunResult)
    found = failing_tasks(result)
    if found is None:
        return None
    order, present = found
    top = float(-(-int(order["_total"].max()) // 4) * 4)  # a multiple of 4: whole counts on the scale
    colours = {c: PALETTE[j % len(PALETTE)] for j, c in enumerate(present)}
    rows = []
    for _, r in order.iterrows():
        marks, parts, left = [], [], 0.0
        for c in present:
            count = int(r[c])
            if count:
                bucket = c[5:]
                width = _pos(count, top)
                marks.append(_mark("", f"{r['task_id']}: {count} {bucket}", left=left, width=width, color=colours[c]))
                parts.append(f"{count} {BUCKET_ABBREVIATIONS.get(bucket, bucket)}")
                left += width
        rows.append(f"<tr><th>{escape(str(r['task_id']))}</th><td class='num'>{int(r['_total'])}</td>"
                    f"<td>{escape(' + '.join(parts))}</td>{_track(marks)}</tr>")
    rows.append(_scale(top, lambda v: f"{v:g}", 3))
    legend = "".join(f"<span class='aeh-swatch' style='background:{colours[c]}'></span>"
                     f"{escape(BUCKET_ABBREVIATIONS.get(c[5:], c[5:]))} {escape(c[5:])}" for c in present)
    return _figure("failure-bars", "Failed attempts by bucket",
                   ["task", "failed", "by bucket", "failed attempts (harness errors excluded)"], rows,
                   f"bucket:{legend}")


def cost_bars(result: RunResult) -> Any:
    """Per task, cost per attempt beside cost per success (what a success really costs), on one
    scale: `views.cost_chart` as rows. None for an unpriced run or one with no cost."""
    _expect(result, RunResult)
    if not result.priced:
        return None
    table = result.table
    values = pd.concat([table["cost_per_attempt_usd"], table["cost_per_success_usd"]]).dropna()
    if values.empty:
        return None
    top = float(values.max()) or 1.0
    measures = (("cost_per_attempt_usd", "per attempt", PALETTE[0]),
                ("cost_per_success_usd", "per success", PALETTE[1]))
    rows = []
    for _, r in table.iterrows():
        cells, marks = [], []
        for col, label, colour in measures:
            value = r[col]
            shown = money(value)  # NaN (no success to divide by): "—"
            cells.append(f"<td class='num'>{shown}</td>")
            if shown != MISSING:
                marks.append(_mark("", f"{r['task_id']}: {shown} {label}", left=0, width=_pos(float(value), top),
                                   color=colour, extra=";top:3px" if label == "per attempt" else ";top:10px"))
        rows.append(f"<tr><th>{escape(str(r['task_id']))}</th>{''.join(cells)}{_track(marks)}</tr>")
    rows.append(_scale(top, lambda v: "$0" if v == 0 else f"${v:.2g}", 3))
    legend = "".join(f"<span class='aeh-swatch' style='background:{c}'></span>{label}" for _, label, c in measures)
    return _figure("cost-bars", "Cost per task: per attempt vs per success (USD)",
                   ["task", "per attempt", "per success", "USD, one scale"], rows,
                   f"{legend} · no bar: no success to divide by")


def _quartiles(values: Sequence[float]) -> tuple[float, float, float, float, float]:
    """A box plot's low whisker, first quartile, median, third quartile and high whisker
    (whiskers at the furthest values within 1.5 IQR, as matplotlib draws them)."""
    # heavy: loaded on first use (pandas has imported it)
    import numpy as np

    data = np.asarray(values, dtype=float)
    q1, median, q3 = (float(v) for v in np.percentile(data, [25, 50, 75]))
    iqr = q3 - q1
    low = float(data[data >= q1 - 1.5 * iqr].min())
    high = float(data[data <= q3 + 1.5 * iqr].max())
    return low, q1, median, q3, high


def latency_bars(attempts: pd.DataFrame) -> Any:
    """Per task: a box of its attempts' latencies (whiskers, quartiles, median) and every attempt a
    dot coloured by its outcome: `views.latency_chart` as rows. None without attempts."""
    if attempts.empty:
        return None
    latency = attempts["latency_s"].dropna()
    if latency.empty:
        return None
    top = float(latency.max()) or 1.0
    outcome = {True: ("success", "#2f8f6d"), False: ("failure", "#c0392b")}
    rows = []
    # four plain columns: a groupby would slice every column of the attempts frame once per task
    timed: dict[Any, list[tuple[Any, float, Any]]] = {}
    for task, number, latency_s, success in zip(attempts["task_id"], attempts["attempt"], attempts["latency_s"],
                                                attempts["success"], strict=True):
        if not pd.isna(latency_s):
            timed.setdefault(task, []).append((number, float(latency_s), success))
    for task in categories(attempts["task_id"]):
        part = timed.get(task)
        if part is None:
            rows.append(f"<tr><th>{escape(str(task))}</th><td class='num'>0</td><td>{MISSING}</td><td></td></tr>")
            continue
        low, q1, median, q3, high = _quartiles([latency_s for _, latency_s, _ in part])
        box = f"{task}: median {median:.2f} s, quartiles {q1:.2f}–{q3:.2f} s, whiskers {low:.2f}–{high:.2f} s"
        marks = [_mark("", box, left=_pos(low, top), width=_pos(high - low, top), color="#555",
                       extra=";top:8px;height:2px"),
                 _mark("", box, left=_pos(q1, top), width=_pos(q3 - q1, top), color="#c9d3e3",
                       extra=";top:3px;height:12px;box-sizing:border-box;border:1px solid #555"),
                 _mark("tick", box, left=_pos(median, top))]
        for number, latency_s, success in part:
            if pd.isna(success):  # no verdict: no outcome to colour by
                continue
            name, colour = outcome[bool(success)]
            marks.append(_mark("dot", f"{task} attempt {number}: {latency_s:.2f} s, {name}",
                               left=_pos(float(latency_s), top), color=colour))
        rows.append(f"<tr><th>{escape(str(task))}</th><td class='num'>{len(part)}</td>"
                    f"<td class='num'>{median:.2f} s</td>{_track(marks)}</tr>")
    rows.append(_scale(top, lambda v: f"{v:.2f}", 3))
    legend = "".join(f"<span class='aeh-swatch' style='background:{c};border-radius:50%'></span>{n}"
                     for n, c in outcome.values())
    return _figure("latency-bars", "Latency per attempt (s)", ["task", "attempts", "median", "latency_s"], rows,
                   f"dot: one attempt, by outcome:{legend} · box: quartiles with the median · line: whiskers "
                   "(furthest attempts within 1.5 IQR)")


def pass_k_bars(summary: pd.DataFrame) -> Any:
    """pass^k and pass@k at each k: the rate (dot) over its 95% band (bar) in the measure's colour
    (`views.pass_k_chart` as rows; the table beside it has the figures). None when empty."""
    if summary.empty:
        return None
    colours = dict(zip(categories(summary["measure"]), PALETTE, strict=False))
    rows = []
    for k in sorted(summary["k"].unique()):
        at_k = summary[summary["k"] == k]
        marks, text = [], []
        for j, (measure, colour) in enumerate(colours.items()):
            row = at_k[at_k["measure"] == measure]
            if row.empty:
                continue
            r = row.iloc[0]
            label = f"k={int(k)} {measure} {_rate(r['rate'])} [{_rate(r['low'])}, {_rate(r['high'])}]"
            top = ";top:2px" if j == 0 else ";top:10px"
            marks += [_mark("", label, left=_pos(r["low"], 1), width=_pos(r["high"] - r["low"], 1),
                            color=colour + "55", extra=top),
                      _mark("dot", label, left=_pos(r["rate"], 1), color=colour,
                            extra=";top:0px" if j == 0 else ";top:8px")]
            text.append(f"{measure} {_rate(r['rate'])}")
        rows.append(f"<tr><th>k = {int(k)}</th><td>{escape(' · '.join(text))}</td>{_track(marks)}</tr>")
    rows.append(_scale(1.0, lambda v: f"{v:.2f}", 2))
    legend = "".join(f"<span class='aeh-swatch' style='background:{c}'></span>{escape(m)}" for m, c in colours.items())
    return _figure("pass-k-bars", "pass^k (all k succeed) and pass@k (any of k), with 95% intervals",
                   ["k", "rate", "rate with its 95% band"], rows, f"measure:{legend} · dot: rate · bar: 95% band")


def dimension_bars(scores: ScoresResult) -> Any:
    """One row per trajectory dimension, worst first: the mean over attempts as a bar, ± one sd
    clipped to [0, 1] as the whisker, n beside it (`overall` in its own colour):
    `views.dimension_chart` as rows. None without scores."""
    _expect(scores, ScoresResult)
    suite = scores.suite
    if not len(suite):
        return None
    rows = []
    for r in suite.sort_values("mean", kind="stable").itertuples():
        mean, sd = float(r.mean), (0.0 if pd.isna(r.sd) else float(r.sd))
        low, high = max(0.0, mean - sd), min(1.0, mean + sd)
        colour = PALETTE[1] if r.dimension == "overall" else PALETTE[0]
        label = f"{r.dimension}: mean {mean:.2f} ± {sd:.2f} (n={int(r.n)})"
        marks = [_mark("", label, left=0, width=_pos(mean, 1), color=colour + "cc", extra=";top:3px;height:12px"),
                 _mark("", label, left=_pos(low, 1), width=_pos(high - low, 1), color="#444",
                       extra=";top:8px;height:2px")]
        rows.append(f"<tr><th>{escape(str(r.dimension))} (n={int(r.n)})</th>"
                    f"<td class='num'>{mean:.2f} ± {sd:.2f}</td>{_track(marks)}</tr>")
    rows.append(_scale(1.0, lambda v: f"{v:.2f}", 2))
    return _figure("dimension-bars", "Trajectory dimensions (worst first)", ["dimension", "mean ± sd", "score"], rows,
                   "bar: mean score over attempts · whisker: ± 1 sd clipped to [0, 1]")
