"""Real recorded runs live beside the clone (../shared/realdata); tests skip when absent."""

from __future__ import annotations

from pathlib import Path

import pytest
from realdata_paths import OPUS, SONNET, TAU_FILE, TB_DIR, tb_runs


@pytest.fixture(scope="session")
def tau_file() -> Path:
    if not TAU_FILE.is_file():
        pytest.skip(f"real data not present at {TAU_FILE}")
    return TAU_FILE


@pytest.fixture(scope="session")
def tb_dir() -> Path:
    if not TB_DIR.is_dir():
        pytest.skip(f"real data not present at {TB_DIR}")
    return TB_DIR


@pytest.fixture(scope="session")
def tau_run(tau_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(db, run id) of the τ-bench file imported once for the session."""
    from aeh.importers import import_tau_bench

    db = str(tmp_path_factory.mktemp("tau") / "runs.db")
    return db, import_tau_bench(tau_file, db=db)


@pytest.fixture(scope="session")
def tb_pair(tb_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """(db, opus run, sonnet run): five runs each, one run per model, nulls as failures (the default)."""
    from aeh.importers import import_terminal_bench

    db = str(tmp_path_factory.mktemp("tb") / "runs.db")
    return db, import_terminal_bench(tb_runs(OPUS), db=db), import_terminal_bench(tb_runs(SONNET), db=db)


@pytest.fixture(scope="session")
def tb_pair_excluding_nulls(tb_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """(db, opus run, sonnet run) imported with --null-as harness_error: every null leaves n."""
    from aeh.importers import import_terminal_bench

    db = str(tmp_path_factory.mktemp("tb_excl") / "runs.db")
    return (db, import_terminal_bench(tb_runs(OPUS), db=db, null_as="harness_error"),
            import_terminal_bench(tb_runs(SONNET), db=db, null_as="harness_error"))
