"""`aeh report` asks OpenBLAS for one thread before numpy loads, and keeps a count the user set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aeh._util.blas_threads import BLAS_THREADS_ENV, one_blas_thread

# Records the variable as numpy's import starts (OpenBLAS reads it when numpy's core loads),
# then renders the report as the `aeh` command does.
_PROBE = """
import os, sys
seen = []
class Probe:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" and not seen:
            seen.append(os.environ.get("OPENBLAS_NUM_THREADS", "<unset>"))
        return None
sys.meta_path.insert(0, Probe())
from aeh.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    assert not exit.code, exit.code
print("numpy loaded with OPENBLAS_NUM_THREADS =", seen[0] if seen else "<numpy not imported>")
"""


def _report_process(db: Path, run_id: str, out: Path, **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k != BLAS_THREADS_ENV}
    done = subprocess.run([sys.executable, "-c", _PROBE, "report", "--run-id", run_id, "--out", str(out),
                           "--db", str(db)], capture_output=True, text=True, timeout=300, env={**base, **env})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_a_report_process_loads_numpy_with_one_blas_thread(mock_db: tuple[Path, str, str], tmp_path: Path) -> None:
    db, run_a, _ = mock_db
    assert _report_process(db, run_a, tmp_path / "r.html") == "numpy loaded with OPENBLAS_NUM_THREADS = 1"
    assert (tmp_path / "r.html").stat().st_size > 0


def test_a_count_the_user_set_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BLAS_THREADS_ENV, "3")
    one_blas_thread()
    assert os.environ[BLAS_THREADS_ENV] == "3"


def test_unset_it_becomes_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BLAS_THREADS_ENV, raising=False)
    one_blas_thread()
    assert os.environ[BLAS_THREADS_ENV] == "1"
