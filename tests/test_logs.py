"""Run logging: the progress bar on a terminal, and configuration errors."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import aeh
from aeh.errors import ConfigError
from aeh.logs import RunLogger


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_and_one_line_per_task(db: Path) -> None:
    stream = FakeTerminal()
    aeh.run("toy_math", attempts=2, seed=1, db=db, progress=RunLogger("progress", stream=stream))
    text = stream.getvalue()
    assert "6/6 attempts" in text and "[" in text and "#" in text
    task_lines = [line for line in text.replace("\r", "\n").splitlines() if "/2 " in line and "[0." in line]
    assert len({line.split()[1] for line in task_lines}) == 3


def test_no_progress_bar_when_not_a_terminal(db: Path) -> None:
    stream = io.StringIO()
    aeh.run("toy_math", attempts=1, seed=1, db=db, progress=RunLogger("progress", stream=stream))
    assert "attempts" not in stream.getvalue() and "\r" not in stream.getvalue()


@pytest.mark.parametrize("kwargs, message", [
    ({"level": "verbose"}, "--log-level"),
    ({"fmt": "xml"}, "--log-format"),
    ({"only": ["tool"]}, "unknown log category tool"),
])
def test_bad_logging_options(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RunLogger(**kwargs)


def test_a_model_calls_whole_input_is_logged_at_trace_only():
    import io
    import json as _json

    from aeh.logs import RunLogger
    from aeh.models import Span

    span = Span(run_id="r", task_id="t", attempt=0, span_id="s", category="model", name="model:call", start_ts=0,
                end_ts=1, attributes={"gen_ai.input.messages": [{"role": "user", "content": "the long prompt"}],
                                      "gen_ai.request.messages": 1})
    for level, shown in (("calls", False), ("trace", True)):
        out = io.StringIO()
        RunLogger(level=level, fmt="jsonl", stream=out).span_ended(span, 0)
        records = [_json.loads(line) for line in out.getvalue().splitlines()]
        assert records and ("the long prompt" in out.getvalue()) is shown, level
        assert records[-1]["attributes"]["gen_ai.request.messages"] == 1  # the count stays at every level
