"""`aeh baseline save RUN --out FILE`: write the committed baseline file the gate reads."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.commands._judge_options import add_allow_unfinished
from aeh.errors import ExitCode

NAME = "baseline"
HELP = "save a run as a committed baseline file for `aeh gate` (per-task dimension summaries, success counts)"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    save = sub.add_parser("save", help="write RUN's baseline to --out")
    save.add_argument("run_id", help="run id or unique prefix")
    save.add_argument("--out", required=True, help="baseline file to write, e.g. baselines/main.json")
    save.add_argument("--suite", help="suite to score with (default: the one the run recorded)")
    save.add_argument("--scoring", metavar="PROFILE",
                      help="scoring profile the gate will use (default: the one the run was scored with, else "
                           "aeh): aeh or trajectory-harness")
    save.add_argument("--loop-n", type=int, default=3, help="loop length for loop_detection (default 3)")
    save.add_argument("--last-n", type=int, default=20,
                      help="learn the optimal steps of each task that declares none from its last N passing "
                           "attempts (default 20)")
    add_allow_unfinished(save, "save")
    add_db(save)


def main(args: argparse.Namespace) -> int:
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.analysis import save_baseline

    b = save_baseline(args.run_id, args.out, args.db, suite=args.suite, loop_n=args.loop_n, last_n=args.last_n,
                      allow_unfinished=args.allow_unfinished, scoring=args.scoring)
    print(f"baseline of run {b['run_id']} ({b['suite']}, {b['model']}, {len(b['tasks'])} tasks, "
          f"scoring {b['scoring']}) → {args.out}")
    declared = b.get("declared_optimal_steps") or {}
    learned = b["learned_optimal_steps"]
    print(f"optimal steps: as declared for {len(declared)} task(s); learned (median of the last "
          f"{args.last_n} passing attempts) for {len(learned)} task(s) that declare none"
          + (": " + ", ".join(f"{t}={n}" for t, n in learned.items()) if learned else ""))
    return ExitCode.OK
