"""`aeh grade --suite S trajectories.jsonl`: grade recorded trajectories into a stored run.

The trajectories come from `aeh.Recorder`, from an agent in any language writing the documented
format (docs/your_agent.md), or from `aeh import otel`'s conversion; the suite's graders and
invariants judge them and the run gets the full treatment (table, compare, report, browser).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.errors import ExitCode

NAME = "grade"
HELP = "grade recorded agent trajectories (JSON Lines) against a suite into a stored run"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    # loaded only when this command's flags are built, so `aeh --help` stays fast
    from aeh.commands._secrets import add_secret_argument
    from aeh.importers import add_scoring_argument, add_trajectory_arguments

    add_trajectory_arguments(parser)
    add_scoring_argument(parser)
    parser.add_argument("--run-id", help="id for the new run (default: generated)")
    add_secret_argument(parser)
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use (pandas, polars, the engine)
    from aeh.analysis import format_run_table, run_table
    from aeh.commands._new_store import check_new_run_id
    from aeh.importers import import_trajectory_files
    from aeh.store import default_db

    check_new_run_id(args.run_id)
    if args.scoring:
        # loaded when the command runs, so `aeh --help` stays fast
        from aeh.grading import scoring_profile

        scoring_profile(args.scoring)  # an unknown profile is refused before anything is graded
    db = args.db or default_db()
    run_id = import_trajectory_files(args.files, db, suite=args.suite, tools=args.tools, name=args.agent,
                                     run_id=args.run_id, model_free=args.model_free, secrets=args.secrets,
                                     price_table=args.price_table)
    if args.scoring:
        # loaded when the command runs, so `aeh --help` stays fast
        from aeh.analysis import score_run

        score_run(run_id, db, scoring=args.scoring)
    print(format_run_table(run_table(run_id, db)))  # its warnings include recordings over the budget
    return ExitCode.OK
