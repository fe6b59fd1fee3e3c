"""A chat-completions reply as the fields aeh reads: the openai SDK's names, parsed leniently.

The SDK builds its `ChatCompletion` without validation (a missing field is simply absent, a
value of an unexpected type is kept as sent); these slotted dataclasses do the same for the
fields the live adapters read — id, model, choices (index, message, finish reason), the
message's content and tool calls (id, type, function name and raw argument string), usage —
plus llama.cpp's `timings`. Anything else the server sent stays in `model_extra`.
A body that is not a JSON object is returned as it is, as the SDK returns it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChatReply", "ReplyChoice", "ReplyFunction", "ReplyMessage", "ReplyToolCall", "ReplyUsage",
           "parse_reply"]


@dataclass(frozen=True, slots=True)
class ReplyFunction:
    name: Any = None
    arguments: Any = None


@dataclass(frozen=True, slots=True)
class ReplyToolCall:
    id: Any = None
    type: Any = None
    function: ReplyFunction | None = None


@dataclass(frozen=True, slots=True)
class ReplyMessage:
    role: Any = None
    content: Any = None
    tool_calls: list[ReplyToolCall] | None = None
    refusal: Any = None
    model_extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ReplyChoice:
    index: Any = None
    message: ReplyMessage | None = None
    finish_reason: Any = None


@dataclass(frozen=True, slots=True)
class ReplyUsage:
    prompt_tokens: Any = None
    completion_tokens: Any = None
    total_tokens: Any = None


@dataclass(frozen=True, slots=True)
class ChatReply:
    id: Any = None
    model: Any = None
    choices: list[ReplyChoice] = field(default_factory=list)
    usage: ReplyUsage | None = None
    timings: Any = None
    """llama.cpp's processing times (prompt_ms, predicted_ms), when the server sends them."""
    model_extra: dict[str, Any] = field(default_factory=dict)


_REPLY_KEYS = frozenset({"id", "model", "choices", "usage", "timings"})
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "refusal"})


def _tool_call(raw: Any) -> ReplyToolCall:
    if not isinstance(raw, dict):
        return ReplyToolCall()
    function = raw.get("function")
    return ReplyToolCall(
        id=raw.get("id"), type=raw.get("type"),
        function=ReplyFunction(function.get("name"), function.get("arguments")) if isinstance(function, dict) else None)


def _message(raw: Any) -> ReplyMessage | None:
    if not isinstance(raw, dict):
        return None
    calls = raw.get("tool_calls")
    return ReplyMessage(
        role=raw.get("role"), content=raw.get("content"), refusal=raw.get("refusal"),
        tool_calls=[_tool_call(c) for c in calls] if isinstance(calls, list) else None,
        model_extra={k: v for k, v in raw.items() if k not in _MESSAGE_KEYS})


def parse_reply(data: Any) -> Any:
    """A `ChatReply` from a decoded JSON body; a body that is not an object, unchanged."""
    if not isinstance(data, dict):
        return data
    choices = data.get("choices")
    usage = data.get("usage")
    return ChatReply(
        id=data.get("id"), model=data.get("model"), timings=data.get("timings"),
        choices=[ReplyChoice(c.get("index"), _message(c.get("message")), c.get("finish_reason"))
                 for c in choices if isinstance(c, dict)] if isinstance(choices, list) else [],
        usage=ReplyUsage(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens"))
        if isinstance(usage, dict) else None,
        model_extra={k: v for k, v in data.items() if k not in _REPLY_KEYS})
