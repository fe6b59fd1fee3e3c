"""Public modules and names that moved keep working where they were, with a DeprecationWarning
that names the new home, for one more release (suites, graders and adapters written against the
old locations keep loading)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

#: (old module, name, its home now) — every public module or name git history shows moving
MOVED = [
    *[("aeh.tools.registry", n, "aeh.tools") for n in
      ("ToolEnv", "ToolInputError", "ToolRegistry", "ToolSpec", "ToolUnavailable", "WorkspaceEscape", "path_escape",
       "resolve_in_workspace")],
    *[("aeh.grading.registry", n, "aeh.grading") for n in
      ("GradeContext", "GraderConfig", "GraderRegistry", "default_graders", "grader")],
    ("aeh.grading.registry", "result_name", "aeh.grading._registry"),
    *[("aeh.adapters.base", n, "aeh.adapters") for n in
      ("Adapter", "AdapterFactory", "adapter_names", "adapters", "make_adapter")],
    ("aeh.adapters.trajectory", "TrajectoryAdapter", "aeh.adapters"),
    ("aeh.adapters.trajectory", "number_attempts", "aeh.adapters"),
    *[("aeh.tools.recovery", n, "aeh.experiments") for n in
      ("format_recovery_table", "recovery_curve", "recovery_curve_async")],
    ("aeh.tools.recovery", "plot_recovery_curve", "aeh.report.views"),
    ("aeh.tools.recovery", "recovery_by_fault", "aeh.analysis"),
    *[("aeh.engine.spans", n, "aeh.trace") for n in ("SpanHandle", "SpanRecorder", "SpanSink", "new_id")],
    ("aeh.adapters.replay", "replay_run", "aeh.experiments"),
    ("aeh.adapters.replay", "replay_run_async", "aeh.experiments"),
    ("aeh.adapters.replay", "verdict_differences", "aeh.analysis"),
    ("aeh.grading.judge", "configure_judge", "aeh.grading.review"),
]


@pytest.mark.parametrize(("old", "name", "home"), MOVED, ids=[f"{o}.{n}" for o, n, _ in MOVED])
def test_a_moved_name_still_imports_and_names_its_new_home(old: str, name: str, home: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"^{old}\.{name} is deprecated: import {name} from {home} "):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(home), name)


def test_from_import_warns_at_the_importing_line() -> None:
    with pytest.warns(DeprecationWarning) as caught:
        from aeh.tools.registry import ToolRegistry  # noqa: F401
    assert caught[0].filename == __file__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import aeh.tools.registry

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        aeh.tools.registry.Nope  # noqa: B018


def test_importing_a_moved_module_alone_loads_nothing_heavy() -> None:
    # the aliases resolve on use: importing the old module pulls in none of its new homes
    code = ("import sys, aeh.tools.recovery, aeh.engine.spans; "
            "print(sorted(m for m in ('aeh.experiments', 'aeh.report', 'pandas') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
