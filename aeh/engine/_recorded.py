"""The recorded numbers of a trajectory: its agent time, and which of a task's budgets it exceeded.

A recording is a fact about what the agent did under its own harness's limits. Replaying it
under the suite's budget must not cut it short (that would grade a trajectory the agent never
produced); a budget the recording ran over is reported from these numbers instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the run table reads `over_budget_warning` without a trajectory
    from aeh.models import Budget, Task
    from aeh.pricing import PriceTable
    from aeh.trajectory import Trajectory

__all__ = ["over_budget_summary", "over_budget_warning", "recorded_cost", "recorded_latency", "recorded_overruns"]


def recorded_latency(trajectory: Trajectory) -> float | None:
    """The agent's recorded time: `latency_s`, else `end_ts - start_ts`, else the extent of its
    steps' times; None when the recording holds no clock at all."""
    if trajectory.latency_s is not None:
        return trajectory.latency_s
    if trajectory.start_ts is not None and trajectory.end_ts is not None:
        return max(0.0, trajectory.end_ts - trajectory.start_ts)
    timed = [(s.start_ts, s.end_ts) for s in trajectory.walk() if s.start_ts is not None and s.end_ts is not None]
    if not timed:
        return None
    return max(0.0, max(end for _, end in timed) - min(start for start, _ in timed))


def recorded_cost(trajectory: Trajectory, prices: PriceTable) -> float | None:
    """USD of the model steps: recorded costs as recorded, the others priced from `prices`;
    None when a step can be neither (unpriced, not free)."""
    total = 0.0
    for step in trajectory.walk():
        if step.kind != "model":
            continue
        if step.cost_usd is not None:
            total += step.cost_usd
            continue
        if step.tokens_in is None and step.tokens_out is None:
            return None
        cost = prices.price(step.model or trajectory.model, step.tokens_in or 0, step.tokens_out or 0)
        if cost is None:
            return None
        total += cost
    return total


def recorded_overruns(trajectory: Trajectory, budget: Budget, prices: PriceTable) -> list[str]:
    """Each of `budget`'s limits the recording exceeded, with the recorded figure: e.g.
    `max_steps=20 (recorded 34 tool calls)`. Empty when it stayed within every limit."""
    out: list[str] = []
    steps = sum(1 for s in trajectory.walk() if s.kind == "tool")
    if steps > budget.max_steps:
        out.append(f"max_steps={budget.max_steps} (recorded {steps} tool calls)")
    latency = recorded_latency(trajectory)
    if latency is not None and latency > budget.timeout_s:
        out.append(f"timeout_s={budget.timeout_s:g} (recorded {latency:.3f} s)")
    models = [s for s in trajectory.walk() if s.kind == "model"]
    tokens = sum((s.tokens_in or 0) + (s.tokens_out or 0) for s in models)
    if budget.max_tokens is not None and tokens > budget.max_tokens:
        out.append(f"max_tokens={budget.max_tokens} (recorded {tokens} tokens)")
    if budget.max_cost_usd is not None and models:
        cost = recorded_cost(trajectory, prices)
        if cost is not None and cost > budget.max_cost_usd:
            out.append(f"max_cost_usd={budget.max_cost_usd:g} (recorded ${cost:.6f})")
    return out

def over_budget_summary(numbered: dict[tuple[str, int], Trajectory], tasks: dict[str, Task],
                        prices: PriceTable) -> dict[str, Any]:
    """How many recorded trajectories exceeded their task's budget, and how often each limit:
    `{"trajectories": 10, "of": 80, "limits": {"max_steps": 10}}` (counted from the recordings)."""
    limits: dict[str, int] = {}
    over = 0
    for (task_id, _), trajectory in numbered.items():
        found = recorded_overruns(trajectory, tasks[task_id].budget, prices)
        over += bool(found)
        for reason in found:
            key = reason.split("=", 1)[0]
            limits[key] = limits.get(key, 0) + 1
    return {"trajectories": over, "of": len(numbered), "limits": limits}


def over_budget_warning(facts: dict[str, Any]) -> str | None:
    """The warning line for a run whose recordings exceeded a budget (its `RunConfig.facts`), or None."""
    summary = facts.get("recorded_over_budget") or {}
    if not summary.get("trajectories"):
        return None
    limits = ", ".join(f"{k} {n}×" for k, n in sorted(summary.get("limits", {}).items()))
    return (f"{summary['trajectories']} of {summary['of']} recorded trajectories exceeded the suite's "
            f"budget ({limits}): kept whole, not cut; they end budget_exhausted (success still follows the "
            "graders); each attempt's budget:exceeded span lists the limits (aeh.budget.exceeded)")
