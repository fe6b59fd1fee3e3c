"""`import aeh` stays light: the heavy libraries load on first use, never at import."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pandas", "polars", "pyarrow", "numpy", "scipy", "statsmodels", "matplotlib", "seaborn",
         "nbformat", "papermill", "ipywidgets", "openai")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}; import sys, json; print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_aeh_loads_no_heavy_library() -> None:
    assert _loaded_after("import aeh") == []


def test_aeh_help_loads_no_heavy_library() -> None:
    code = "import contextlib, io; from aeh.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n" \
           "    try: main(['--help'])\n    except SystemExit: pass"
    probe = code + "\nimport sys, json; print(json.dumps(sorted(m for m in " + repr(HEAVY) + " if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_a_lazy_name_loads_on_first_use() -> None:
    assert "pandas" in _loaded_after("import aeh; aeh.load_run")
