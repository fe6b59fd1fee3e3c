"""A short command imports what it uses and nothing else: the modules a one-attempt run loads.

A one-attempt `aeh run` of the mock adapter used to spend more CPU importing than running: the
closing table imported every analysis and statistics module (agreement's alone ~1.5 s) and the
dry run's HTTP client. The list below is what such a run may load; anything else a change pulls
onto this path shows here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: Third-party packages a mock run uses: aeh's own dependencies, pandas for the result table
#: (with what pandas itself loads), polars for the store's frames, scipy.special for the Wilson and
#: t quantiles of the closing table.
ALLOWED_LIBRARIES = frozenset({
    "pydantic", "pydantic_core", "annotated_types", "typing_extensions", "typing_inspection", "yaml", "regex",
    "orjson", "pandas", "numpy", "pyarrow", "dateutil", "six", "polars", "scipy", "charset_normalizer",
    "cython_runtime",
})  # fmt: skip
#: aeh modules a run has no use for (statistics it does not compute, commands it does not run).
FORBIDDEN = ("aeh.analysis._agreement", "aeh.analysis._drift", "aeh.analysis._dimensions", "aeh.analysis._gate", "aeh.analysis._compare",
             "aeh.analysis._power", "aeh.analysis._judged", "aeh.analysis._matrix", "aeh.stats._agreement",
             "aeh.stats._calibration", "aeh.stats._power", "aeh.stats._compare", "aeh.stats._drift", "aeh.dryrun",
             "aeh.report", "aeh.viewer", "aeh.widgets", "scipy.stats", "statsmodels", "httpx", "openai", "tqdm",
             "matplotlib", "ipywidgets", "nbformat")

_PROBE = """
import contextlib, io, json, sys
from aeh.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["run", "--suite", "toy_math", "--adapter", "mock", "--attempts", "1", "--seed", "1", "--db", DB])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _run_modules(db: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE.replace("DB", repr(str(db)))], capture_output=True,
                         text=True, check=True, timeout=300)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["code"] == 0, out.stderr[-2000:]
    return list(found["modules"])


def test_a_one_attempt_run_loads_only_what_it_uses(tmp_path: Path) -> None:
    modules = _run_modules(tmp_path / "runs.db")
    assert "aeh.analysis._run_table" in modules  # the probe really ran the closing table
    loaded = [m for m in FORBIDDEN if m in modules]
    assert loaded == [], f"a one-attempt run loaded modules it does not use: {loaded}"
    libraries = {m.partition(".")[0] for m in modules} - set(sys.stdlib_module_names)
    # Private top-level modules are the interpreter's and the libraries' own runtime parts
    # (_sysconfigdata…, _polars_runtime…, _cython…, the editable install's finder).
    others = sorted(m for m in libraries - ALLOWED_LIBRARIES if not m.startswith(("aeh", "_")))
    assert others == [], f"a one-attempt run loaded libraries beyond its own: {others}"
