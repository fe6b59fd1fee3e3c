"""The specification's plugin contract, as it gives it, loads and runs.

Its example suite starts `from aeh.models import Task, Trace` and `from aeh.tools.registry import
ToolRegistry` and is a class with `tasks()`, `tool_registry()`, `invariants()` and
`golden_traces()`; "point --suite at the directory, or install an aeh.suites entry point"."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

import aeh
from aeh.errors import SuiteLoadError
from aeh.suite import load_suite
from tests.commands.test_cli import run_cli

FILLED = Path(__file__).resolve().parents[1] / "fixtures" / "spec_demo_suite"

#: the specification's example, character for character (its indentation restored)
AS_WRITTEN = '''\
from aeh.models import Task, Trace
from aeh.tools.registry import ToolRegistry
class DemoSuite:
    name = "demo"
    def tasks(self) -> list[Task]: ...
    def tool_registry(self) -> ToolRegistry: ...
    def invariants(self) -> dict: ... # name -> (trace) -> pass/fail
    def golden_traces(self) -> dict[str, Trace]: ...
'''


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    folder = tmp_path / "demo"
    shutil.copytree(FILLED, folder)
    return folder


def test_the_examples_imports_work() -> None:
    namespace: dict[str, object] = {}
    with pytest.warns(DeprecationWarning, match="aeh.tools.registry.ToolRegistry is deprecated: import "
                                                "ToolRegistry from aeh.tools"):
        exec(compile(AS_WRITTEN, "suite.py", "exec"), namespace)
    from aeh.models import GoldenTrace
    from aeh.tools import ToolRegistry

    assert namespace["Trace"] is GoldenTrace and namespace["ToolRegistry"] is ToolRegistry
    assert callable(namespace["DemoSuite"].golden_traces)


def test_the_example_as_written_loads_and_says_what_its_empty_bodies_lack(tmp_path: Path) -> None:
    (tmp_path / "suite.py").write_text(AS_WRITTEN)
    with pytest.warns(DeprecationWarning), pytest.raises(SuiteLoadError) as caught:
        load_suite(tmp_path)
    text = str(caught.value)
    assert "DemoSuite.tasks(): returned None (an empty body?), not a list of Task" in text
    assert "DemoSuite.tool_registry(): returned None (an empty body?), not a ToolRegistry" in text
    assert "DemoSuite.golden_traces()" in text and "DemoSuite.invariants()" in text


def test_the_example_with_its_bodies_runs_from_its_directory(demo: Path, tmp_path: Path) -> None:
    with pytest.warns(DeprecationWarning, match="aeh.tools.registry"):
        result = aeh.run(str(demo), adapter="mock", attempts=3, seed=1, db=tmp_path / "runs.db", progress=False)
    assert result.run.suite == "demo" and result["task_id"].tolist() == ["shout_hello"]
    assert result.suite_rate == 1.0 and int(result["clean_successes"].iloc[0]) == 3


def test_aeh_run_points_at_the_directory(demo: Path, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        code, out, err = run_cli("run", "--suite", str(demo), "--adapter", "mock", "--attempts", "2", "--seed", "1",
                                 "--db", str(tmp_path / "runs.db"), "--log-level", "silent")
    assert code == 0, err
    assert "shout_hello" in out and "suite rate 1.000" in out


def test_the_class_itself_is_a_suite_as_an_entry_point_gives_it(demo: Path, tmp_path: Path) -> None:
    from aeh._util.pyfile import import_file

    with pytest.warns(DeprecationWarning):
        module = import_file(demo / "suite.py", "spec_demo_suite")
    suite = load_suite(module.DemoSuite())
    assert suite.name == "demo" and [t.id for t in suite.tasks()] == ["shout_hello"]


def test_a_wrong_answer_from_a_method_is_a_load_problem(demo: Path) -> None:
    text = (demo / "suite.py").read_text()
    (demo / "suite.py").write_text(text.replace('return {"answer_in_capitals": lambda trace: (trace.final_output or "").isupper()}',
                                                'return [lambda trace: True]'))
    with pytest.warns(DeprecationWarning), pytest.raises(SuiteLoadError) as caught:
        load_suite(demo)
    assert "DemoSuite.invariants(): returned list, not a dict of name -> function (trace) -> pass/fail" in str(caught.value)


def test_a_class_and_task_files_together_are_refused(demo: Path) -> None:
    (demo / "tasks").mkdir()
    (demo / "tasks" / "extra.yaml").write_text("id: extra\nprompt: x\ngraders: [{kind: contains, expected: x}]\n")
    with pytest.warns(DeprecationWarning), pytest.raises(SuiteLoadError) as caught:
        load_suite(demo)
    assert "DemoSuite in suite.py defines the tasks; tasks/*.yaml would be ignored" in str(caught.value)
