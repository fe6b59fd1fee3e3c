"""What the shipped notebooks display: tables and charts over aeh's analysis frames.

Every rate is shown with its n and 95% interval. Functions returning HTML return
`IPython.display.HTML`; chart functions draw one matplotlib figure and return it.
"""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd

from aeh._util.figure import figure, money
from aeh.analysis import (
    BUCKET_ABBREVIATIONS,
    AgreementResult,
    CompareResult,
    PassKResult,
    RunResult,
    evaluation_cost_text,
    judge_verdicts_text,
    suite_interval_text,
)
from aeh.errors import HARNESS_ERROR_LIMIT
from aeh.report._attempts import attempts_section, bucket_legend_html
from aeh.report._bars import (
    cost_bars,
    dimension_bars,
    failing_tasks,
    failure_bars,
    latency_bars,
    pass_k_bars,
    rate_bars,
)
from aeh.report._charts import PALETTE, categorical_y, categories, desaturate, grouped_barh, legend_outside
from aeh.report._coding_views import coding_runs, is_coding_run, matrix_chart, matrix_html, public_hidden_section
from aeh.report._dimension_views import dimension_chart, dimension_table
from aeh.report._expect import expect as _expect
from aeh.report._inline import set_up_charts
from aeh.report.tables import counts_only_table
from aeh.stats import suite_rate, wilson_interval

__all__ = ["agreement_tables", "attempts_section", "bucket_legend_html", "coding_runs", "is_coding_run",
           "cost_bars", "dimension_bars", "failure_bars", "latency_bars", "pass_k_bars", "rate_bars",
           "matrix_chart", "matrix_html",
           "public_hidden_section", "compare_header", "dimension_chart", "dimension_table",
           "compare_table", "cannot_judge_html", "cost_chart", "failure_chart",
           "failure_table", "forest_plot", "interval_chart", "latency_chart", "monotone_band", "verdict_html",
           "pass_k_chart", "pass_k_summary", "plot_recovery_curve", "run_header", "setup", "suite_line", "task_table"]


def setup() -> None:
    """The report theme (seaborn's whitegrid look) and a modest resolution, so embedded PNGs stay small.

    In aeh's report shell (`aeh report`) nothing is imported here: the theme is applied when a
    cell first imports `matplotlib.pyplot`, so a report that draws no figure never imports
    matplotlib. Elsewhere (a live notebook, a kernel process) it is applied now."""
    set_up_charts()


def _html(text: str) -> Any:
    # heavy: loaded on first use
    from IPython.display import HTML

    return HTML(text)  # type: ignore[no-untyped-call]  # IPython.display is unannotated



def fmt_rate(rate: float, k: Any, n: Any, low: float, high: float) -> str:
    """`0.67 (2/3) [0.21, 0.94]`."""
    if not n:
        return f"— (0/{n or 0})"
    counts = f"{int(k)}/{int(n)}" if k is not None and not pd.isna(k) else f"n={int(n)}"
    return f"{figure(rate)} ({counts}) [{figure(low)}, {figure(high)}]"


# -- run report ---------------------------------------------------------------------------


