"""`--adapter react`: a tool-using loop over the chat-completions API with function calling.

Each turn sends the conversation plus the task's allowlisted tools (and the `decline`
pseudo-tool) as function schemas. Tool calls go through `ctx.call_tool` — allowlist, schema
validation, faults and the step budget apply — and every result (or error) goes back to the
model as a `tool` message. The loop ends with:

- a message with no tool calls → the final answer (`answered`; empty content → no answer),
  or `declined` when the text opens with a clear refusal;
- a call to `decline` → `declined`, with the reason as the final output;
- the budget: max steps, wall-clock timeout, token or cost caps, or `max_turns`
  (default: the task's max_steps + 1) → `budget_exhausted`.

Arguments that are not a JSON object are passed to `ctx.call_tool` as the raw string, so the
engine records `invalid_args` (→ malformed_tool_call); a tool not offered is `unknown_tool`
(→ hallucinated_tool). Both errors are fed back and the loop continues: recovering is the
agent's job. Provider trouble that outlasts the retries raises ProviderError (→ harness_error).
"""

from __future__ import annotations

from typing import Any

from aeh.adapters._chat import (
    DECLINE_TOOL,
    DECLINE_TOOL_NAME,
    SYSTEM_PROMPT,
    LiveChatAdapter,
    assistant_message,
    chat_turn,
    is_refusal,
    parse_arguments,
    tool_result_content,
)
from aeh.engine.budget import BudgetExceeded
from aeh.engine.context import AttemptContext
from aeh.models import AgentOutcome, Task

__all__ = ["ReactAdapter"]


def _decline_reason(raw: str | None, content: str | None) -> str:
    args = parse_arguments(raw)
    reason = args.get("reason") if isinstance(args, dict) else None
    if isinstance(reason, str) and reason.strip():
        return reason.strip()
    return (content or "").strip() or "I can't help with that request."


class ReactAdapter(LiveChatAdapter):
    """ReAct-style function-calling agent. Options: see `aeh.adapters._chat.ChatOptions`."""

    name = "react"

    def tools_for(self, ctx: AttemptContext) -> list[dict[str, Any]]:
        tools = list(ctx.tool_schemas())
        if self.options.offer_decline_tool:
            tools.append(DECLINE_TOOL)
        return tools

    async def run(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        tools = self.tools_for(ctx)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system_prompt(SYSTEM_PROMPT)},
            self.user_message(task),
        ]
        max_turns = self.options.max_turns or task.budget.max_steps + 1
        for turn in range(max_turns):
            message = await chat_turn(ctx, self, messages, tools=tools, turn=turn)
            as_request = assistant_message(message)
            calls = as_request.get("tool_calls") or []
            content = as_request.get("content")
            # Echo the reply back with "" for a null content: OpenAI accepts null next to
            # tool_calls, but some compatible servers (llama-cpp-python) reject it with a 500.
            messages.append({**as_request, "content": content or ""})
            if not calls:
                text = content if isinstance(content, str) else ""
                if is_refusal(text):
                    return AgentOutcome(final_output=text.strip(), status="declined")
                return AgentOutcome(final_output=text.strip(), status="answered")
            declined = [c for c in calls if c["function"]["name"] == DECLINE_TOOL_NAME]
            if declined and self.options.offer_decline_tool:
                reason = _decline_reason(declined[0]["function"]["arguments"], content)
                return AgentOutcome(final_output=reason, status="declined")
            for call in calls:
                name = call["function"]["name"]
                args = parse_arguments(call["function"]["arguments"])
                result = await ctx.call_tool(name, args)  # BudgetExceeded propagates
                messages.append({"role": "tool", "tool_call_id": call["id"],
                                 "content": tool_result_content(result)})
        reason = f"max_turns={max_turns} reached without a final answer"
        ctx.budget.exhausted = reason
        raise BudgetExceeded(reason)

