"""`aeh replay --run-id ID`: re-run a stored run's trajectories (no model calls) into a new run.

Graders, invariants and analysis are those of the suite as it is now, so a changed grader shows
exactly which verdicts it flips on identical trajectories. Prints the new run's table and how
many (task, attempt) verdicts differ from the original (0 when nothing that grades changed).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.errors import ExitCode

NAME = "replay"
HELP = "re-execute a stored run from its recorded model responses (no model call) into a new linked run"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--run-id", required=True, help="the run to replay (id or unique prefix)")
    parser.add_argument("--suite", help="suite to grade with, changed on purpose or not (default: the one the "
                                        "original run recorded, refused when it is gone or its hash changed)")
    from aeh.commands._spec_flags import add_spec_flags  # the spec loads pydantic: not for `aeh --help`

    add_spec_flags(parser, ["concurrency", "log_level", "secrets"], helps={
        "concurrency": "attempts in flight (default: the original's)",
        "secrets": "a configured secret of the original run, to redact again (repeatable)"})
    parser.add_argument("--show-diffs", type=int, default=20, metavar="N",
                        help="list at most N differing verdicts (default 20)")
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use (pandas, polars, the engine)
    from aeh.analysis import format_run_table, run_table, verdict_differences
    from aeh.experiments import replay_run
    from aeh.logs import RunLogger
    from aeh.store import default_db

    db = args.db or default_db()
    new_id = replay_run(args.run_id, db=db, suite=args.suite, concurrency=args.concurrency,
                        progress=RunLogger(args.log_level), secrets=args.secrets or [])
    table = run_table(new_id, db)
    print(format_run_table(table))
    original = table.run.parent_run_id or args.run_id
    diffs = verdict_differences(original, new_id, db)
    total = table.attempts_total
    print(f"replay of {original}: {len(diffs)} of {total} verdicts differ from the original")
    for d in diffs[: max(0, args.show_diffs)]:
        def show(v: tuple[bool, str | None] | None) -> str:
            if v is None:
                return "missing"
            ok, bucket = v
            return "success" if ok else f"fail ({bucket})"

        print(f"  {d['task_id']} #{d['attempt']}: {show(d['original'])} → {show(d['replay'])}")
    if len(diffs) > args.show_diffs:
        print(f"  … and {len(diffs) - args.show_diffs} more")
    return ExitCode.INVALID_RUN if table.invalid_measurement else ExitCode.OK