def run_header(table: RunResult) -> Any:
    """Banner (harness errors above the limit), title, the run's metadata and the price table."""
    _expect(table, RunResult)
    a, run = table, table.run
    parts = []
    if a.invalid_measurement:
        parts.append(
            f'<div class="aeh-banner warn" id="harness-error-banner" style="padding:12px 16px;'
            f'background:#fdecea;border:1px solid #e0a5a0;color:#8a1f17;font-weight:600;border-radius:6px">'
            f"⚠ NOT A VALID MEASUREMENT: {a.harness_errors} of {a.attempts_total} attempts "
            f"({a.harness_error_rate:.1%}) were harness errors, above the {HARNESS_ERROR_LIMIT:.0%} limit. "
            "Fix the harness and re-run before reading these numbers.</div>")
    if run.status in ("interrupted", "stale", "failed"):
        planned = run.attempts * len(run.config.tasks or [])
        # A partial run's rates cover only the attempts that finished: say so before any number.
        parts.append(
            f'<div class="aeh-banner warn" id="unfinished-run-banner" style="padding:10px 14px;'
            f'background:#fff4e5;border:1px solid #e8b96a;color:#6b4200;font-weight:600;border-radius:6px;'
            f'margin:4px 0">⚠ This run did not finish (status {escape(run.status)}): '
            f"{a.attempts_total} of {planned} attempts are stored, and the rates cover only "
            "those. Finish it with "
            f"<code>aeh run --resume {escape(run.run_id)}</code>.</div>")
    for w in a.warnings:
        parts.append(f'<div class="aeh-banner warn run-warning" style="padding:10px 14px;background:#fdecea;'
                     f'border:1px solid #e0a5a0;color:#8a1f17;font-weight:600;border-radius:6px;margin:4px 0">'
                     f"⚠ {escape(w)}</div>")
    title = f"{escape(run.suite)} · {escape(str(run.model or run.adapter))}"
    parts.append(f"<h1>Run report: {title}</h1>")
    fields = [("run id", run.run_id), ("status", run.status),
              ("created / finished", f"{run.created_at} / {run.finished_at or '—'}"),
              ("suite", f"{run.suite} (hash {run.suite_hash[:12]})"),
              ("adapter / model", f"{run.adapter} / {run.model or '—'}"),
              ("attempts per task / concurrency", f"{run.attempts} / {run.concurrency}"),
              ("seed", run.seed),
              ("price table", f"version {a.price_table_version} dated {a.price_table_date}"),
              ("judge model / tier-2 prompt",
               f"{run.judge_model or '—'} / {run.tier2_prompt_version or '—'}"),
              ("fault profile", "none" if not run.fault_profile else str(run.fault_profile)),
              ("import policy", a.import_policy or "—"),
              ("harness errors", f"{a.harness_errors} of {a.attempts_total} attempts "
                                 f"({a.harness_error_rate:.1%}; limit {HARNESS_ERROR_LIMIT:.0%})"),
              ("aeh version", run.aeh_version)]
    split = a.time_split_s
    if split:
        fields.append(("time: agent / queued / grading",
                       f"{split.get('agent', 0):.2f} s / {split.get('queue', 0):.2f} s / "
                       f"{split.get('grading', 0):.2f} s (latency columns and budgets use agent time: "
                       "model + tools, queueing excluded)"))
    if a.faults_planned_rate:
        fields.append(("faults planned / injected",
                       f"rate {a.faults_planned_rate:g} / {a.faults_injected or 0} injected over "
                       f"{a.tool_calls or 0} tool calls"))
    judge = a.judge_verdicts or {}
    if judge.get("attempted") or judge.get("automatic"):
        fields.append(("judge verdicts", judge_verdicts_text(judge)))
    evaluation = evaluation_cost_text(a)
    if evaluation:
        fields.append(("cost: agent / evaluation", f"agent {money(a.total_cost_usd)} · {evaluation} "
                                                    "(evaluation is the harness's spend, not in cost per success)"))
    health = a.harness_health or {}
    if health:
        fields.append(("harness health", f"loop stalls {health.get('stall_s', 0):g} s (longest "
                                         f"{health.get('max_loop_lag_s', 0):g} s), "
                                         f"{health.get('extended_tool_timeouts', 0)} tool timeouts extended, "
                                         f"{health.get('stall_tool_timeouts', 0)} stall harness errors, "
                                         f"load average up to {health.get('load_average_max')}"
                                         + (f", over the run's loop and {health['worker_loops']} worker loops"
                                            if health.get("worker_loops") else "")))
    rows = "".join(f"<tr><th style='text-align:left;padding-right:14px'>{escape(k)}</th>"
                   f"<td style='text-align:left'>{escape(str(v))}</td></tr>" for k, v in fields)
    parts.append(f'<table id="run-metadata">{rows}</table>')
    return _html("\n".join(parts))


def suite_line(result: RunResult) -> Any:
    _expect(result, RunResult)
    a = result
    if not a.n_tasks:
        return _html("<p><b>Suite rate:</b> no task has a valid attempt.</p>")
    return _html(
        f"<p id='suite-rate'><b>Suite rate {a.suite_rate:.3f}</b>, {escape(suite_interval_text(a))}, "
        f"n = {a.n_tasks} tasks ({a.attempts_total - a.harness_errors} "
        f"valid attempts) — {escape(a.suite_rate_method)}</p>"
    )


