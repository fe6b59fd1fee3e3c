"""A small mock run for widget tests (no kernel needed: ipywidgets work in plain pytest)."""

from __future__ import annotations

from pathlib import Path

import pytest

import aeh


@pytest.fixture(scope="session")
def degraded_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("store") / "runs.db"
    run = aeh.run("toy_math", adapter="mock", attempts=3, seed=2, db=str(db), model="mock-degraded")
    return db, run.run_id
