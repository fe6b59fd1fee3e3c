"""`aeh matrix RUN…`: coding runs side by side, read against the noop floor."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.errors import ExitCode

NAME = "matrix"
HELP = ("per solver: solve rate with its Wilson interval, public and hidden pass rates, the hidden gap "
        "against the noop floor, latency and cost per solved task")


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("run_ids", nargs="+", metavar="RUN", help="run ids (or unique prefixes); include a noop run")
    parser.add_argument("--csv", help="also write the matrix to this CSV file")
    parser.add_argument("--html", help="also render the shipped coding_matrix notebook to this HTML file")
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    from aeh.analysis import format_matrix, matrix

    frame = matrix(args.run_ids, db=args.db)
    print(format_matrix(frame))
    if args.csv:
        frame.table.to_csv(args.csv, index=False)
        print(f"matrix written to {args.csv}")
    if args.html:
        from aeh.report import render_matrix_report

        print(f"report written to {render_matrix_report(args.run_ids, args.html, db=args.db)}")
    return ExitCode.OK
