#!/usr/bin/env python3
"""A plain Python agent with two tools, evaluated with no adapter class.

    python examples/callable_agent.py [--db runs.db] [--attempts 3]
    aeh run --suite smoke --agent examples/callable_agent.py:notes_agent --model-free \
        --task draft_and_count --task count_inbox_words          # the same from the shell

`notes_agent(task, tools)` is ordinary code: it reads the prompt, saves a quoted sentence with
`write_note` when asked to, counts words with `count_words` and answers. aeh hands it the
smoke suite's tools as plain callables; every call goes through the engine, so it is recorded,
budgeted and can be fault-injected (`fault_profile="flaky"`). The result is a stored, graded run.
The agent calls no model, so it is declared `model_free` (costs $0); an agent that does call one
reports its usage with `@aeh.record_step(kind="model")`, or its attempts are unpriced.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

import aeh
from aeh.plugins import ToolCallError

FILE = re.compile(r"\b([\w.-]+\.txt)\b")
QUOTED = re.compile(r'"([^"]+)"')


def notes_agent(task: aeh.Task, tools: Any) -> str:
    """Save the quoted sentence if asked, then count the words of the file the prompt names."""
    files = FILE.findall(task.prompt)
    if not files:
        return "I could not find a file name in the request."
    path = files[-1]
    quoted = QUOTED.search(task.prompt)
    if quoted and "write_note" in tools:
        tools.write_note(path=path, content=quoted.group(1))
    for _ in range(2):  # one retry: tools can fail transiently
        try:
            words = tools.count_words(path=path)["words"]
        except ToolCallError as exc:
            last = exc
            continue
        return f"{path} contains {words} words."
    return f"I could not count the words of {path}: {last}"


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=None, help="store path (default: aeh's default store)")
    parser.add_argument("--attempts", type=int, default=3)
    args = parser.parse_args(argv)
    table = aeh.run("smoke", agent=notes_agent, attempts=args.attempts, seed=7, db=args.db,
                    tasks=["draft_and_count", "count_inbox_words"], model_free=True, progress=False)
    print(table)  # the per-task table, suite rate, cost and run id, as `aeh run` prints them
    run_id: str = table.run_id
    return run_id


if __name__ == "__main__":
    main()
