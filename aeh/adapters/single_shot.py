"""`--adapter single_shot`: one model call, no tool use — the baseline a reactive agent must beat.

The model sees the task prompt and may answer or decline (the `decline` pseudo-tool is the
only tool offered; a reply opening with a clear refusal also counts). A tool call to anything
else is not executed — a single shot has no second turn to read a result — but it is recorded
on the model span (`unexecuted_tool_calls`) and the attempt's output is the message text (often
empty → no_answer). Tasks whose graders require tool use will fail under this adapter, which is
the point of a baseline.
"""

from __future__ import annotations

from typing import Any

from aeh.adapters._chat import (
    DECLINE_TOOL,
    DECLINE_TOOL_NAME,
    SINGLE_SHOT_SYSTEM_PROMPT,
    LiveChatAdapter,
    assistant_message,
    chat_turn,
    is_refusal,
    parse_arguments,
)
from aeh.engine.context import AttemptContext
from aeh.models import AgentOutcome, Task

__all__ = ["SingleShotAdapter"]


class SingleShotAdapter(LiveChatAdapter):
    """One chat completion per attempt. Options: see `aeh.adapters._chat.ChatOptions`."""

    name = "single_shot"

    async def run(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system_prompt(SINGLE_SHOT_SYSTEM_PROMPT)},
            self.user_message(task),
        ]
        tools = [DECLINE_TOOL] if self.options.offer_decline_tool else None
        message = await chat_turn(ctx, self, messages, tools=tools, turn=0)
        out = assistant_message(message)
        text = (out.get("content") or "").strip()
        calls = out.get("tool_calls") or []
        for call in calls:
            if call["function"]["name"] == DECLINE_TOOL_NAME and self.options.offer_decline_tool:
                args = parse_arguments(call["function"]["arguments"])
                reason = args.get("reason") if isinstance(args, dict) else None
                final = reason.strip() if isinstance(reason, str) and reason.strip() else text
                return AgentOutcome(final_output=final or "I can't help with that request.",
                                    status="declined")
        if calls:
            ctx.recorder.event("single_shot:unexecuted_tool_calls", "model",
                               tools=[c["function"]["name"] for c in calls])
        if is_refusal(text):
            return AgentOutcome(final_output=text, status="declined")
        return AgentOutcome(final_output=text, status="answered")
