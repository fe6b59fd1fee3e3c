"""Trajectory dimensions in the notebooks: per-dimension bars with spread, tasks worst first.

Both take the `ScoresResult` `aeh.scores(run_id)` returns (its `.suite` and `.tasks`).
"""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd

from aeh.analysis import ScoresResult
from aeh.report._charts import PALETTE
from aeh.report._expect import expect as _expect

__all__ = ["dimension_chart", "dimension_table", "whiskers"]

_OVERALL = "overall"


def _html(text: str) -> Any:
    # heavy: loaded on first use
    from IPython.display import HTML

    return HTML(text)  # type: ignore[no-untyped-call]  # IPython.display is unannotated


def dimension_chart(scores: ScoresResult) -> Any:
    """One bar per dimension: the mean over attempts, ± one sd as the whisker, n in the label."""
    # heavy: loaded on first use
    import matplotlib.pyplot as plt

    _expect(scores, ScoresResult)
    suite = scores.suite
    if not len(suite):
        return None
    data = suite.sort_values("mean")
    labels = [f"{d} (n={n})" for d, n in zip(data["dimension"], data["n"], strict=True)]
    colors = [PALETTE[1] if d == _OVERALL else PALETTE[0] for d in data["dimension"]]
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(data) + 1.2))
    ax.barh(labels, data["mean"], xerr=whiskers(data["mean"], data["sd"]), color=colors, alpha=0.8,
            error_kw={"ecolor": "#444", "capsize": 3, "lw": 1})
    ax.set_xlim(0, 1.05)
    ax.set_xlabel("mean score over attempts, whisker ± 1 sd clipped to [0, 1]")
    ax.set_title("Trajectory dimensions (worst first)")
    return fig


def whiskers(mean: pd.Series, sd: pd.Series) -> list[list[float]]:
    """matplotlib's `xerr` for mean ± sd, cut at 0 and 1: scores live in [0, 1], and a whisker past
    1.0 would show values no attempt can have."""
    sd = sd.fillna(0)
    below = [min(float(s), float(m)) for m, s in zip(mean, sd, strict=True)]
    above = [min(float(s), 1.0 - float(m)) for m, s in zip(mean, sd, strict=True)]
    return [below, above]


def _cell(mean: float, sd: float, n: int) -> str:
    shade = int(255 * max(0.0, min(1.0, mean)))
    background = f"rgb(255,{shade},{shade})" if mean < 1.0 else "#eef7ee"
    spread = "" if pd.isna(sd) else f" ± {sd:.2f}"
    return f'<td style="background:{background}" title="n = {n}">{mean:.2f}{spread}</td>'


def dimension_table(scores: ScoresResult) -> Any:
    """Task × dimension means (± sd), tasks sorted worst first by overall score; red where low."""
    _expect(scores, ScoresResult)
    tasks = scores.tasks
    if not len(tasks):
        return _html("<p>No trajectory scores for this run (no scorable attempt).</p>")
    dims = sorted(set(tasks["dimension"]) - {_OVERALL}) + ([_OVERALL] if _OVERALL in set(tasks["dimension"]) else [])
    overall = tasks[tasks["dimension"] == _OVERALL].set_index("task_id")["mean"]
    order = sorted(set(tasks["task_id"]), key=lambda t: (overall.get(t, 1.0), t))
    cells = {(r.task_id, r.dimension): (r.mean, r.sd, r.n) for r in tasks.itertuples(index=False)}
    head = "<tr><th>task</th>" + "".join(f"<th>{escape(d)}</th>" for d in dims) + "</tr>"
    rows = []
    for task in order:
        row = "".join(_cell(*cells[(task, d)]) if (task, d) in cells else "<td>—</td>" for d in dims)
        rows.append(f"<tr><th>{escape(task)}</th>{row}</tr>")
    note = ("<p>Mean score per task and dimension (± sd over attempts); hover for n. "
            "<code>overall</code> is the mean of the exactly reproducible dimensions; judged ones stand apart.</p>")
    return _html(f'{note}<table id="dimension-table" class="dataframe">{head}{"".join(rows)}</table>')
