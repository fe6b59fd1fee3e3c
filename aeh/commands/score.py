"""`aeh score RUN`: score a stored run's trajectories on every dimension, without re-running it.

The suite is the one the run measured, found at its stored location with its hash checked (or
`--suite PATH`). Stored scores are never replaced silently: scoring again that would change them,
or judging dimensions already judged, is refused unless `--rescore`, which says how many changed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aeh.errors import ExitCode

if TYPE_CHECKING:
    import pandas as pd

NAME = "score"
HELP = "score a stored run's trajectories on every dimension (no re-run) and store the scores"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("run_id", help="run id or unique prefix")
    parser.add_argument("--suite", help="suite to read expected tools, budgets and goldens from "
                                        "(default: the one the run recorded; either way its hash must be the run's)")
    parser.add_argument("--scoring", metavar="PROFILE",
                        help="scoring profile (default: the one the run was scored with, else aeh): aeh or "
                             "trajectory-harness (agent-eval-harness's own definitions)")
    parser.add_argument("--loop-n", type=int, default=3,
                        help="same tool with the same (normalised) input this many times is a loop (default 3)")
    parser.add_argument("--judge-model",
                        help="also score the judged dimensions (plan_coherence, trajectory_reasoning, "
                             "output_faithfulness) with this model, through the OpenAI-compatible endpoint "
                             "in OPENAI_BASE_URL / OPENAI_API_KEY")
    parser.add_argument("--judge-dimension", action="append", dest="judge_dimensions", metavar="NAME",
                        help="only this judged dimension (repeatable; default all three)")
    parser.add_argument("--judge-concurrency", type=int, default=4, help="judge requests in flight (default 4)")
    parser.add_argument("--rescore", action="store_true",
                        help="replace stored scores that scoring again would change, and judged scores already "
                             "stored (both refused without it); says how many changed")
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    # loaded when the command runs, so `aeh --help` stays fast
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
    stored = stored_dimension_scores(args.run_id, args.db)
    exact = {k: v for k, v in stored.items() if k[2] not in JUDGED_DIMENSIONS}
    judged = sorted({k[2] for k in stored if k[2] in dims}) if args.judge_model else []
    if judged and not args.rescore:  # judge calls cost money and differ between calls
        raise ConfigError(f"run {args.run_id} already has stored judged scores ({', '.join(judged)}) — "
                          f"`aeh score {args.run_id} --judge-model ... --rescore` replaces them")
    notes: list[str] = []
    fresh = score_run(args.run_id, args.db, suite=args.suite, loop_n=args.loop_n, write=not exact,
                      scoring=args.scoring)
    if exact:
        changed, gone = score_changes(exact, fresh)
        if (changed or gone) and not args.rescore:
            flag = f" --scoring {args.scoring}" if args.scoring else ""
            raise ConfigError(f"scoring run {args.run_id} again would change {changed + gone} of its "
                              f"{len(exact)} stored trajectory scores — nothing was replaced; "
                              f"`aeh score {args.run_id}{flag} --rescore` replaces them")
        if changed or gone:
            score_run(args.run_id, args.db, suite=args.suite, loop_n=args.loop_n, scoring=args.scoring)
            notes.append(f"rescored: replaced {len(exact)} stored trajectory scores, {changed} changed"
                         + (f", {gone} no longer scored (kept as stored)" if gone else ""))
        else:
            if args.scoring:  # the same scores, now recorded as scored with the profile asked for
                score_run(args.run_id, args.db, suite=args.suite, loop_n=args.loop_n, scoring=args.scoring)
            notes.append(f"the {len(exact)} stored trajectory scores are the same when scored again: kept")
    if args.judge_model:
        summary = judge_run(args.run_id, args.db, judge=args.judge_model, dimensions=dims, suite=args.suite,
                            concurrency=args.judge_concurrency)
        notes += summary.lines()
    frame = scores(args.run_id, args.db)
    profile = fresh.attrs.get("scoring", "aeh")
    print(f"run {frame.run_id}: {len(frame)} scores (scoring: {profile})")
    for line in notes:
        print(line)
    print(format_summary(frame.suite, frame.tasks, frame.task_weights))
    if frame.task_weights or profile != "aeh":
        print(harness_figures(frame.tasks, frame.task_weights))
    return ExitCode.OK


def harness_figures(tasks: pd.DataFrame, weights: dict[str, float]) -> str:
    """The suite figures as agent-eval-harness prints them after a run: per dimension the task-weighted
    mean (Σ weight × task mean / Σ weight) ± the mean of the tasks' own sds."""
    from aeh.analysis import task_weighted, within_task_sd  # heavy: loaded on first use (pandas)

    means, sds = task_weighted(tasks, weights), within_task_sd(tasks)
    lines = ["\ntask-weighted, as agent-eval-harness prints them:",
             f"overall: {means.get('overall', float('nan')):.3f} (±{sds.get('overall', 0.0):.3f})"]
    for dim in sorted(d for d in means if d != "overall"):
        lines.append(f"  {dim:<24} {means[dim]:.3f} ±{sds.get(dim, 0.0):.3f}")
    return "\n".join(lines)


