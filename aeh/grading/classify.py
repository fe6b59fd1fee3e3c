"""Failure classification: one root-cause bucket per failed attempt, by fixed priority.

The priority (FailureBucket's declaration order) names the root cause rather than the last
symptom: a tool that broke and stayed broken explains a wrong answer better than the answer does.
"""

from __future__ import annotations

from collections.abc import Sequence

from aeh.models import TOOL_SIDE_ERROR_KINDS, FailureBucket, ToolCall

__all__ = ["classify_failure", "unrecovered_tool_errors"]


def _tool_side(call: ToolCall) -> bool:
    # An injected fault is tool-side even if an adapter forgot to set error_kind.
    return call.error_kind in TOOL_SIDE_ERROR_KINDS or call.injected_fault is not None


def unrecovered_tool_errors(tool_calls: Sequence[ToolCall]) -> list[ToolCall]:
    """Tool-side failures with no LATER successful call of the same tool.

    A retry that works (or a later call to the same tool that works) is a recovery, and a
    recovered failure is not the root cause of anything.
    """
    out: list[ToolCall] = []
    for i, call in enumerate(tool_calls):
        if _tool_side(call) and not any(
            later.name == call.name and later.ok for later in tool_calls[i + 1 :]
        ):
            out.append(call)
    return out


def classify_failure(
    *,
    success: bool,
    status: str,
    tool_calls: Sequence[ToolCall],
    final_output: str | None,
    judge_unparseable: bool = False,
) -> FailureBucket | None:
    """The one bucket for a failed attempt; None for a success.

    `judge_unparseable`: the only failing outcome graders were judges whose reply never parsed.
    """
    if success:
        return None
    # Deliberate override: when the harness itself broke, the agent's trace is not trustworthy
    # evidence of anything, so no agent-side bucket may claim the failure.
    if status == "harness_error":
        return FailureBucket.harness_error
    if unrecovered_tool_errors(tool_calls):
        return FailureBucket.tool_error
    kinds = {c.error_kind for c in tool_calls}
    if "invalid_args" in kinds:
        return FailureBucket.malformed_tool_call
    if "unknown_tool" in kinds:
        return FailureBucket.hallucinated_tool
    if status == "budget_exhausted":
        return FailureBucket.budget_exhausted
    has_output = bool(final_output and final_output.strip())
    if status == "answered" and judge_unparseable:
        return FailureBucket.judge_unparseable
    if status == "answered":
        return FailureBucket.wrong_answer if has_output else FailureBucket.no_answer
    # Giving up is "no answer" even when the agent wrote an apology: it delivered no answer.
    if status == "gave_up":
        return FailureBucket.no_answer
    if status == "declined":
        return FailureBucket.refusal
    return FailureBucket.harness_error  # an unknown status: nothing else matched
