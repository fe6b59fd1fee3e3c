"""A streamed chat completion (server-sent events) read back into the reply a plain request gets.

Why aeh streams (`ChatOptions.stream`, on by default): a budget cut must stop the server's
spending. Over HTTP/1.1 a server learns that the client hung up only when it reads from or writes
to the connection. A streaming server writes every token, so the first write after the hang-up
fails and the request is cancelled at the next token. A non-streaming request is checked only
by polling: llama.cpp's server looks at the socket only after a full second in which no result
reached any of its HTTP threads, so while other requests finish or a monitor polls `/slots` or
`/metrics` it never looks, and the slot generates to `max_tokens` (docs/adapters.md, "A budget
cut stops the server"). Hosted APIs likewise stop generating — and billing — for a streamed
request the client abandons.

`StreamReply` takes the body's bytes as they arrive (`feed`), keeps what a cut-off call needs
to be booked honestly (`output_events`: content or tool-call deltas received, about one token
each; `usage` once the server sent it), and at the end (`reply()`) builds the JSON object of a
non-streamed chat completion: id, model, one choice per index with the concatenated content,
tool calls assembled by their index (id, name, argument fragments joined), the finish reason,
`usage` (sent in the last event when the request asks `stream_options.include_usage`) and
llama.cpp's `timings`. A stream that ends before `data: [DONE]` and without a finish reason is a
truncated reply (`StreamTruncated`); an `error` event is the server's error (`StreamError`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["StreamError", "StreamReply", "StreamTruncated"]

_DONE = b"[DONE]"


class StreamError(Exception):
    """The server sent an `error` event mid-stream; `status` is its code when it gave one."""

    def __init__(self, message: str, status: int, body: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class StreamTruncated(Exception):
    """The stream ended before `[DONE]` and before any choice finished."""


@dataclass
class _Choice:
    role: str | None = None
    content: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    tool_calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class StreamReply:
    """The state of one streamed reply (see the module docstring)."""

    output_events: int = 0
    """Deltas that carried content, a refusal or a tool call: about one generated token each."""
    events: int = 0
    """`data:` events received (any kind)."""
    usage: dict[str, Any] | None = None
    done: bool = False
    _buffer: bytes = b""
    _data: list[bytes] = field(default_factory=list)
    _top: dict[str, Any] = field(default_factory=dict)
    _choices: dict[int, _Choice] = field(default_factory=dict)

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the body (any split: lines are reassembled)."""
        self._buffer += data
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                return
            line, self._buffer = self._buffer[:end].rstrip(b"\r"), self._buffer[end + 1:]
            self._line(line)

    def _line(self, line: bytes) -> None:
        if not line:  # a blank line ends an event
            if self._data:
                payload, self._data = b"\n".join(self._data), []
                self._event(payload)
            return
        if line.startswith(b":"):
            return  # a comment (keep-alive)
        name, _, value = line.partition(b":")
        if name == b"data":
            self._data.append(value[1:] if value.startswith(b" ") else value)
        elif name == b"error" and value.strip():
            self._data.append(value.strip())

    def _event(self, payload: bytes) -> None:
        if payload.strip() == _DONE:
            self.done = True
            return
        self.events += 1
        try:
            chunk = json.loads(payload)
        except ValueError as exc:
            raise ValueError(f"a streamed event is not JSON: {payload[:200]!r}") from exc
        if not isinstance(chunk, dict):
            raise ValueError(f"a streamed event is not a JSON object: {payload[:200]!r}")
        if "error" in chunk:
            error = chunk["error"]
            detail = error if isinstance(error, dict) else {"message": str(error)}
            code = detail.get("code")
            status = code if isinstance(code, int) and 400 <= code < 600 else 500
            raise StreamError(str(detail.get("message") or error), status, chunk)
        for key, value in chunk.items():
            if key == "choices":
                continue
            if key == "usage":
                if isinstance(value, dict):
                    self.usage = value
                continue
            if value is not None or key not in self._top:
                self._top[key] = value
        for raw in chunk.get("choices") or []:
            if isinstance(raw, dict):
                self._choice_delta(raw)

    def _choice_delta(self, raw: dict[str, Any]) -> None:
        index = raw["index"] if isinstance(raw.get("index"), int) else 0
        choice = self._choices.setdefault(index, _Choice())
        if raw.get("finish_reason") is not None:
            choice.finish_reason = raw["finish_reason"]
        delta = raw.get("delta")
        if not isinstance(delta, dict):
            return
        produced = False
        for key, value in delta.items():
            if key == "role":
                choice.role = value or choice.role
            elif key == "content":
                if isinstance(value, str) and value:
                    choice.content.append(value)
                    produced = True
            elif key == "refusal":
                if isinstance(value, str) and value:
                    choice.refusal.append(value)
                    produced = True
            elif key == "tool_calls":
                for call in value or []:
                    if isinstance(call, dict):
                        self._tool_call_delta(choice, call)
                        produced = True
            elif value is not None:
                previous = choice.extra.get(key)
                choice.extra[key] = previous + value if isinstance(previous, str) and isinstance(value, str) \
                    else value
        if produced:
            self.output_events += 1

    @staticmethod
    def _tool_call_delta(choice: _Choice, raw: dict[str, Any]) -> None:
        index = raw["index"] if isinstance(raw.get("index"), int) else len(choice.tool_calls)
        call = choice.tool_calls.setdefault(index, {"id": None, "type": "function",
                                                    "function": {"name": "", "arguments": ""}})
        if raw.get("id"):
            call["id"] = raw["id"]
        if raw.get("type"):
            call["type"] = raw["type"]
        function = raw.get("function")
        if isinstance(function, dict):
            if function.get("name"):
                call["function"]["name"] += str(function["name"])
            if function.get("arguments"):
                call["function"]["arguments"] += str(function["arguments"])

    @property
    def finished(self) -> bool:
        """`[DONE]` arrived, or every choice has a finish reason."""
        return self.done or (bool(self._choices) and all(c.finish_reason is not None
                                                         for c in self._choices.values()))

    def reply(self) -> dict[str, Any]:
        """The non-streamed chat completion this stream amounts to (raises when it was cut short)."""
        if self._buffer.strip() or self._data:
            self.feed(b"\n\n")  # a last event without its blank line
        if not self.finished:
            raise StreamTruncated(f"the stream ended after {self.events} events, before [DONE] "
                                  "and before the reply finished")
        choices = []
        for index in sorted(self._choices):
            choice = self._choices[index]
            message: dict[str, Any] = {"role": choice.role or "assistant",
                                       "content": "".join(choice.content) if choice.content else None}
            if choice.refusal:
                message["refusal"] = "".join(choice.refusal)
            if choice.tool_calls:
                message["tool_calls"] = [choice.tool_calls[i] for i in sorted(choice.tool_calls)]
            message.update(choice.extra)
            choices.append({"index": index, "message": message, "finish_reason": choice.finish_reason})
        out = {**self._top, "object": "chat.completion", "choices": choices}
        if self.usage is not None:
            out["usage"] = self.usage
        return out
