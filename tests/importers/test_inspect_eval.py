"""A real Inspect `eval()` on the offline `mockllm/model` provider, its logs imported, compared, reported."""

from __future__ import annotations

import gc
import io
import warnings
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.log import write_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.scorer import match  # noqa: E402
from inspect_ai.solver import generate, use_tools  # noqa: E402
from inspect_ai.tool import tool  # noqa: E402

import aeh  # noqa: E402
from aeh.cli import main as cli_main  # noqa: E402
from aeh.importers import import_inspect_logs  # noqa: E402

# Two Inspect evals (~10 s each on 2 cores) and one papermill report. Inspect's eval leaves anyio
# memory streams to the garbage collector; the fixture collects them here, so the warning is
# raised (and ignored) in this module only.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(400),
              pytest.mark.filterwarnings("ignore:Exception ignored in.*MemoryObjectReceiveStream"
                                         ":pytest.PytestUnraisableExceptionWarning")]


@tool
def add() -> Any:
    async def execute(x: int, y: int) -> int:
        """Add two numbers.

        Args:
            x: the first number
            y: the second number
        """
        return x + y

    return execute


def _agent(right: bool) -> Any:
    """A scripted model: call `add` once, then answer its result (or one more, when not `right`)."""

    def outputs(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        last = messages[-1]
        if last.role == "tool":
            out = ModelOutput.from_content("mockllm/model", str(int(last.text) + (0 if right else 1)))
        else:
            numbers = [int(t) for t in last.text.replace("+", " ").replace("?", " ").split() if t.isdigit()]
            out = ModelOutput.for_tool_call("mockllm/model", "add", {"x": numbers[0], "y": numbers[1]})
        out.usage = ModelUsage(input_tokens=50, output_tokens=5, total_tokens=55)  # no tokenizer download
        return out

    return outputs


def _eval(folder: Path, right: bool) -> Any:
    task = Task(dataset=[Sample(id=f"q{i}", input=f"{i} + {i}?", target=str(2 * i)) for i in (1, 2, 3)],
                solver=[use_tools([add()]), generate()], scorer=match(), epochs=2)
    with warnings.catch_warnings():
        # inspect_ai/model/_retry.py passes tenacity's deprecated `initial=`; under the suite's
        # warnings-as-errors it would fail every sample (a harness error in the log, not a test)
        warnings.filterwarnings("ignore", "The 'initial' parameter is deprecated", DeprecationWarning)
        [log] = eval(task, model=get_model("mockllm/model", custom_outputs=_agent(right)), log_dir=str(folder),
                     display="none", log_format="eval")
    return log


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str, Path]:
    """(db, run of the right agent's .eval log, run of the wrong agent's .json log, folder)."""
    folder = tmp_path_factory.mktemp("inspect_eval")
    right, wrong = _eval(folder / "right", True), _eval(folder / "wrong", False)
    gc.collect()
    write_eval_log(wrong, str(folder / "wrong.json"), format="json")
    db = str(folder / "runs.db")
    return (db, import_inspect_logs([right.location], db=db),
            import_inspect_logs([folder / "wrong.json"], db=db), folder)


def test_an_eval_log_imports_its_samples_and_epochs(runs: tuple[str, str, str, Path]) -> None:
    db, right, _, _ = runs
    frame = aeh.attempts(right, db=db)
    assert (len(frame), int(frame["success"].sum()), int(frame["steps"].sum())) == (6, 6, 6)


def test_the_json_log_of_a_wrong_agent_has_no_success(runs: tuple[str, str, str, Path]) -> None:
    db, _, wrong, _ = runs
    assert aeh.load_run(wrong, db=db)["successes"].sum() == 0


def test_compare_of_two_imported_logs_finds_the_regression(runs: tuple[str, str, str, Path],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    db, right, wrong, _ = runs
    code = cli_main(["compare", right, wrong, "--db", db])
    assert (code, "VERDICT: REGRESSED" in capsys.readouterr().out) == (1, True)


def test_report_of_an_imported_log(runs: tuple[str, str, str, Path]) -> None:
    db, right, _, folder = runs
    out = folder / "report.html"
    with redirect_stdout(io.StringIO()):
        assert cli_main(["report", "--run-id", right, "--db", db, "--out", str(out)]) == 0
    assert "inspect:" in out.read_text()


def test_the_suite_rate_reproduces_inspects_accuracy(runs: tuple[str, str, str, Path]) -> None:
    db, right, _, _ = runs
    result = aeh.load_run(right, db=db)
    assert result.run.config.facts["source_accuracy"]["mean"] == pytest.approx(result.suite_rate)
