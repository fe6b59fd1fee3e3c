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
    parser.add_argument("--judge-model",
                        help="also score the judged dimensions (plan_coherence, trajectory_reasoning, "
                             "output_faithfulness) with this model, through the OpenAI-compatible endpoint "
                             "in OPENAI_BASE_URL / OPENAI_API_KEY")
    parser.add_argument("--judge-dimension", action="append", dest="judge_dimensions", metavar="NAME",
                        help="only this judged dimension (repeatable; default all three)")
    parser.add_argument("--judge-concurrency", type=int, default=4, help="judge requests in flight (default 4)")
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    from aeh.analysis import judge_run, score_run, scores
    from aeh.errors import ConfigError
    from aeh.grading.judged_scorers import JUDGED_DIMENSIONS

    dims = args.judge_dimensions or list(JUDGED_DIMENSIONS)
    unknown = sorted(set(dims) - set(JUDGED_DIMENSIONS))
    if unknown:
        raise ConfigError(f"--judge-dimension {', '.join(unknown)}: not a judged dimension — "
                          f"use {', '.join(JUDGED_DIMENSIONS)}")
    if args.judge_dimensions and not args.judge_model:
        raise ConfigError("--judge-dimension needs --judge-model (the model that judges)")
    score_run(args.run_id, args.db, suite=args.suite, loop_n=args.loop_n)
    notes: list[str] = []
    if args.judge_model:
        summary = judge_run(args.run_id, args.db, judge=args.judge_model, dimensions=dims, suite=args.suite,
                            concurrency=args.judge_concurrency)
        notes = summary.lines()
    frame = scores(args.run_id, args.db)
    print(f"run {frame.attrs['run_id']}: {len(frame)} scores")
    for line in notes:
        print(line)
    print(format_summary(frame.attrs["suite"], frame.attrs["tasks"]))
    return EXIT_OK


def format_summary(suite: object, tasks: object) -> str:
    """Per-dimension mean ± sd (n) with a bar, then tasks worst first by overall score."""
    lines = [f"{'dimension':<20} {'mean':>6} {'sd':>6} {'n':>4}"]
    for r in suite.itertuples(index=False):  # type: ignore[attr-defined]
        bar = "█" * round(r.mean * 20)
        lines.append(f"{r.dimension:<20} {r.mean:>6.3f} {r.sd:>6.3f} {r.n:>4}  {bar}")
    overall = tasks[tasks["dimension"] == "overall"]  # type: ignore[index]
    if len(overall):
        lines.append("\ntasks, worst first (overall):")
        for r in overall.itertuples(index=False):
            lines.append(f"  {r.task_id:<34} {r.mean:.3f} ± {r.sd:.3f} (n={r.n})")
    return "\n".join(lines)
