"""Tables a person reads in the notebooks: aeh's result frames as plain HTML tables.

Rates show as percentages with their n and 95% interval and a bar on a fixed 0–100% scale (so
bars compare across tables); money, seconds and missing values have one format each; a key under
each table says what its columns and marks mean. Every function returns `IPython.display.HTML`
holding the table inside `<div id=...>`, so a report or a test can find it by id.

The tables are written here rather than by pandas' Styler: they need a format per column, a bar
and a row shade, and the Styler's module and Jinja templates cost a report ~0.05 s of CPU to
import and compile, more than drawing every table of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

import pandas as pd

from aeh._util.figure import figure, money
from aeh.analysis import AgreementResult, CompareResult, RunResult
from aeh.report._expect import expect as _expect

__all__ = ["agreement_table", "attempts_table", "compare_table", "counts_only_table", "no_judge_html", "pass_k_table",
           "rate_table", "recovery_table", "spans_table"]

_BAR = "#b8d4ea"
#: The tables' look: one small rule set per table (no ids: a report holds several tables).
_STYLE = ("<style>.aeh-grid{border-collapse:collapse;font-size:0.92em}"
          ".aeh-grid th{text-align:left;padding:3px 10px;border-bottom:1px solid #999}"
          ".aeh-grid td{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:right}"
          ".aeh-grid td.aeh-text{text-align:left}"
          ".aeh-grid caption{caption-side:top;text-align:left;font-weight:bold;padding:4px 0}</style>")
#: rows shown at most; a longer frame says how many it left out (filter to see them)
ROW_LIMIT = 200


def _html(text: str) -> Any:
    # heavy: loaded on first use
    from IPython.display import HTML

    return HTML(text)  # type: ignore[no-untyped-call]  # IPython.display is unannotated


def _pct(value: Any) -> str:
    return figure(value, "{:.0%}")


def _interval(low: Any, high: Any) -> str:
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return "—"
    return f"[{_pct(low)}, {_pct(high)}]"


def _seconds(value: Any) -> str:
    return figure(value, "{:.2f} s")


def _shorten(text: Any, width: int = 90) -> str:
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return "—"
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or array in a cell is a value
        return False


def _plain(value: Any) -> str:
    """A cell without a format of its own, as pandas shows it (floats to 6 decimals)."""
    return f"{value:.6f}" if isinstance(value, float) else str(value)


def _bar(value: Any) -> str:
    """A cell's bar on a fixed 0–100% scale: the share `value` of its width, shaded."""
    if _missing(value):
        return "width:7em"
    end = min(max(float(value), 0.0), 1.0) * 100
    return f"width:7em;background:linear-gradient(90deg, {_BAR} {end:.1f}%, transparent {end:.1f}%)" if end else (
        "width:7em")


