"""`aeh.run` reaches its first attempt without the DataFrame and statistics libraries (they load
only when the run's table is built, after the attempts), and the mock agent without an HTTP stack."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("pandas", "polars", "pyarrow", "scipy", "statsmodels", "matplotlib", "httpx", "openai", "rich")

# The mock adapter's run is wrapped so the first call reports what is imported at that moment.
PROBE = """
import json, sys
import aeh
from aeh.adapters.mock import MockAdapter

seen = {}
original = MockAdapter.run

async def run(self, task, ctx):
    if not seen:
        seen["first"] = sorted(m for m in HEAVY if m in sys.modules)
    return await original(self, task, ctx)

MockAdapter.run = run
aeh.run("smoke", adapter="mock", attempts=1, seed=1, db=DB, progress=False, tasks=["write_greeting"])
seen["after"] = sorted(m for m in HEAVY if m in sys.modules)
print(json.dumps(seen))
"""


def _probe(db: Path) -> dict[str, list[str]]:
    code = f"HEAVY = {HEAVY!r}; DB = {str(db)!r}\n{PROBE}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    loaded: dict[str, list[str]] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def test_run_reaches_its_first_attempt_without_heavy_libraries(tmp_path: Path) -> None:
    loaded = _probe(tmp_path / "runs.db")
    assert loaded["first"] == []
    # The probe can see them: the table at the end of the run does load polars and pandas.
    assert {"polars", "pandas"} <= set(loaded["after"])
