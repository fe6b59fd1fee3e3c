"""Grade recorded trajectories against a suite into ONE stored run (`aeh grade`, `aeh import trajectory`).

The trajectories are played through the engine by `aeh.adapters._playback.TrajectoryAdapter`,
so the suite's graders, invariants, failure buckets, pricing and the store treat them as any
attempt: the per-task table, compare, report and the trace browser all work on the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from aeh._util.sync import run_sync
from aeh.adapters import TrajectoryAdapter, number_attempts
from aeh.engine import over_budget_summary
from aeh.engine.runplan import plan_run
from aeh.engine.scheduler import execute_run
from aeh.errors import Problem, ValidationError
from aeh.pricing import load_price_table
from aeh.store import StoreLike, redaction_record, using_store
from aeh.suite import suite_location
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import load_suite
from aeh.trajectory import Trajectory, load_trajectories, source_format

__all__ = ["grade_trajectories", "grade_trajectories_async", "import_trajectory_files"]


async def grade_trajectories_async(suite: str | Path | EvalSuite, trajectories: Sequence[Trajectory],
                                   db: StoreLike = None, *, run_id: str | None = None, name: str = "recorded",
                                   tools: Literal["recorded", "rerun"] = "recorded", concurrency: int = 4,
                                   source: str | None = None, config: dict[str, Any] | None = None,
                                   model_free: bool = False, secrets: Sequence[str] = (),
                                   price_table: str | Path | None = None) -> str:
    """Grade `trajectories` against `suite`; returns the new run's id.

    Cost is each model step's recorded `cost_usd`, else its token counts priced from `price_table`
    (default: the shipped table); a trajectory with no model step, or a model step with neither,
    is unpriced unless `model_free=True` says the agent calls no model. `secrets` are redacted
    from the stored run beside the suite's own. Trajectories that exceeded a task's budget are
    kept whole; how many, and by which limits, is the run config's `recorded_over_budget`.
    """
    loaded = load_suite(suite)
    known = {t.id for t in loaded.tasks()}
    unknown = sorted({t.task_id for t in trajectories} - known)
    if unknown:
        where = source or "trajectories"
        raise ValidationError([Problem(where, "task_id", f"task {u!r} is not in suite {loaded.name!r}",
                                       "record the suite's task id, or grade against the suite that has it")
                               for u in unknown], "trajectories")
    numbered = number_attempts(trajectories)
    task_ids = sorted({task for task, _ in numbered}, key=lambda t: t)
    attempts = 1 + max(n for _, n in numbered)
    adapter = TrajectoryAdapter(trajectories, name=name, tools=tools, model_free=model_free)
    prices = load_price_table(price_table)
    tasks = {t.id: t for t in loaded.tasks()}
    formats = sorted({source_format(t) for t in trajectories})
    run_config = {"recorded_from": source, "trajectories": len(trajectories), "tool_replay": tools,
                  "trajectory_format": ", ".join(formats),
                  "recorded_over_budget": over_budget_summary(numbered, tasks, prices),
                  **({"price_table": str(price_table)} if price_table is not None else {}),
                  **({"suite_spec": suite_location(suite)} if isinstance(suite, str | Path) else {}), **(config or {})}
    spec, wiring = plan_run(attempts=attempts, concurrency=concurrency, seed=0, tasks=task_ids,
                            run_id=run_id, config=run_config)
    suite_secrets = list(getattr(loaded, "secrets", lambda: [])()) + list(secrets)
    with using_store(db, secrets=suite_secrets, must_exist=False) as store:
        if "redaction" not in run_config:
            wiring.facts["redaction"] = redaction_record(store.redactor)
        info = await execute_run(loaded, adapter, store, prices, spec, wiring, sinks=[adapter])
    return info.run_id


def grade_trajectories(suite: str | Path | EvalSuite, trajectories: Sequence[Trajectory], db: StoreLike = None,
                       **options: Any) -> str:
    """Sync twin of `grade_trajectories_async` (also inside Jupyter's running loop)."""
    return run_sync(grade_trajectories_async(suite, trajectories, db, **options))


def import_trajectory_files(paths: Sequence[str | Path], db: StoreLike = None, *, suite: str | Path | EvalSuite,
                            **options: Any) -> str:
    """Load and validate trajectory files (every problem of every file listed), then grade them."""
    trajectories: list[Trajectory] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            trajectories.extend(load_trajectories(path))
        except ValidationError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ValidationError(problems, "trajectory file(s)")
    return grade_trajectories(suite, trajectories, db, source=", ".join(str(p) for p in paths), **options)
