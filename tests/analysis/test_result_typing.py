"""The results' fields are typed for the user's own mypy --strict, DataFrames though they are.

A script using aeh is type-checked with the project's mypy settings: the fields have their
declared types and assigning one is refused (the results are frozen); an installed aeh carries
`py.typed` (PEP 561, checked in test_distribution.py) so a user's mypy reads them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # mypy over the package (seconds with its cache, a minute without)

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = '''\
import pandas as pd

import aeh
from aeh.analysis import RunResult

result: RunResult = aeh.run("toy_math", adapter="mock", attempts=1, seed=1)
rate: float = result.suite_rate
status: str = aeh.compare(result.run_id, result.run_id).verdict.status
frame: pd.DataFrame = result
reveal_type(result.warnings)
reveal_type(aeh.gate({}, result.run_id).regressed_dimensions)
reveal_type(aeh.drift("smoke").drifting)
wrong: str = result.suite_rate
result.suite_rate = 0.5
'''


def test_mypy_checks_the_fields_of_a_result(tmp_path: Path) -> None:
    mypy = Path(sys.executable).with_name("mypy")
    if not mypy.exists():
        pytest.skip("mypy is not installed (it is in the dev extra)")
    script = tmp_path / "uses_aeh.py"
    script.write_text(SCRIPT)
    done = subprocess.run([str(mypy), "--config-file", str(ROOT / "pyproject.toml"), "--no-color-output",
                           "--no-error-summary", str(script)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    # by file name: mypy's cache may replay an identical file's messages under the path it first had
    lines = [line.split(": ", 1)[1] for line in done.stdout.splitlines()
             if Path(line.split(":", 1)[0]).name == script.name]
    assert lines == [
        'note: Revealed type is "list[str]"',
        'note: Revealed type is "list[str]"',
        'note: Revealed type is "bool"',
        'error: Incompatible types in assignment (expression has type "float", variable has type "str")  '
        "[assignment]",
        'error: Property "suite_rate" defined in "RunResult" is read-only  [misc]',
    ], done.stdout
