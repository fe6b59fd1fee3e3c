"""aeh.run works from inside a running event loop (a Jupyter kernel) and run_async awaits."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aeh


def test_run_inside_running_loop(tmp_path: Path) -> None:
    db = tmp_path / "r.db"

    async def notebook_cell() -> object:
        assert asyncio.get_running_loop() is not None  # as in a kernel: a loop is running
        return aeh.run("toy_math", adapter="mock", attempts=2, seed=4, db=db)

    table = asyncio.run(notebook_cell())
    assert len(table) == 3 and (table["attempts"] == 2).all()
    # same seed from plain sync code gives the same counts
    again = aeh.run("toy_math", adapter="mock", attempts=2, seed=4, db=db)
    assert again["successes"].tolist() == table["successes"].tolist()


async def test_run_async_awaited(tmp_path: Path) -> None:
    table = await aeh.run_async("smoke", adapter="mock", attempts=2, seed=4, db=tmp_path / "r.db")
    assert len(table) == 5 and table.attempts_total == 10
