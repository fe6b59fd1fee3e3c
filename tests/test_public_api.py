"""The public API is what aeh/__init__.py exports, no more and no less."""

from __future__ import annotations

import subprocess
import sys

import aeh

EXPECTED = {
    "AehError", "Budget", "EvalSuite", "GoldenTrace", "GraderSpec", "SuiteLoadError", "Task",
    "ToolRegistry", "ToolUnavailable", "TraceBrowser", "TraceView", "ValidationError", "__version__",
    "agreement", "attempts", "compare", "drift", "load_run", "load_suite", "pass_k", "power",
    "recovery_curve", "run", "run_async", "runs", "spans",
}


def test_exported_names_are_exactly_the_public_api() -> None:
    assert set(aeh.__all__) == EXPECTED
    for name in aeh.__all__:
        assert getattr(aeh, name) is not None, name


def test_public_functions_have_docstrings() -> None:
    for name in aeh.__all__:
        obj = getattr(aeh, name)
        if callable(obj):
            assert (obj.__doc__ or "").strip(), f"aeh.{name} has no docstring"


def test_import_aeh_stays_light() -> None:
    code = "import sys, aeh; heavy = [m for m in ('papermill', 'nbconvert', 'ipywidgets', 'openai', 'seaborn') if m in sys.modules]; print(heavy)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"`import aeh` pulled in {out.strip()}"