def task_table(result: RunResult) -> Any:
    """Per task: n, successes, rate with its Wilson interval, clean successes, errors, cost, latency."""
    _expect(result, RunResult)
    table = result.table
    rows = pd.DataFrame({
        "task": table["task_id"],
        "n": table["n"],
        "k": table["successes"],
        "rate": [figure(r) for r in table["rate"]],
        "Wilson 95%": [f"[{figure(lo)}, {figure(hi)}]" if n else "—"
                       for lo, hi, n in zip(table["low"], table["high"], table["n"], strict=True)],
        "clean k": table["clean_successes"],
        "harness errors": table["harness_errors"],
        "cost / attempt": [money(v) for v in table["cost_per_attempt_usd"]],
        "cost / success": [money(v) for v in table["cost_per_success_usd"]],
        "p50 latency s": [figure(v) for v in table["latency_p50_s"]],
    })
    if "failures" in table.columns:
        rows["failures"] = [f or "—" for f in table["failures"]]
    key = ("<p class='aeh-legend' id='task-table-legend'><b>columns:</b> <code>n</code> valid attempts (harness "
           "errors excluded) · <code>k</code> successes · <code>clean k</code> successes that broke no invariant · "
           "<code>p50</code> median · <code>failures</code> failed attempts per bucket, most first</p>")
    return _html(rows.to_html(index=False, table_id="per-task-table", border=0, escape=True) + key
                 + bucket_legend_html())


def interval_chart(result: RunResult) -> Any:
    """Each task's pass rate with its Wilson interval; the suite rate and its interval as a band."""
    # heavy: loaded on first use
    import matplotlib.pyplot as plt

    _expect(result, RunResult)
    table = result.table
    data = table[table["n"] > 0].sort_values("rate")
    fig, ax = plt.subplots(figsize=(8, 0.45 * max(len(data), 2) + 1.2))
    labels = [f"{t} (n={n})" for t, n in zip(data["task_id"], data["n"], strict=True)]
    ax.hlines(labels, data["low"], data["high"], color=PALETTE[0], lw=3, alpha=0.6)
    ax.scatter(data["rate"].to_numpy(), labels, s=60, zorder=3, color=PALETTE[0], edgecolors="w", linewidths=0.75)
    ax.invert_yaxis()  # worst task first
    a = result
    if a.n_tasks >= 2:  # one task has no suite interval to shade
        ax.axvspan(a.suite_low, a.suite_high, color="grey", alpha=0.15, label="suite 95% CI")
        ax.axvline(a.suite_rate, color="grey", ls="--", lw=1, label=f"suite {a.suite_rate:.2f}")
        legend_outside(ax)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("pass rate with Wilson 95% interval")
    ax.set_title("Per-task pass rate")
    return fig


def recovery_chart(recovery: pd.DataFrame) -> Any:
    """Success rate by injected fault kind (and none), each with n and its Wilson interval."""
    # heavy: loaded on first use
    import matplotlib.pyplot as plt
    import seaborn as sns

    data = recovery[recovery["n"] > 0]
    fig, ax = plt.subplots(figsize=(7, 0.5 * max(len(data), 2) + 1.2))
    labels = [f"{k} (n={n})" for k, n in zip(data["injected"], data["n"], strict=True)]
    ax.hlines(labels, data["low"], data["high"], color=sns.color_palette()[1], lw=3, alpha=0.6)
    sns.scatterplot(x=data["success_rate"].to_numpy(), y=labels, ax=ax, s=60, zorder=3, color=sns.color_palette()[1])
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("success rate with Wilson 95% interval")
    ax.set_title(recovery.attrs["title"])  # set by recovery_by_fault: a frame without it is not its result
    return fig


