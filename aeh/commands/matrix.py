"""`aeh matrix RUN…` (or `aeh matrix DIR…` over the run folders `aeh run FIXTURE…` wrote): coding runs
side by side, read against the noop floor."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.errors import AehError, ExitCode

NAME = "matrix"
HELP = ("per solver: solve rate with its Wilson interval, public and hidden pass rates, the hidden gap "
        "against the noop floor, latency and cost per solved task")


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("run_ids", nargs="+", metavar="RUN",
                        help="run ids (or unique prefixes), or the run folders `aeh run FIXTURE…` wrote "
                             "(runs/*); include a noop run")
    parser.add_argument("--csv", help="also write the matrix to this CSV file")
    parser.add_argument("--html", help="also render the shipped coding_matrix notebook to this HTML file")
    parser.add_argument("--out", metavar="DIR", help="also write matrix.md, matrix.csv and matrix.json into DIR")
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.commands._run_folders import RunFolderError, is_run_folder_form

    if not is_run_folder_form(args.run_ids):
        return _matrix(args, args.run_ids, args.db)
    try:  # the coding harness's form: its code for a harness error is 1
        return _from_folders(args)
    except RunFolderError:
        raise
    except AehError as exc:
        raise RunFolderError(str(exc)) from None


def _from_folders(args: argparse.Namespace) -> int:
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.commands._run_folders import runs_of_folders

    run_ids, db, skipped = runs_of_folders(args.run_ids, args.db)
    for folder in skipped:
        print(f"left out {folder}: a matrix folder, not a run folder")
    return _matrix(args, run_ids, db)


def _matrix(args: argparse.Namespace, run_ids: list[str], db: str | None) -> int:
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.analysis import format_matrix, matrix

    frame = matrix(run_ids, db=db)
    text = format_matrix(frame)
    print(text)
    if args.csv:
        frame.table.to_csv(args.csv, index=False)
        print(f"matrix written to {args.csv}")
    if args.out:
        # loaded when the command runs, so `aeh --help` stays fast
        from aeh.commands._run_folders import write_matrix_folder

        written = write_matrix_folder(args.out, frame, text)
        print(f"matrix written to {', '.join(str(p) for p in written)}")
    if args.html:
        # heavy: the report stack only with --report
        from aeh.report import render_matrix_report

        print(f"report written to {render_matrix_report(run_ids, args.html, db=db)}")
    return ExitCode.OK