def stored_dimension_scores(run_id: str, db: str | None) -> dict[tuple[str, int, str], float]:
    """{(task, attempt, dimension): score} stored for the run."""
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.store import open_store

    with open_store(db, must_exist=True) as store:
        frame = store.dimension_scores_frame(run_id)
    rows = frame.select("task_id", "attempt", "dimension", "score").iter_rows()
    return {(t, int(a), d): float(v) for t, a, d, v in rows}


def score_changes(before: dict[tuple[str, int, str], float], fresh: Any) -> tuple[int, int]:
    """(stored scores a new scoring changes, stored scores it no longer produces)."""
    after = {(t, int(a), d): float(v) for t, a, d, v in
             fresh[["task_id", "attempt", "dimension", "score"]].itertuples(index=False)}
    changed = sum(1 for k, v in before.items() if k in after and abs(after[k] - v) > 1e-9)
    return changed, sum(1 for k in before if k not in after)


def weighted_line(suite: pd.DataFrame, tasks: pd.DataFrame, weights: dict[str, float]) -> str:
    """The unweighted overall beside the task-weighted one, the weighting named."""
    from aeh.analysis import weighted_overall  # heavy: loaded on first use (pandas)

    mean = suite[suite["dimension"] == "overall"]["mean"]
    weighted = weighted_overall(tasks, weights)
    named = ", ".join(f"{t} {w:g}" for t, w in sorted(weights.items()) if w != 1) or "all 1"
    shown = "—" if weighted is None else f"{weighted:.3f}"
    return (f"overall: unweighted mean {float(mean.iloc[0]) if len(mean) else float('nan'):.3f} (over attempts); "
            f"task-weighted {shown} (Σ weight × task overall / Σ weight; weights {named}, other tasks 1)")


def format_summary(suite: pd.DataFrame, tasks: pd.DataFrame, weights: dict[str, float] | None = None) -> str:
    """Per-dimension mean ± sd (n) with a bar, then tasks worst first by overall score; with task
    weights, the weighted overall beside the unweighted one."""
    lines = [f"{'dimension':<20} {'mean':>6} {'sd':>6} {'n':>4}"]
    for r in suite.itertuples(index=False):
        bar = "█" * round(r.mean * 20)
        lines.append(f"{r.dimension:<20} {r.mean:>6.3f} {r.sd:>6.3f} {r.n:>4}  {bar}")
    overall = tasks[tasks["dimension"] == "overall"]
    if len(overall):
        lines.append("\ntasks, worst first (overall):")
        for r in overall.itertuples(index=False):
            lines.append(f"  {r.task_id:<34} {r.mean:.3f} ± {r.sd:.3f} (n={r.n})")
        if weights:
            lines.append(weighted_line(suite, tasks, weights))
    return "\n".join(lines)
