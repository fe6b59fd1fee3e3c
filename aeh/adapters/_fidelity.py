"""Did the model see what the trace says it was offered? A check on every live model turn.

Some OpenAI-compatible servers accept `tools` and then leave them out of the prompt: with
`tool_choice` unset, llama-cpp-python's `chatml-function-calling` handler renders no tool at all
(162 prompt tokens per turn instead of 433 with a tool forced), so a "react" run measured a
model that never saw a tool while the trace listed the tools as offered.

The rule (documented in docs/adapters.md): estimate the tokens the messages and the tool
schemas need at ~4 characters a token; a turn that offered tools is *suspect* when the
prompt tokens the server reports are fewer than

    0.8 × (estimated message tokens) + 0.5 × (estimated tool-schema tokens)

i.e. the reported prompt cannot hold even half of the schemas on top of the conversation. Only
turns with server-reported usage are checked (an estimate cannot contradict itself).

Two more facts of a turn the run summary reports as the server's behaviour, not the agent's:
a `tool_choice` that obliged a tool call answered without one (`tool_choice_ignored`: the
server does not enforce it), and a request refused with HTTP 400 whose tool schemas carry a
regex `pattern` the server may not turn into a grammar (`schema_patterns`).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["estimate_message_tokens", "estimate_tool_tokens", "forced_tool", "schema_patterns",
           "tool_choice_ignored", "tools_dropped_suspect"]

CHARS_PER_TOKEN = 4
MESSAGE_SHARE = 0.8
TOOL_SHARE = 0.5


def estimate_message_tokens(messages: list[dict[str, Any]]) -> int:
    """≈ tokens of the messages' contents and tool calls (+4 per message for the template)."""
    chars = 0
    for m in messages:
        content = m.get("content")
        chars += len(content) if isinstance(content, str) else len(json.dumps(content or ""))
        for call in m.get("tool_calls") or []:
            chars += len(json.dumps(call))
    return chars // CHARS_PER_TOKEN + 4 * len(messages)


def estimate_tool_tokens(tools: list[dict[str, Any]] | None) -> int:
    """≈ tokens of the tool schemas as JSON."""
    return len(json.dumps(tools)) // CHARS_PER_TOKEN if tools else 0


def tools_dropped_suspect(reported_prompt_tokens: int | None, messages: list[dict[str, Any]],
                          tools: list[dict[str, Any]] | None) -> tuple[bool, int]:
    """(suspect, the least prompt tokens that could contain the tools); False without tools."""
    tool_tokens = estimate_tool_tokens(tools)
    if not tool_tokens or reported_prompt_tokens is None:
        return False, 0
    floor = int(MESSAGE_SHARE * estimate_message_tokens(messages) + TOOL_SHARE * tool_tokens)
    return reported_prompt_tokens < floor, floor


def schema_patterns(tools: list[dict[str, Any]] | None) -> list[dict[str, str]]:
    """Every `pattern` in the tools' parameter schemas: `[{"tool", "field", "pattern"}]`.

    A server that turns tool schemas into a sampling grammar (llama.cpp) may not support a
    regex pattern and refuse the whole request with HTTP 400; these name what it refused.
    """
    found: list[dict[str, str]] = []

    def walk(node: Any, tool: str, where: str) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                found.append({"tool": tool, "field": where or "(arguments)", "pattern": node["pattern"]})
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    for name, sub in value.items():
                        walk(sub, tool, f"{where}.{name}" if where else name)
                elif key != "pattern":
                    walk(value, tool, where)
        elif isinstance(node, list):
            for item in node:
                walk(item, tool, where)

    for t in tools or []:
        function = t.get("function") or {}
        walk(function.get("parameters"), str(function.get("name") or "?"), "")
    return found


def forced_tool(tool_choice: str | dict[str, Any] | None) -> str | None:
    """What a tool_choice obliges: "*" (any tool: `required`), a function name, or None."""
    if tool_choice in ("required", "any"):  # "any": LangChain's and Anthropic's word for required
        return "*"
    if isinstance(tool_choice, str) and tool_choice not in ("auto", "none", "unset"):
        return tool_choice  # a bare tool name, as LangChain's bind_tools(tool_choice=...) takes it
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
        return str(name) if name else "*"
    return None


def tool_choice_ignored(tool_choice: str | dict[str, Any] | None, called: list[str]) -> bool:
    """True when tool_choice obliged a tool call and the reply made none (or not the forced one)."""
    forced = forced_tool(tool_choice)
    if forced is None:
        return False
    return not called if forced == "*" else forced not in called