def failure_table(result: RunResult) -> Any:
    """Failed attempts by root-cause bucket: count, share of valid attempts with its interval."""
    _expect(result, RunResult)
    table = result.table

    cols = [c for c in table.columns if c.startswith("fail_")]
    n = int(table["n"].sum())
    rows = []
    for c in cols:
        k = int(table[c].sum())
        if k:
            lo, hi = wilson_interval(k, n)
            rows.append(
                {
                    "bucket": c[5:],
                    "attempts": k,
                    "share of valid attempts": fmt_rate(k / n, k, n, lo, hi),
                    "tasks": ", ".join(table.loc[table[c] > 0, "task_id"]),
                }
            )
    if table["harness_errors"].sum():
        rows.append(
            {
                "bucket": "harness_error (excluded from n)",
                "attempts": int(table["harness_errors"].sum()),
                "share of valid attempts": "—",
                "tasks": ", ".join(table.loc[table["harness_errors"] > 0, "task_id"]),
            }
        )
    if not rows:
        return _html("<p>No failed attempts.</p>")
    return _html(pd.DataFrame(rows).to_html(index=False, table_id="failure-buckets", border=0))


def _task_bars(long: pd.DataFrame, x: str, hue: str, *, title: str, legend: str, row_in: float) -> Any:
    """Horizontal bars per task, one colour per `hue`, legend outside the axes."""
    # heavy: loaded on first use
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, row_in * long["task_id"].nunique() + 1.4))
    grouped_barh(ax, long, "task_id", x, hue, legend=legend)
    ax.set_title(title)
    ax.set_ylabel("")
    return fig


def failure_chart(result: RunResult) -> Any:
    """One bar per task with failures, stacked by bucket: the bar's length is the task's failed
    attempts. (A slot per bucket beside each other left 8 buckets a tenth of a row each.)"""
    # heavy: loaded on first use
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    _expect(result, RunResult)
    found = failing_tasks(result)
    if found is None:
        return None
    order, present = found
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(order) + 1.4))
    left = [0.0] * len(order)
    for j, col in enumerate(present):
        counts = [float(v) for v in order[col]]
        bucket = col[5:]
        ax.barh(range(len(order)), counts, left=left, height=0.7, color=desaturate(PALETTE[j % len(PALETTE)]),
                label=f"{BUCKET_ABBREVIATIONS.get(bucket, bucket)} {bucket}")
        left = [a + b for a, b in zip(left, counts, strict=True)]
    categorical_y(ax, [str(t) for t in order["task_id"]])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("failed attempts (harness errors excluded)")
    ax.set_title("Failed attempts by bucket")
    legend_outside(ax, title="bucket")
    return fig


def cost_chart(result: RunResult) -> Any:
    """Cost per attempt vs cost per success (what a success really costs)."""
    _expect(result, RunResult)
    if not result.priced:
        return None
    table = result.table
    long = table.melt(
        id_vars="task_id",
        value_vars=["cost_per_attempt_usd", "cost_per_success_usd"],
        var_name="measure",
        value_name="usd",
    ).dropna()
    if long.empty:
        return None
    long["measure"] = long["measure"].map(
        {"cost_per_attempt_usd": "per attempt", "cost_per_success_usd": "per success"}
    )
    fig = _task_bars(
        long, "usd", "measure", title="Cost per task: per attempt vs per success (USD)", legend="", row_in=0.5
    )
    _compact_usd_axis(fig.axes[0].xaxis)
    return fig


def _compact_usd_axis(axis: Any) -> None:
    """At most five ticks, labelled $0.0003 rather than 0.00030 and slanted: per-attempt costs of
    cheap models need five decimals, and eight such labels overlapped on a chart squeezed by long
    task ids."""
    # heavy: loaded on first use
    import numpy as np
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10], min_n_ticks=2))
    # precision=8 trims float noise such as 0.00030000000000000003 while keeping sub-cent rates.
    axis.set_major_formatter(
        FuncFormatter(lambda v, _pos: "$0" if v == 0 else "$" + np.format_float_positional(v, precision=8, trim="-"))
    )
    axis.label.set_text("")
    # Slanted labels still fit when long task ids leave the bars only a sliver of the width.
    axis.set_tick_params(labelrotation=30)
    for label in axis.get_ticklabels():
        label.set_horizontalalignment("right")