def _render(frame: pd.DataFrame, *, table_id: str, key: str, percent: Sequence[str] = (),
            formats: Mapping[str, Callable[[Any], str]] | None = None, caption: str | None = None,
            shade: Mapping[int, str] | None = None, left_out: int = 0) -> Any:
    """`frame` as a table: `percent` columns as percentages with a bar, `formats` per column,
    missing values as —, the rows at the positions in `shade` shaded with their colour."""
    shown = {**{c: _pct for c in percent}, **(formats or {})}
    # words read from the left; figures stay right-aligned so their digits line up
    text = {c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c]) and c not in percent}
    columns = list(frame.columns)
    shade = shade or {}
    body = []
    for i, values in enumerate(zip(*(frame[c] for c in columns), strict=True) if columns else ()):
        cells = []
        for column, value in zip(columns, values, strict=True):
            display = "—" if _missing(value) else shown[column](value) if column in shown else _plain(value)
            style = [_bar(value)] if column in percent else []
            if i in shade:
                style.append(f"background-color:{shade[i]}")
            attrs = (' class="aeh-text"' if column in text else "") + (
                f' style="{escape(";".join(style))}"' if style else "")
            cells.append(f"<td{attrs}>{escape(display)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    head = "<tr>" + "".join(f"<th>{escape(str(c))}</th>" for c in columns) + "</tr>"
    title = f"<caption>{escape(caption)}</caption>" if caption else ""
    more = (f"<p class='aeh-more'>Showing {len(frame)} rows; {left_out} more not shown — filter to see "
            "them.</p>") if left_out else ""
    return _html(f'<div id="{table_id}" class="aeh-table">{_STYLE}<table class="aeh-grid">{title}'
                 f'<thead>{head}</thead><tbody>{"".join(body)}</tbody></table>{more}'
                 f"<p class='aeh-key' style='font-size:0.85em;color:#555'>{key}</p></div>")


def rate_table(result: RunResult) -> Any:
    """Per task: n valid attempts, successes, the rate with its bar and Wilson 95% interval, harness errors."""
    _expect(result, RunResult)
    t = result.table
    frame = pd.DataFrame({
        "task": t["task_id"], "n": t["n"], "k": t["successes"], "rate": t["rate"],
        "Wilson 95%": [_interval(lo, hi) for lo, hi in zip(t["low"], t["high"], strict=True)],
        "harness errors": t["harness_errors"],
    })
    if "failures" in t.columns:
        frame["failures"] = [f or "—" for f in t["failures"]]
    return _render(frame, table_id="rate-table", percent=["rate"],
                   key="n: valid attempts (harness errors are left out of n and counted apart) · k: successes · "
                       "rate: k/n, the bar on a 0–100% scale · Wilson 95%: the rate's interval · "
                       "failures: each failed attempt's bucket (wa wrong answer, te tool error, mtc malformed "
                       "tool call, ht hallucinated tool, be budget exhausted, na no answer, ref refusal, "
                       "ju judge unparseable).")


def attempts_table(rows: pd.DataFrame, limit: int = ROW_LIMIT) -> Any:
    """One row per attempt: verdict, bucket, steps, cost, latency and the answer (shortened)."""
    shown = rows.head(limit)
    frame = pd.DataFrame({
        "task": shown["task_id"], "attempt": shown["attempt"],
        "verdict": ["pass" if s else "fail" for s in shown["success"]],
        "bucket": [b if isinstance(b, str) else "—" for b in shown["failure_bucket"]],
        "steps": shown["steps"], "cost": shown["cost_usd"], "latency": shown["latency_s"],
        "answer": [_shorten(o) for o in shown["final_output"]],
    }).reset_index(drop=True)
    colour = {i: "#fbe3e0" for i, v in enumerate(frame["verdict"]) if v == "fail"}
    return _render(frame, table_id="attempts-table", formats={"cost": money, "latency": _seconds},
                   shade=colour, left_out=max(len(rows) - limit, 0),
                   key="verdict: the graders' pass/fail (failed rows shaded) · bucket: the failed attempt's root "
                       "cause · steps: agent turns · latency: the agent's own time · answer: the final "
                       "output, shortened (the trace browser below shows it whole).")


def spans_table(spans: pd.DataFrame, limit: int = ROW_LIMIT) -> Any:
    """One attempt's spans in order: category, name, status and attributes (shortened)."""
    shown = spans.head(limit)
    frame = pd.DataFrame({
        "category": shown["category"], "name": shown["name"], "status": shown["status"],
        "attributes": [_shorten(a, 120) for a in shown["attributes"]],
    }).reset_index(drop=True)
    colour = {i: "#fbe3e0" for i, v in enumerate(frame["status"]) if v == "error"}
    return _render(frame, table_id="spans-table", shade=colour, left_out=max(len(spans) - limit, 0),
                   key="One row per span, in the order they started; spans with status error are shaded.")


def pass_k_table(summary: pd.DataFrame) -> Any:
    """`views.pass_k_summary` as a table: k, pass^k and pass@k with bars and the suite interval."""
    frame = pd.DataFrame({
        "k": summary["k"], "measure": summary["measure"], "rate": summary["rate"],
        "95% interval": [_interval(lo, hi) for lo, hi in zip(summary["low"], summary["high"], strict=True)],
        "n tasks": summary["n tasks"],
    })
    return _render(frame, table_id="pass-k-table", percent=["rate"],
                   key="pass^k: all k attempts succeed · pass@k: at least one does · rate: the mean over "
                       "tasks with n ≥ k · 95% interval: a t-interval across tasks.")


def recovery_table(frame: pd.DataFrame) -> Any:
    """Success under injected faults: per fault kind (`recovery_by_fault`) or per (mode, rate) of a curve."""
    label = [c for c in ("mode", "rate", "injected") if c in frame.columns]
    out = frame[label].rename(columns={"rate": "fault rate", "injected": "fault met"}).copy()
    out["n"] = frame["n"]
    out["k"] = frame["successes"]
    out["success rate"] = frame["success_rate"]
    out["Wilson 95%"] = [_interval(lo, hi) for lo, hi in zip(frame["low"], frame["high"], strict=True)]
    formats: dict[str, Callable[[Any], str]] = {"fault rate": _pct} if "fault rate" in out.columns else {}
    return _render(out, table_id="recovery-table", percent=["success rate"], formats=formats,
                   key="fault met: attempts that met this injected fault kind (any: at least one; none: "
                       "none) · fault rate: share of tool calls made to fail · n attempts, k successes, "
                       "the success rate and its Wilson 95% interval.")


def compare_table(result: CompareResult) -> Any:
    """Per task and the suite row: A and B rates with intervals, the delta, p and BH q, the verdict.

    A comparison that cannot judge (`.verdict.cannot_judge`) shows each task's counts only, as
    `aeh compare` prints them: no delta, p, q or verdict, none of which means anything then."""
    _expect(result, CompareResult)
    if result.verdict.cannot_judge:
        return counts_only_table(result)
    f = result.table.reset_index(drop=True)
    frame = pd.DataFrame({
        "task": ["SUITE (paired)" if t == "<suite>" else t for t in f["task_id"]],
        "A rate": f["rate_a"], "A k/n": [_counts(k, n) for k, n in zip(f["k_a"], f["n_a"], strict=True)],
        "A 95%": [_interval(lo, hi) for lo, hi in zip(f["low_a"], f["high_a"], strict=True)],
        "B rate": f["rate_b"], "B k/n": [_counts(k, n) for k, n in zip(f["k_b"], f["n_b"], strict=True)],
        "B 95%": [_interval(lo, hi) for lo, hi in zip(f["low_b"], f["high_b"], strict=True)],
        "delta [95%]": [f"{figure(d, '{:+.0%}')} [{figure(lo, '{:+.0%}')}, {figure(hi, '{:+.0%}')}]"
                        for d, lo, hi in zip(f["delta"], f["delta_low"], f["delta_high"], strict=True)],
        "p": [figure(v, "{:.3f}") for v in f["p_value"]],
        "q (BH)": [figure(v, "{:.3f}") for v in f["q_value"]],
        "verdict": ["REGRESSED" if r.regressed else "improved" if r.improved else (r.note or "no change")
                    for r in f.itertuples()],
    })
    colour = {i: "#fbe3e0" if v == "REGRESSED" else "#e2f3ea" for i, v in enumerate(frame["verdict"])
              if v in ("REGRESSED", "improved")}
    return _render(frame, table_id="compare-table", percent=["A rate", "B rate"], shade=colour,
                   key="A: the baseline run, B: the new one · rate with k/n and its Wilson 95% interval · "
                       "delta: B − A with Newcombe's interval (suite row: the paired difference over tasks) · "
                       "p: Boschloo's exact test · q (BH): Benjamini–Hochberg across tasks · REGRESSED "
                       "(shaded red) only when q is below the FDR and the rate dropped.")


def counts_only_table(result: CompareResult) -> Any:
    """Each task's successes over valid attempts in A and B, for a comparison that cannot judge."""
    _expect(result, CompareResult)
    f = result.table[result.table["task_id"] != "<suite>"].reset_index(drop=True)
    frame = pd.DataFrame({"task": f["task_id"],
                          "A k/n": [_counts(k, n) for k, n in zip(f["k_a"], f["n_a"], strict=True)],
                          "B k/n": [_counts(k, n) for k, n in zip(f["k_b"], f["n_b"], strict=True)]})
    tasks = f" Tasks: {escape(result.suite_dropped_note)}." if result.suite_dropped_note else ""
    return _render(frame, table_id="compare-table",
                   key="Counts only: these runs cannot be judged against each other (the verdict above says "
                       "why and what to do), so no task has a delta, a test or a verdict. k/n: successes over "
                       f"valid attempts.{tasks}")


def _counts(k: Any, n: Any) -> str:
    if n is None or pd.isna(n) or k is None or pd.isna(k):
        return "—"
    return f"{int(k)}/{int(n)}"


def _usable(result: AgreementResult) -> pd.DataFrame:
    frame = result.table
    return frame[(frame["n"] > 0) & frame["kappa"].notna()] if len(frame) else frame


def no_judge_html(result: AgreementResult) -> Any:
    """Why κ is absent and what it needs; None when some rater has paired verdicts to measure."""
    _expect(result, AgreementResult)
    if not _usable(result).empty:
        return None
    counts = result.judge_verdicts or {}
    attempted = int(counts.get("attempted", 0) or 0)
    seen = (f"The judge was asked {attempted} times: {counts.get('valid', 0)} valid verdicts, "
            f"{counts.get('failed', 0)} failed, {counts.get('unparseable', 0)} unparseable, "
            f"{counts.get('automatic', 0)} decided without a judge call (left out of κ)."
            if attempted else "No attempt of this run was graded by a judge.")
    return _html(
        "<div id='no-judge'><p><b>No judge verdicts in this run</b>, so κ is absent: Cohen's κ measures how "
        "often the LLM judge agrees with the programmatic graders beyond chance, on the attempts graded "
        f"both ways, and this run has none. {escape(seen)}</p>"
        "<p>κ needs at least "
        f"{result.min_n} attempts that carry both a programmatic verdict and a judge (or human) verdict:</p><ul>"
        "<li>a run with a judge on every attempt: <code>aeh run --suite S --judge-model M --judge-all</code> "
        "(the shadow verdicts never count toward success), or a suite whose tasks have a "
        "<code>judge</code> grader, run with <code>--judge-model M</code>;</li>"
        "<li>or human labels for this run: <code>aeh review --run-id RUN --all --export labels.jsonl</code>, fill in "
        "<code>label</code>, then <code>aeh review --run-id RUN --import labels.jsonl</code> "
        "(rater <i>human</i>).</li></ul>"
        f"<p>Then set <code>run_id</code> to that run. κ is trusted at ≥ {result.threshold} with n ≥ "
        f"{result.min_n}.</p></div>"
    )


def agreement_table(result: AgreementResult) -> Any:
    """Per rater: κ with its interval and n, raw agreement, both base rates; a key under it."""
    _expect(result, AgreementResult)
    t = result.table.reset_index(drop=True)
    frame = pd.DataFrame({
        "rater": t["rater"], "n": t["n"], "κ": [figure(v, "{:.2f}") for v in t["kappa"]],
        "κ 95%": [f"[{figure(lo, '{:.2f}')}, {figure(hi, '{:.2f}')}]" if pd.notna(lo) else "—"
                  for lo, hi in zip(t["kappa_low"], t["kappa_high"], strict=True)],
        "raw agreement": t["raw_agreement"], "pass rate, programmatic": t["base_rate_programmatic"],
        "pass rate, rater": t["base_rate_rater"],
        "trusted": ["yes" if ok else "no" for ok in t["trusted"]],
        "note": [n if isinstance(n, str) else "" for n in t["note"]],
    })
    colour = {i: "#e2f3ea" if v == "yes" else "#fbe3e0" for i, v in enumerate(frame["trusted"])}
    return _render(frame, table_id="agreement-table",
                   percent=["raw agreement", "pass rate, programmatic", "pass rate, rater"],
                   shade=colour,
                   key=f"n: attempts graded both by the rater and the programmatic graders · κ: Cohen's κ "
                       f"with its 95% interval (— where n is too small) · raw agreement: share of the n where "
                       f"both agree · pass rates: each side's base rate (κ is low when one is nearly constant "
                       f"even at high raw agreement) · trusted: κ ≥ {result.threshold} and n ≥ {result.min_n}.")
