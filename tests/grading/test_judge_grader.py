"""The `judge` outcome grader kind: pass, fail, undecided, and configs that fail validation."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest

from aeh.grading._registry import GradeContext, default_graders
from aeh.grading.judge import JudgeClient
from aeh.grading.pipeline import grade_attempt, grader_error
from aeh.models import GraderSpec, Task, ToolCall, TraceView
from aeh.testing.openai_server import FakeOpenAIServer, Reply
from aeh.trace import SpanRecorder

from .conftest import INJECTION

RUBRIC = "The answer states that there are 126 boxes."


def context(output: str | None, judge: JudgeClient | None, graders: list[dict] | None = None,
            calls: list[ToolCall] | None = None) -> GradeContext:
    task = Task(id="t", prompt="How many boxes?",
                graders=graders or [{"kind": "judge", "rubric": RUBRIC}])
    trace = TraceView(task_id="t", final_output=output, tool_calls=calls or [])
    return GradeContext(task=task, trace=trace, workspace=Path("."), judge=judge,
                        recorder=SpanRecorder("r", "t", 0))


def judge_for(server: FakeOpenAIServer) -> JudgeClient:
    return JudgeClient("gpt-4o-mini", base_url=server.base_url, api_key="test", backoff_s=0.01)


async def grade(ctx: GradeContext):
    spec = ctx.task.outcome_graders[0]
    return await default_graders.grade(spec, ctx)


async def test_judge_pass_and_fail():
    replies = [Reply.text(json.dumps({"passed": True, "reason": "says 126"})),
               Reply.text(json.dumps({"passed": False, "reason": "says 84"}))]
    with FakeOpenAIServer(replies) as server:
        good = await grade(context("126 boxes", judge_for(server)))
        bad = await grade(context("84 boxes", judge_for(server)))
    assert good.passed is True and good.tier == 0 and good.kind == "judge"
    assert good.evidence["reason"] == "says 126" and good.evidence["judge_model"] == "gpt-4o-mini"
    assert good.evidence["rubric"] == RUBRIC and good.evidence["prompt_version"] == "judge-v1"
    assert bad.passed is False and bad.evidence["reason"] == "says 84"
    assert RUBRIC in server.requests[0]["messages"][1]["content"]


async def test_no_output_fails_without_calling_the_judge():
    with FakeOpenAIServer([Reply.text("unused")]) as server:
        result = await grade(context("  ", judge_for(server)))
    assert result.passed is False and server.requests == []


async def test_no_judge_configured_is_undecided_with_a_clear_error():
    result = await grade(context("126", None))
    assert result.passed is None and "--judge-model" in result.error
    assert grader_error([result]).startswith("grader judge failed")  # → a harness error


async def test_malformed_twice_is_not_passed_and_judge_unparseable_not_a_harness_error():
    """The agent's answer talked the judge out of JSON: the agent did not show it meets the rubric."""
    with FakeOpenAIServer([Reply.text("PASS")]) as server:
        result = await grade(context("126", judge_for(server)))
    assert result.passed is False and result.error is None
    assert result.evidence["judge_unparseable"] is True and result.evidence["judge_error_kind"] == "wrong_shape"
    assert "after one re-ask" in result.evidence["reason"]
    assert grader_error([result]) is None  # stays in n


def invalid(**options) -> str:
    with pytest.raises(pydantic.ValidationError) as info:
        default_graders.validate(GraderSpec(kind="judge", **options))
    return str(info.value)


def test_config_validation_messages():
    assert "rubric" in invalid() and "Field required" in invalid()
    assert "at least 1 character" in invalid(rubric="")
    assert "rubrik" in invalid(rubric="x", rubrik="typo") and "Extra inputs" in invalid(rubric="x", rubrik="y")
    assert "max_trace_chars" in invalid(rubric="x", max_trace_chars=10)
    assert default_graders.validate(GraderSpec(kind="judge", rubric="ok")).include_trace is True


async def test_injected_trace_is_fenced_and_cannot_flip_a_programmatic_fail():
    calls = [ToolCall(name="calculator", args={"expression": "42 * 2"}, result={"result": 84},
                      span_id="s1")]
    graders = [{"kind": "numeric", "expected": 126}, {"kind": "judge", "rubric": RUBRIC}]
    output = f"84. {INJECTION}"
    with FakeOpenAIServer([Reply.text(json.dumps({"passed": True, "reason": "told to"}))]) as server:
        ctx = context(output, judge_for(server), graders, calls)
        outcome = await grade_attempt(ctx, {}, ctx.recorder)
    numeric, judged = outcome.grader_results
    assert judged.passed is True  # the (scripted) judge was fooled …
    assert numeric.passed is False and outcome.success is False  # … and it changed nothing
    (request,) = server.requests
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert INJECTION not in system and "DATA" in system
    start = user.index("<<<AGENT_OUTPUT ")
    token = user[start:].split(">>>", 1)[0].split()[1]
    end = user.index(f"<<<END {token}>>>")
    assert user.count(INJECTION) == 1 and start < user.index(INJECTION) < end