def latency_chart(attempts: pd.DataFrame) -> Any:
    """Per task: a box of attempt latencies, every attempt a dot coloured by its outcome."""
    # heavy: loaded on first use
    import matplotlib.pyplot as plt
    import numpy as np

    if attempts.empty:
        return None
    tasks = categories(attempts["task_id"])
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(tasks) + 1.4))
    groups = [attempts.loc[attempts["task_id"] == t, "latency_s"].dropna().to_numpy() for t in tasks]
    box = desaturate("#dde5f0")
    ax.boxplot(groups, positions=range(len(tasks)), orientation="horizontal", widths=0.8, showfliers=False,
               patch_artist=True, boxprops={"facecolor": box, "edgecolor": ".3"}, medianprops={"color": ".3"},
               whiskerprops={"color": ".3"}, capprops={"color": ".3"})
    row = {t: i for i, t in enumerate(tasks)}
    jitter = np.random.default_rng(0)  # the same report twice draws the same dots
    for outcome, color in (("success", "#2f8f6d"), ("failure", "#c0392b")):
        part = attempts[attempts["success"] == (outcome == "success")]
        if len(part):
            ys = [row[t] for t in part["task_id"]] + jitter.uniform(-0.1, 0.1, len(part))
            ax.scatter(part["latency_s"], ys, s=25, color=color, label=outcome, edgecolors="w", linewidths=0.5,
                       zorder=3)
    categorical_y(ax, tasks)
    legend_outside(ax, title="outcome")
    ax.set_xlabel("latency_s")
    ax.set_title("Latency per attempt (s)")
    ax.set_ylabel("")
    return fig


def pass_k_summary(result: PassKResult) -> pd.DataFrame:
    """Suite pass^k and pass@k per k with a 95% band, over the one task set that `aeh.pass_k`
    averages at every k (`.suite_tasks`), so the curve is monotone — and so is the band.

    At each k the band is the suite rate's interval (tasks as the unit) with its effective sample
    size capped (for k > 1) at the Σ n_i / k disjoint blocks of k attempts the tasks hold: without the cap a
    pass^k that is 0 on all tasks but one claims hundreds of observations ([0, 0.006] at k = 7),
    and the next k, 0 everywhere, falls back to one observation per task ([0, 0.434]). The true
    pass^k never rises with k and pass@k never falls, so each band is then narrowed by its
    neighbours' (pass^k's upper bound by every smaller k's, its lower bound by every larger k's).
    """
    _expect(result, PassKResult)
    pk = result.table
    tasks = pk[pk["task_id"] != "<suite>"]
    suite_ks = pk.loc[pk["task_id"] == "<suite>", "k"]
    tasks = tasks[tasks["task_id"].isin(result.suite_tasks) & tasks["k"].isin(suite_ks)]
    rows = []
    for k, group in tasks.groupby("k"):
        # k = 1 is the suite rate itself: it keeps the interval the header shows
        blocks = float(group["n"].sum()) / int(k) if int(k) > 1 else None
        for col, label in (("pass_hat_k", "pass^k"), ("pass_at_k", "pass@k")):
            s = suite_rate(group[col].astype(float).tolist(), max_n=blocks)
            rows.append(
                {"k": int(k), "measure": label, "rate": s.mean, "low": s.low, "high": s.high, "n tasks": len(group)}
            )
    frame = pd.DataFrame(rows, columns=["k", "measure", "rate", "low", "high", "n tasks"])
    return monotone_band(frame)


def monotone_band(summary: pd.DataFrame) -> pd.DataFrame:
    """Each measure's band narrowed to what its monotone truth allows: pass^k (never rising with k)
    keeps its running minimum of upper bounds and the reverse running maximum of lower bounds;
    pass@k (never falling) the mirror image."""
    parts = []
    for measure, group in summary.groupby("measure", sort=False):
        g = group.sort_values("k").copy()
        if measure == "pass^k":
            g["high"] = g["high"].cummin()
            g["low"] = g["low"][::-1].cummax()[::-1]
        else:
            g["low"] = g["low"].cummax()
            g["high"] = g["high"][::-1].cummin()[::-1]
        parts.append(g)
    if not parts:
        return summary
    return pd.concat(parts).sort_index()


