"""`aeh trace --run-id ID --task T --attempt N --out trace.html`: one attempt's span tree as HTML."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.errors import ExitCode

NAME = "trace"
HELP = "write one attempt's span tree to a self-contained HTML file (collapsible, failures highlighted)"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--run-id", required=True, help="run id or unique prefix")
    parser.add_argument("--task", required=True, help="task id")
    parser.add_argument("--attempt", type=int, default=0, help="attempt number (default 0)")
    parser.add_argument("--out", help="HTML file to write (default: reports/trace-RUN-TASK-N.html)")
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use
    from aeh.report import render_trace_html

    out = render_trace_html(args.run_id, args.task, args.attempt, args.out, db=args.db)
    print(f"trace written to {out}")
    return ExitCode.OK
