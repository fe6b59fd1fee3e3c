"""`aeh compare RUN_A RUN_B`: the two-level regression gate; exit 1 when either level regressed,
4 when the runs cannot be judged against each other (no verdict either way)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from aeh._util.figure import figure
from aeh.commands._judge_options import add_allow_unfinished
from aeh.errors import ExitCode

if TYPE_CHECKING:
    from aeh.analysis import CompareResult

NAME = "compare"
HELP = ("compare a new run (B) against a baseline (A); exits 1 when a task regressed after "
        "Benjamini–Hochberg or the paired suite-level test finds a drop, 4 when it cannot judge (harness "
        "errors over the limit, an unfinished run, two suites, no shared task)")


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("run_a", help="baseline run id (or unique prefix)")
    parser.add_argument("run_b", help="new run id (or unique prefix)")
    parser.add_argument("--fdr", type=float, default=0.05, help="false discovery rate for BH (default 0.05)")
    parser.add_argument("--html", help="also write the comparison report to this HTML file")
    add_allow_unfinished(parser, "judge")
    parser.add_argument("--overlap", action="store_true",
                        help="judge runs of different suites (or suite versions) on the tasks both ran; refused "
                             "otherwise (exit 4)")
    add_db(parser)



def format_comparison(result: CompareResult) -> str:
    if result.verdict.cannot_judge:
        return _format_cannot_judge(result)
    a, frame = result, result.table
    lines = [f"A = {a.run_a} (baseline)   B = {a.run_b} (new)", "",
             f"{'task':<34} {'A k/n':>7} {'rate':>5} {'B k/n':>7} {'rate':>5} {'delta':>6} "
             f"{'p':>6} {'q (BH)':>6}  verdict"]
    for row in frame.itertuples(index=False):
        if row.task_id == "<suite>":
            continue
        verdict = "REGRESSED" if row.regressed else "improved" if row.improved else ""
        lines.append(
            f"{row.task_id:<34} {int(row.k_a):>3}/{int(row.n_a):<3} {figure(row.rate_a):>5} {int(row.k_b):>3}/{int(row.n_b):<3} "  # noqa: E501
            f"{figure(row.rate_b):>5} {figure(row.delta, '{:+.2f}'):>6} {figure(row.p_value, '{:.3f}'):>6} "
            f"{figure(row.q_value, '{:.3f}'):>6}  {verdict or row.note}"
        )
    s = frame[frame.task_id == "<suite>"].iloc[0]
    v = a.verdict
    # The rates printed are the ones the paired delta is computed from (tasks in both runs).
    lines += [
        "",
        f"suite over {int(s.n_a)} tasks in both runs  A {figure(s.rate_a, '{:.3f}')} → B "
        f"{figure(s.rate_b, '{:.3f}')}   paired delta {figure(s.delta, '{:+.3f}')} (SE {figure(s.se, '{:.3f}')}, "
        f"{(1 - v.suite_alpha) * 100:g}% CI [{figure(s.delta_low, '{:+.3f}')}, {figure(s.delta_high, '{:+.3f}')}], "
        f"p {'< 0.001' if s.p_value < 0.001 else figure(s.p_value, '{:.3f}')})",
        f"       {a.suite_dropped_note}; each run's own suite rate: A "
        f"{figure(a.suite_a.rate, '{:.3f}')}, B {figure(a.suite_b.rate, '{:.3f}')}",
        f"method: {a.method}; FDR {a.fdr}",
        "",
        f"VERDICT: {v.headline}",
    ]
    lines += [f"  {reason}" for reason in v.reasons]
    if v.mde:
        lines.append(f"  {v.mde.text}")
    if a.newly_failing:
        lines.append(f"newly failing (was 100% in A): {', '.join(a.newly_failing)}")
    for warning in a.warnings:
        lines.append(f"WARNING: {warning}")
    return "\n".join(lines)


def _format_cannot_judge(result: CompareResult) -> str:
    """The refusal and what each run holds — no per-task verdict, test or delta, none of which
    means anything when the runs cannot be judged against each other."""
    lines = [f"A = {result.run_a} (baseline)   B = {result.run_b} (new)", "",
             f"{'task':<34} {'A k/n':>7} {'B k/n':>7}   (counts only: no per-task verdict)"]
    for row in result.table.itertuples(index=False):
        if row.task_id == "<suite>":
            continue
        counts = [f"{int(k):>3}/{int(n):<3}" if n == n and k == k else f"{'—':>7}"
                  for k, n in ((row.k_a, row.n_a), (row.k_b, row.n_b))]
        lines.append(f"{row.task_id:<34} {counts[0]} {counts[1]}")
    if result.suite_dropped_note:  # which tasks the runs do not share is a fact, not a verdict
        lines += ["", f"tasks: {result.suite_dropped_note}"]
    lines += ["", f"VERDICT: {result.verdict.headline}"]
    lines += [f"  {reason}" for reason in result.verdict.reasons]
    lines += [f"WARNING: {warning}" for warning in result.warnings]
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use
    from aeh.analysis import compare

    options = {"allow_unfinished": args.allow_unfinished, "overlap": args.overlap}
    frame = compare(args.run_a, args.run_b, db=args.db, fdr=args.fdr, **options)
    print(format_comparison(frame))
    if args.html:
        # heavy: loaded on first use
        from aeh.report import render_compare_report

        # the report recomputes the comparison at the same FDR, so it reaches the same verdict
        out = render_compare_report(args.run_a, args.run_b, args.html, db=args.db, fdr=args.fdr, **options)
        print(f"report written to {out}")
    if frame.verdict.cannot_judge:
        return ExitCode.CANNOT_JUDGE
    return ExitCode.REGRESSION if frame.verdict.regressed else ExitCode.OK