def pass_k_chart(summary: pd.DataFrame) -> Any:
    """pass^k and pass@k against k, each line over its 95% band in the same colour."""
    # heavy: loaded on first use
    import matplotlib.pyplot as plt

    if summary.empty:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for measure, color in zip(categories(summary["measure"]), PALETTE, strict=False):
        group = summary[summary["measure"] == measure].sort_values("k")
        ax.plot(group["k"], group["rate"], marker="o", color=color, label=measure)
        ax.fill_between(group["k"], group["low"], group["high"], alpha=0.15, color=color)
    legend_outside(ax, title="measure")
    ax.set_xlabel("k")
    ax.set_ylabel("rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(sorted(summary["k"].unique()))
    ax.set_title("pass^k (all k succeed) and pass@k (any of k), with 95% intervals")
    return fig


# -- comparison ---------------------------------------------------------------------------


def compare_header(frame: CompareResult) -> Any:
    _expect(frame, CompareResult)
    a = frame
    parts = [f"<h1>Comparison: B = {escape(a.run_b)} vs baseline A = {escape(a.run_a)}</h1>"]
    for w in a.warnings:
        parts.append(
            f'<div class="aeh-banner warn" style="padding:10px 14px;background:#fdecea;'
            f'border:1px solid #e0a5a0;color:#8a1f17;border-radius:6px;margin:4px 0">⚠ {escape(w)}</div>'
        )
    ia, ib = a.run_a_info, a.run_b_info
    rows = "".join(
        f"<tr><th style='text-align:left'>{escape(k)}</th><td>{escape(str(getattr(ia, k)))}</td>"
        f"<td>{escape(str(getattr(ib, k)))}</td></tr>"
        for k in (
            "suite",
            "suite_hash",
            "adapter",
            "model",
            "attempts",
            "seed",
            "judge_model",
            "tier2_prompt_version",
            "price_table_version",
            "price_table_date",
            "status",
            "created_at",
        )
    )
    parts.append(f"<table id='runs-compared'><tr><th></th><th>A (baseline)</th><th>B (new)</th></tr>{rows}</table>")
    parts.append(verdict_html(frame))
    parts.append(f"<p>Method: {escape(a.method)}; FDR {a.fdr}.</p>")
    return _html("\n".join(parts))


def verdict_html(frame: CompareResult) -> str:
    """The gate's verdict as `aeh.compare` computed it (`.verdict`): headline, one reason
    per level, the per-task MDE, and which tasks the suite row leaves out."""
    _expect(frame, CompareResult)
    v = frame.verdict
    if v.cannot_judge:
        return cannot_judge_html(v.headline, v.reasons)
    colour = "#8a1f17" if v.regressed else "#1f5f3f"
    items = "".join(f"<li>{escape(r)}</li>" for r in v.reasons)
    if v.mde:
        items += f"<li>{escape(v.mde.text)}</li>"
    items += f"<li>suite row: {escape(frame.suite_dropped_note)}</li>"
    return (
        f"<div id='verdict' data-regressed='{str(bool(v.regressed)).lower()}'>"
        f"<h2 style='color:{colour}'>Verdict: {escape(v.headline)}</h2><ul>{items}</ul></div>"
    )


def cannot_judge_html(headline: str, reasons: list[str]) -> str:
    """The red refusal banner: no verdict, each reason with its fix (never a green verdict)."""
    items = "".join(f"<li>{escape(r)}</li>" for r in reasons)
    return (
        "<div id='verdict' class='aeh-banner cannot-judge' data-regressed='unknown' data-verdict='cannot judge' "
        "style='padding:10px 14px;background:#fdecea;border:2px solid #b3261e;color:#8a1f17;border-radius:6px'>"
        f"<h2 style='color:#b3261e;margin:0 0 6px'>Verdict: {escape(headline)}</h2><ul>{items}</ul></div>"
    )


def compare_table(result: CompareResult) -> Any:
    """Per-task rows and the suite row as `aeh.compare` returns them (Newcombe intervals per task,
    the paired interval on the suite row over the tasks both runs tested); counts only when the
    comparison cannot judge."""
    _expect(result, CompareResult)
    if result.verdict.cannot_judge:
        return counts_only_table(result)
    f = result.table
    rows = pd.DataFrame(
        {
            "task": f["task_id"],
            "A rate (k/n) [95%]": [fmt_rate(r.rate_a, r.k_a, r.n_a, r.low_a, r.high_a) for r in f.itertuples()],
            "B rate (k/n) [95%]": [fmt_rate(r.rate_b, r.k_b, r.n_b, r.low_b, r.high_b) for r in f.itertuples()],
            "delta [95%]": [
                f"{figure(r.delta, '{:+.2f}')} [{figure(r.delta_low, '{:+.2f}')}, {figure(r.delta_high, '{:+.2f}')}]"
                for r in f.itertuples()
            ],
            "p": [figure(v, "{:.3f}") for v in f["p_value"]],
            "q (BH)": [figure(v, "{:.3f}") for v in f["q_value"]],
            "verdict": [
                "REGRESSED" if r.regressed else "improved" if r.improved else (r.note or "") for r in f.itertuples()
            ],
        }
    )
    return _html(rows.to_html(index=False, table_id="compare-table", border=0))


def forest_plot(result: CompareResult) -> Any:
    """Per-task delta (B − A) with its 95% interval, coloured by BH verdict; the suite row last.
    None (no chart) when the comparison cannot judge: no delta means anything then."""
    _expect(result, CompareResult)
    if result.verdict.cannot_judge:
        return None
    # heavy: loaded on first use
    import matplotlib.pyplot as plt
    import seaborn as sns

    frame = result.table
    f = frame[(frame["n_a"] > 0) & (frame["n_b"] > 0)].dropna(subset=["delta"])
    if f.empty:
        return None
    f = pd.concat([f[f.task_id != "<suite>"].sort_values("delta"), f[f.task_id == "<suite>"]])
    f["verdict"] = [
        "regressed" if r else "improved" if i else "no significant change"
        for r, i in zip(f["regressed"], f["improved"], strict=True)
    ]
    labels = [("SUITE (paired)" if t == "<suite>" else t) for t in f["task_id"]]
    palette = {"regressed": "#c0392b", "improved": "#2f8f6d", "no significant change": "#555"}
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(f) + 1.4))
    for y, (lo, hi, v) in zip(labels, zip(f["delta_low"], f["delta_high"], f["verdict"], strict=True), strict=True):
        ax.hlines(y, lo, hi, color=palette[v], lw=3, alpha=0.6)
    sns.scatterplot(
        x=f["delta"].to_numpy(), y=labels, hue=f["verdict"].to_numpy(), palette=palette, ax=ax, s=60, zorder=3
    )
    ax.axvline(0, color="black", lw=1)
    if ax.get_legend() is not None:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, fontsize=8, title="verdict")
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("delta in pass rate, B − A (95% interval; tasks: Newcombe, suite: paired)")
    ax.set_title("Per-task deltas")
    return fig


