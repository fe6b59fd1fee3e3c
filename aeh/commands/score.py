"""`aeh score RUN`: score a stored run's trajectories on every dimension, without re-running it."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.commands._exit import EXIT_OK

NAME = "score"
HELP = "score a stored run's trajectories on every dimension (no re-run) and store the scores"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("run_id", help="run id or unique prefix")
    parser.add_argument("--suite", help="suite to read expected tools, budgets and goldens from "
                                        "(default: the one the run recorded)")
    parser.add_argument("--loop-n", type=int, default=3,
                        help="same tool with the same (normalised) input this many times is a loop (default 3)")
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    from aeh.analysis import score_run, scores

    score_run(args.run_id, args.db, suite=args.suite, loop_n=args.loop_n)
    frame = scores(args.run_id, args.db)
    print(f"run {frame.attrs['run_id']}: {len(frame)} scores")
    print(format_summary(frame.attrs["suite"], frame.attrs["tasks"]))
    return EXIT_OK


def format_summary(suite: object, tasks: object) -> str:
    """Per-dimension mean ± sd (n) with a bar, then tasks worst first by overall score."""
    lines = [f"{'dimension':<18} {'mean':>6} {'sd':>6} {'n':>4}"]
    for r in suite.itertuples(index=False):  # type: ignore[attr-defined]
        bar = "█" * round(r.mean * 20)
        lines.append(f"{r.dimension:<18} {r.mean:>6.3f} {r.sd:>6.3f} {r.n:>4}  {bar}")
    overall = tasks[tasks["dimension"] == "overall"]  # type: ignore[index]
    if len(overall):
        lines.append("\ntasks, worst first (overall):")
        for r in overall.itertuples(index=False):
            lines.append(f"  {r.task_id:<34} {r.mean:.3f} ± {r.sd:.3f} (n={r.n})")
    return "\n".join(lines)
