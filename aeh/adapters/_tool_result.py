"""What a model is shown of a tool call: one function, apart from the chat adapters' HTTP stack so
that an adapter without a network (the mock) does not import httpx, whose package imports its own
command line (click, rich, pygments) when those are installed."""

from __future__ import annotations

import json

from aeh.models import ToolCall

__all__ = ["tool_result_content"]

_MAX_TOOL_RESULT_CHARS = 8000


def tool_result_content(call: ToolCall) -> str:
    """What the model sees as a tool result: the result as JSON, or the error."""
    if call.ok:
        text = call.result if isinstance(call.result, str) else json.dumps(call.result, default=str)
    else:
        text = f"ERROR ({call.error_kind}): {call.error or call.error_kind}"
        if call.result is not None:
            text += f"\noutput: {call.result if isinstance(call.result, str) else json.dumps(call.result, default=str)}"
    if len(text) > _MAX_TOOL_RESULT_CHARS:
        text = text[:_MAX_TOOL_RESULT_CHARS] + f"… [truncated, {len(text)} characters]"
    return text
