"""`aeh drift --suite S`: a slow decline across recent runs; exit 1 when drifting, 4 when it cannot
judge (too few runs, or a run named with --run-id that is not a valid measurement)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh._util.figure import figure
from aeh.commands._judge_options import add_allow_unfinished
from aeh.errors import ExitCode

NAME = "drift"
HELP = ("test the recent runs of a suite for a slow decline no single comparison flags; exits 1 when "
        "drifting, 4 when it cannot judge (too few runs; a run with harness errors over the limit or unfinished)")


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--suite", help="suite name as stored on its runs (e.g. smoke)")
    parser.add_argument("--run-id", action="append", dest="runs", help="explicit runs instead (repeatable)")
    parser.add_argument("--window", type=int, default=5, help="how many recent runs (default 5; at least 4 to judge)")
    parser.add_argument("--threshold", type=float, default=0.08,
                        help="cumulative drop over the window that counts as drift (default 0.08)")
    parser.add_argument("--dimension-threshold", type=float, default=0.05,
                        help="cumulative drop of a trajectory dimension's mean score over the window that counts "
                             "as drift (default 0.05)")
    parser.add_argument("--no-dimensions", action="store_true",
                        help="only the success rate, not the trajectory dimensions")
    parser.add_argument("--allow-mixed", action="store_true",
                        help="fit runs that mix models, adapters or suite hashes anyway (with a warning); "
                             "refused otherwise")
    add_allow_unfinished(parser, "fit (given with --run-id)")
    add_db(parser)



def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use
    from aeh.analysis import CANNOT_JUDGE, DRIFTING, NOT_ENOUGH_RUNS, cannot_judge_text, drift

    frame = drift(args.suite, runs=args.runs, window=args.window, threshold=args.threshold,
                  allow_mixed=args.allow_mixed, db=args.db, dimension_threshold=args.dimension_threshold,
                  dimensions=not args.no_dimensions, allow_unfinished=args.allow_unfinished)
    a = frame
    for warning in (n for n in a.notes if getattr(n, "kind", None) == "mixed_setup"):
        print(warning)
    print(f"{'#':>2} {'run id':<26} {'model':<16} {'suite rate':>10}  95% CI")
    for row in frame.table.itertuples(index=False):
        print(f"{row.run_index:>2} {row.run_id:<26} {row.model!s:<16} {row.suite_rate:>10.3f}  "
              f"[{figure(row.low, '{:.3f}')}, {figure(row.high, '{:.3f}')}]")
    print(f"\ntrend {figure(a.slope, '{:+.3f}')} per run (95% CI [{figure(a.slope_low, '{:+.3f}')}, "
          f"{figure(a.slope_high, '{:+.3f}')}], p {figure(a.p_value, '{:.3f}')}); modelled change over the "
          f"window {figure(a.cumulative, '{:+.3f}')} (threshold −{a.threshold})")
    print(f"method: {a.method}")
    for note in a.notes:
        print(f"note: {note}")
    dims = a.dimensions
    if len(dims):
        print(f"\n{'dimension':<20} {'runs':>4} {'trend/run':>9} {'95% CI':>17} {'change':>7} {'q (BH)':>7}  verdict")
        for r in dims.itertuples(index=False):
            ci = f"[{figure(r.low, '{:+.3f}')}, {figure(r.high, '{:+.3f}')}]"
            print(f"{r.dimension:<20} {r.runs:>4} {figure(r.slope, '{:+.3f}'):>9} {ci:>17} "
                  f"{figure(r.cumulative, '{:+.3f}'):>7} {figure(r.q, '{:.3f}'):>7}  {r.status}")
        print(f"dimensions: {a.dimension_method}; drift = q < 0.05 and a drop over "
              f"{a.dimension_threshold}")
    if a.status == NOT_ENOUGH_RUNS:
        print("NOT ENOUGH RUNS TO JUDGE: no verdict on drift either way")
        return ExitCode.CANNOT_JUDGE
    if a.status == CANNOT_JUDGE:
        print(cannot_judge_text(None, a.cannot_judge))
        return ExitCode.CANNOT_JUDGE
    drifting_dims = a.drifting_dimensions
    if a.status == DRIFTING or drifting_dims:
        what = (["the success rate"] if a.status == DRIFTING else []) + drifting_dims
        print(f"DRIFTING: a significant decline beyond the threshold in {', '.join(what)}")
        return ExitCode.REGRESSION
    print("no significant drift")
    return ExitCode.OK
