"""`aeh compare RUN_A RUN_B`: per-task regression tests; exit 1 when any task regressed."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import pandas as pd

NAME = "compare"
HELP = "compare a new run (B) against a baseline (A); exits 1 when any task regressed"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("run_a", help="baseline run id (or unique prefix)")
    parser.add_argument("run_b", help="new run id (or unique prefix)")
    parser.add_argument("--fdr", type=float, default=0.05, help="false discovery rate for BH (default 0.05)")
    parser.add_argument("--html", help="also write the comparison report to this HTML file")
    add_db(parser)


def _f(value: object, fmt: str = "{:.2f}") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return fmt.format(value)


def format_comparison(frame: pd.DataFrame) -> str:
    a = frame.attrs
    lines = [f"A = {a['run_a']} (baseline)   B = {a['run_b']} (new)", "",
             f"{'task':<34} {'A k/n':>7} {'rate':>5} {'B k/n':>7} {'rate':>5} {'delta':>6} "
             f"{'p':>6} {'q (BH)':>6}  verdict"]
    for row in frame.itertuples(index=False):
        if row.task_id == "<suite>":
            continue
        verdict = "REGRESSED" if row.regressed else "improved" if row.improved else ""
        lines.append(
            f"{row.task_id:<34} {int(row.k_a):>3}/{int(row.n_a):<3} {_f(row.rate_a):>5} {int(row.k_b):>3}/{int(row.n_b):<3} "
            f"{_f(row.rate_b):>5} {_f(row.delta, '{:+.2f}'):>6} {_f(row.p_value, '{:.3f}'):>6} "
            f"{_f(row.q_value, '{:.3f}'):>6}  {verdict or row.note}"
        )
    s = frame[frame.task_id == "<suite>"].iloc[0]
    lines += ["", f"suite  A {_f(s.rate_a, '{:.3f}')} → B {_f(s.rate_b, '{:.3f}')}   paired delta "
                  f"{_f(s.delta, '{:+.3f}')} (SE {_f(s.se, '{:.3f}')}, 95% CI [{_f(s.delta_low, '{:+.3f}')}, "
                  f"{_f(s.delta_high, '{:+.3f}')}], p {_f(s.p_value, '{:.3f}')}, {s.n_a} tasks)",
              f"method: {a['method']}; FDR {a['fdr']}"]
    if a["regressed"]:
        lines.append(f"REGRESSED ({len(a['regressed'])}): {', '.join(a['regressed'])}")
    else:
        lines.append("no task regressed significantly after Benjamini–Hochberg")
    if a["newly_failing"]:
        lines.append(f"newly failing (was 100% in A): {', '.join(a['newly_failing'])}")
    for warning in a["warnings"]:
        lines.append(f"WARNING: {warning}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    from aeh.analysis import compare

    frame = compare(args.run_a, args.run_b, db=args.db, fdr=args.fdr)
    print(format_comparison(frame))
    if args.html:
        from aeh.report import render_compare_report

        out = render_compare_report(args.run_a, args.run_b, args.html, db=args.db)
        print(f"report written to {out}")
    return 1 if frame.attrs["regressed"] else 0