def newly_failing(result: CompareResult) -> Any:
    _expect(result, CompareResult)
    if result.verdict.cannot_judge:
        return _html("<p id='newly-failing' data-verdict='cannot judge'><b>Cannot judge</b>: these runs cannot "
                     "be judged against each other (the verdict above says why), so no task is called newly "
                     "failing, regressed or improved.</p>")
    names = result.newly_failing
    if not names:
        return _html("<p id='newly-failing'>No newly failing task (none was 100% in A and below 100% in B).</p>")
    frame = result.table
    rows = frame[frame.task_id.isin(names)]
    items = "".join(
        f"<li>{escape(r.task_id)}: A {fmt_rate(r.rate_a, r.k_a, r.n_a, r.low_a, r.high_a)} → "
        f"B {fmt_rate(r.rate_b, r.k_b, r.n_b, r.low_b, r.high_b)}</li>"
        for r in rows.itertuples()
    )
    return _html(f"<div id='newly-failing'><b>Newly failing (was 100% in A):</b><ul>{items}</ul></div>")


# -- agreement ----------------------------------------------------------------------------


def agreement_tables(result: AgreementResult) -> Any:
    """κ with its interval and n, raw agreement, base rates with intervals, and the 2×2 table."""
    _expect(result, AgreementResult)
    frame = result.table
    usable = frame[(frame["n"] > 0) & frame["kappa"].notna()] if len(frame) else frame
    if usable.empty:
        return _html(
            "<p id='no-judge'><b>No judge verdicts in this run</b>: no attempt has both a judge and a "
            "programmatic verdict, so there is no agreement to measure. Run with a judge grader "
            "(e.g. <code>--judge-model</code>) to get κ.</p>"
        )
    parts = []
    for r in usable.itertuples():
        n = int(r.n)

        def base(p: float, n: int = n) -> str:
            k = round(p * n)
            lo, hi = wilson_interval(k, n)
            return fmt_rate(p, k, n, lo, hi)

        trusted = "trusted" if r.trusted else f"NOT trusted (κ below {result.threshold} or too few)"
        parts.append(
            f"<h3>{escape(r.rater)} vs programmatic graders</h3>"
            f"<p><b>κ = {figure(r.kappa)}</b> [{figure(r.kappa_low)}, {figure(r.kappa_high)}], n = {n} attempts, "
            f"raw agreement {figure(r.raw_agreement)} — {trusted}. {escape(str(r.note or ''))}</p>"
            f"<table class='kappa-table' border='1' style='border-collapse:collapse'>"
            f"<tr><th></th><th>{escape(r.rater)} pass</th><th>{escape(r.rater)} fail</th></tr>"
            f"<tr><th>programmatic pass</th><td>{r.both_pass}</td><td>{r.prog_pass_rater_fail}</td></tr>"
            f"<tr><th>programmatic fail</th><td>{r.prog_fail_rater_pass}</td><td>{r.both_fail}</td></tr></table>"
            f"<p>Base rates (pass): programmatic {base(r.base_rate_programmatic)}, "
            f"{escape(r.rater)} {base(r.base_rate_rater)}. With very unequal base rates κ is low even "
            "when raw agreement is high.</p>"
        )
    return _html("\n".join(parts))


