"""Fixtures for report tests: small mock runs in a temp store, Jupyter state in temp dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

import aeh

JUPYTER_VARS = ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR")


@pytest.fixture(scope="session", autouse=True)
def jupyter_env(tmp_path_factory: pytest.TempPathFactory):
    """Kernels write no state into $HOME; one shared dir per session keeps matplotlib's font cache."""
    base = tmp_path_factory.getbasetemp() / "jupyter-home"
    with pytest.MonkeyPatch.context() as mp:
        for var in JUPYTER_VARS:
            path = base / var.lower()
            path.mkdir(parents=True, exist_ok=True)
            mp.setenv(var, str(path))
        yield base


@pytest.fixture(scope="session")
def mock_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A store with two toy_math runs: A (mock-strong) and B (mock-degraded), 3 attempts each."""
    db = tmp_path_factory.mktemp("store") / "runs.db"
    a = aeh.run("toy_math", adapter="mock", attempts=3, seed=1, db=str(db)).attrs["run_id"]
    b = aeh.run("toy_math", adapter="mock", attempts=3, seed=2, db=str(db), model="mock-degraded").attrs["run_id"]
    return db, a, b

