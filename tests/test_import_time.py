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


def test_import_aeh_defers_even_the_models() -> None:
    probe = "import aeh, sys; print(sorted(m for m in ('pydantic', 'aeh.models', 'aeh._version') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
    probe = "import aeh; print(aeh.Task.__name__, aeh.__version__ != '', aeh.load_suite.__name__)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["Task", "True", "load_suite"]


def test_aeh_help_builds_no_command_options() -> None:
    code = ("import contextlib, io, sys; from aeh.cli import main\nbuf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n    try: main(['--help'])\n    except SystemExit: pass\n"
            "print(sorted(m for m in ('aeh.importers', 'aeh.suite', 'aeh.grading', 'pydantic') if m in sys.modules))\n"
            "print('import' in buf.getvalue() and 'run' in buf.getvalue())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip().splitlines()[-2:] == ["[]", "True"]
