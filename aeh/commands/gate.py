"""`aeh gate --baseline FILE [--run RUN]`: the CI gate on trajectory dimensions and success rate.

Exit codes: 0 no hard regression; 1 hard regression; 2 bad input (unreadable or invalid baseline,
unknown run, bad option); 4 cannot judge (the run is not a valid measurement, is unfinished, or
shares no task with the baseline); 5 cannot judge: the baseline was recorded on a different suite.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from aeh.commands._judge_options import add_allow_unfinished
from aeh.errors import ExitCode

NAME = "gate"
HELP = ("compare a run against a committed baseline, each dimension against its measured noise band; "
        "exits 1 on a hard regression, 0 otherwise, 2 on bad input, 4 when it cannot judge (harness "
        "errors over the limit, an unfinished run, no shared task), 5 when the suite differs")


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--baseline", required=True, help="baseline file from `aeh baseline save`")
    parser.add_argument("--run", dest="run_id", help="run id or prefix (default: the newest run)")
    parser.add_argument("--markdown", help="also write a PR-comment summary to this file")
    parser.add_argument("--threshold", type=float, default=0.05,
                        help="per-dimension drop that may count as a regression (default 0.05)")
    parser.add_argument("--overall-threshold", type=float, default=0.03,
                        help="the same for the overall score (default 0.03)")
    parser.add_argument("--suite", help="suite to score with (default: the one the run recorded)")
    add_allow_unfinished(parser, "judge")
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.analysis import gate

    result = gate(args.baseline, args.run_id, args.db, threshold=args.threshold,
                  overall_threshold=args.overall_threshold, suite=args.suite,
                  allow_unfinished=args.allow_unfinished)
    print(result.text())
    if args.markdown:
        Path(args.markdown).write_text(result.markdown())
    if result.cannot_judge:
        return ExitCode.CANNOT_JUDGE
    return ExitCode.REGRESSION if result.regressed else ExitCode.OK
