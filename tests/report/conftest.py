"""Fixtures for report tests: small mock runs in a temp store, Jupyter state in temp dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from aeh.models import FailureBucket
from aeh.store import Store


@pytest.fixture(scope="session")
def harness_db(mock_db: tuple[Path, str, str], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A copy of run B where one attempt in nine is a harness error (11% > 2%)."""
    db, _, run_b = mock_db
    out = tmp_path_factory.mktemp("harness") / "runs.db"
    run_id = "harness-errors-run"
    with Store(db) as src, Store(out) as dst:
        info = src.run_info(run_b)
        dst.create_run(info.model_copy(update={"run_id": run_id}))
        frame = src.attempts_frame(run_b)
        for i, (task, n) in enumerate(zip(frame["task_id"].to_list(), frame["attempt"].to_list(), strict=True)):
            record = src.attempt_record(run_b, task, n)
            update = {"run_id": run_id}
            if i == 0:
                update |= {"success": False, "failure_bucket": FailureBucket("harness_error"), "error": "sandbox crashed"}
            spans = [s.model_copy(update={"run_id": run_id}) for s in src.attempt_spans(run_b, task, n)]
            dst.write_attempt(record.model_copy(update=update), spans)
    return out, run_id

