#!/usr/bin/env python3
"""Record an agent that runs on its own into a stored, graded run (and a trajectory file).

    python examples/recorded_agent.py --out trajectories.jsonl [--db runs.db]
    aeh grade --suite toy_math trajectories.jsonl          # grade the file again later, from the shell

The agent below is ordinary code with its own calculator and its own "model" (a stand-in that
reports token usage the way an OpenAI response does). Decorating them with `@aeh.record_step`
costs nothing when no recorder is active; inside `session.record(task_id)` (an `aeh.Recorder`)
each call becomes a span. Leaving `with aeh.RecordedRun(...)` grades every recorded attempt with
the toy_math suite's graders and invariants into one stored run; `path=` also appends each
attempt to a JSON Lines file as it ends, which `aeh grade` can judge again at any time.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import aeh
from aeh.plugins import load_trajectories

PROBLEMS = {
    "add_then_multiply": "(17 + 25) * 3",
    "average_to_two_decimals": "(12.5 + 7.25 + 30) / 3",
    "split_the_bill": "84.60 / 4 + 2.00",
}


@aeh.record_step(kind="tool", name="calculator")
def calculator(expression: str) -> dict[str, Any]:
    """The agent's own calculator (digits and + - * / ( ) only)."""
    if not re.fullmatch(r"[\d\s.+\-*/()]+", expression):
        raise ValueError(f"not arithmetic: {expression!r}")
    return {"expression": expression, "result": eval(expression, {"__builtins__": {}})}  # noqa: S307


@aeh.record_step(kind="model", name="plan")
def plan(prompt: str, model: str = "scripted-planner") -> dict[str, Any]:
    """A stand-in for a model call: picks the expression, reports usage like an OpenAI response."""
    task_id = next(t for t in PROBLEMS if t.replace("_", " ") in prompt or t in prompt)
    return {"model": model, "expression": PROBLEMS[task_id],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 8}}


def solve(task_id: str, prompt: str) -> str:
    step = plan(f"{task_id}: {prompt}")
    value = round(calculator(step["expression"])["result"], 2)
    return f"{value}" if "number only" in prompt else f"The answer is {value}."


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="trajectories.jsonl", help="JSON Lines file to append to")
    parser.add_argument("--db", default=None, help="store path (default: aeh's default store)")
    parser.add_argument("--attempts", type=int, default=2)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.unlink(missing_ok=True)
    with aeh.RecordedRun("toy_math", db=args.db, path=out, agent="recorded-example") as session:
        for task in session.tasks:
            for _ in range(args.attempts):
                with session.record(task.id) as rec:
                    rec.answer(solve(task.id, task.prompt))
    print(f"recorded {len(load_trajectories(out))} trajectories to {out}")
    run_id = str(session.run_id)
    print(aeh.attempts(run_id, db=args.db)[["task_id", "attempt", "success", "status"]].to_string())
    print(f"stored run {run_id}")
    return run_id


if __name__ == "__main__":
    main()