def _mode_title(part: pd.DataFrame) -> str:
    """"burst faults (windows of N calls)" or "uniform faults", from one mode's rows."""
    mode = str(part["mode"].iloc[0])
    if mode != "burst":
        return f"{mode} faults"
    return f"burst faults (windows of {int(part['burst_length'].iloc[0])} calls)"


def plot_recovery_curve(frame: pd.DataFrame, ax: Any = None) -> Any:
    """Success rate vs fail rate, one line per error kind with its 95% band; returns the axes.

    A frame holding several modes (e.g. `pd.concat([burst, uniform])`) is drawn one panel per
    mode when no `ax` is given. The title says which mode(s).
    """
    # heavy: loaded on first use
    import matplotlib.pyplot as plt
    import seaborn as sns

    modes = list(dict.fromkeys(frame["mode"]))
    if ax is None:
        fig, axes = plt.subplots(1, len(modes), figsize=(5.5 * len(modes), 4), sharey=True, squeeze=False)
        panels: list[Any] = list(axes[0])
    else:
        panels = [ax] * len(modes)
    palette = dict(zip(list(dict.fromkeys(frame["error_kind"])), sns.color_palette("colorblind"), strict=False))
    for axis, mode in zip(panels, modes, strict=True):
        part = frame[frame["mode"] == mode].sort_values("rate")
        sns.lineplot(data=part, x="rate", y="success_rate", hue="error_kind", marker="o", ax=axis, palette=palette)
        for kind, group in part.groupby("error_kind", sort=False):
            axis.fill_between(group["rate"], group["low"], group["high"], alpha=0.12, color=palette[kind])
        axis.set_xlabel("injected fault rate (share of tool calls)")
        axis.set_ylabel("suite success rate (95% CI over tasks)")
        axis.set_ylim(0, 1.02)
        axis.set_title(_mode_title(part))
        if axis.get_legend() is not None:
            sns.move_legend(axis, "upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, fontsize=8)
    # From the rows, not attrs: a concat of several modes' curves keeps its columns, not its attrs.
    panels[0].figure.suptitle(f"Recovery curve — {' vs '.join(_mode_title(frame[frame['mode'] == m]) for m in modes)}")
    panels[0].figure.tight_layout()
    return panels[0] if len(panels) == 1 else panels
