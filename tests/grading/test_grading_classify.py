"""Failure classification: every bucket, and the priority conflicts between them."""

from __future__ import annotations

import pytest

from aeh.grading.classify import classify_failure
from aeh.models import FailureBucket as B
from aeh.models import ToolCall


def call(name: str, error: str | None = None, injected: str | None = None) -> ToolCall:
    return ToolCall(name=name, error_kind=error, injected_fault=injected)


def bucket(status="answered", calls=(), output="some answer", success=False):
    return classify_failure(success=success, status=status, tool_calls=list(calls), final_output=output)


def test_success_has_no_bucket():
    assert bucket(success=True, calls=[call("t", "timeout")]) is None


@pytest.mark.parametrize("calls, status, output, expected", [
    ([call("fetch", "timeout")], "answered", "x", B.tool_error),
    ([call("fetch", "500", injected="500")], "gave_up", None, B.tool_error),
    ([call("fetch", "unavailable")], "answered", "x", B.tool_error),
    ([call("fetch", "invalid_args")], "answered", "x", B.malformed_tool_call),
    ([call("nonexistent", "unknown_tool")], "answered", "x", B.hallucinated_tool),
    ([call("fetch")], "budget_exhausted", None, B.budget_exhausted),
    ([call("fetch")], "answered", "42", B.wrong_answer),
    ([call("fetch")], "answered", "   ", B.no_answer),
    ([], "answered", None, B.no_answer),
    ([], "gave_up", None, B.no_answer),
    ([], "gave_up", "Sorry, I could not finish.", B.no_answer),
    ([], "declined", "I won't do that.", B.refusal),
    ([], "harness_error", None, B.harness_error),
    ([], "something_new", "x", B.harness_error),
])
def test_each_bucket(calls, status, output, expected):
    assert bucket(status, calls, output) == expected


def test_an_injected_fault_is_tool_side_even_without_error_kind():
    assert bucket(calls=[call("fetch", injected="garbage")]) == B.tool_error


def test_unrecovered_tool_error_beats_malformed_call():
    assert bucket(calls=[call("a", "invalid_args"), call("b", "timeout")]) == B.tool_error


def test_recovered_tool_error_is_not_the_root_cause():
    calls = [call("fetch", "timeout"), call("fetch")]
    assert bucket("answered", calls, "wrong") == B.wrong_answer
    assert bucket("budget_exhausted", calls, None) == B.budget_exhausted


def test_recovery_must_be_the_same_tool_and_later():
    assert bucket(calls=[call("fetch", "timeout"), call("other")]) == B.tool_error
    assert bucket(calls=[call("fetch"), call("fetch", "timeout")]) == B.tool_error
    # one failure recovered, a second tool still broken at the end
    assert bucket(calls=[call("a", "500"), call("a"), call("b", "timeout")]) == B.tool_error


def test_malformed_beats_hallucinated_and_budget():
    assert bucket("budget_exhausted", [call("x", "unknown_tool"), call("y", "invalid_args")], None) \
        == B.malformed_tool_call
    assert bucket("budget_exhausted", [call("y", "invalid_args")], None) == B.malformed_tool_call
    assert bucket("budget_exhausted", [call("x", "unknown_tool")], None) == B.hallucinated_tool


def test_declining_a_task_that_should_be_done_is_refusal_not_wrong_answer():
    assert bucket("declined", [call("fetch")], "I can't help with that") == B.refusal


def test_harness_error_overrides_agent_evidence():
    # the harness broke: the agent's unrecovered tool error is not trustworthy evidence
    assert bucket("harness_error", [call("fetch", "timeout"), call("x", "invalid_args")], "x") \
        == B.harness_error
