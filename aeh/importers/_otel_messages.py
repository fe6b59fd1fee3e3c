"""A model span's messages in OTLP, both ways: the GenAI conventions' JSON attributes
(`gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.definitions`, role + parts) and
OpenInference's flat ones (`llm.input_messages.N.message.role` …), which are what Arize Phoenix
shows as a span's Input and Output.

Reading back prefers the OpenInference attributes (they keep a tool call's argument text exactly),
then the GenAI ones; either way the span gets chat messages again (`role`, `content`,
`tool_calls`, `tool_call_id`), as aeh records them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aeh.trace import INPUT_MESSAGES, OUTPUT_MESSAGES, TOOL_DEFINITIONS, genai_parts

__all__ = ["export_messages", "import_messages"]


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: their text, in order
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return _json(content)


def _flat_messages(prefix: str, messages: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        at = f"{prefix}.{i}.message"
        out[f"{at}.role"] = str(m.get("role") or "user")
        content = _text(m.get("content"))
        if content is not None:
            out[f"{at}.content"] = content
        if m.get("tool_call_id"):
            out[f"{at}.tool_call_id"] = str(m["tool_call_id"])
        for j, call in enumerate(m.get("tool_calls") or []):
            if not isinstance(call, dict):
                continue
            fn = call["function"] if isinstance(call.get("function"), dict) else {}
            args = fn.get("arguments", call.get("args"))
            tc = f"{at}.tool_calls.{j}.tool_call"
            if call.get("id"):
                out[f"{tc}.id"] = str(call["id"])
            out[f"{tc}.function.name"] = str(fn.get("name") or call.get("name") or "")
            out[f"{tc}.function.arguments"] = args if isinstance(args, str) else _json(args)
    return out


def _finished(output: list[Any], reasons: Any) -> list[dict[str, Any]]:
    """Output messages in the parts shape, each with the `finish_reason` the conventions require."""
    reasons = reasons if isinstance(reasons, list) else []
    parts = genai_parts(output)
    for i, m in enumerate(parts):
        m.setdefault("finish_reason", str(reasons[i] if i < len(reasons) and reasons[i] else "stop"))
    return parts


def export_messages(attributes: dict[str, Any]) -> dict[str, Any]:
    """The OTLP attributes of a model span's messages (GenAI JSON strings and OpenInference flat)."""
    out: dict[str, Any] = {"openinference.span.kind": "LLM"}
    inputs = attributes.get(INPUT_MESSAGES)
    output = attributes.get(OUTPUT_MESSAGES)
    tools = attributes.get(TOOL_DEFINITIONS)
    if isinstance(inputs, list):
        out[INPUT_MESSAGES] = _json(genai_parts(inputs))
        out.update(_flat_messages("llm.input_messages", inputs))
        out["input.value"] = _json(inputs)
        out["input.mime_type"] = "application/json"
    if isinstance(output, list):
        out[OUTPUT_MESSAGES] = _json(_finished(output, attributes.get("gen_ai.response.finish_reasons")))
        out.update(_flat_messages("llm.output_messages", output))
        last = output[-1] if output and isinstance(output[-1], dict) else {}
        text = _text(last.get("content"))
        out["output.value"] = text if text else _json(output)
        out["output.mime_type"] = "text/plain" if text else "application/json"
    if isinstance(tools, list):
        out[TOOL_DEFINITIONS] = _json(tools)
        for i, tool in enumerate(tools):
            out[f"llm.tools.{i}.tool.json_schema"] = _json(tool)
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    if model:
        out["llm.model_name"] = str(model)
    for key, oi in (("gen_ai.usage.input_tokens", "llm.token_count.prompt"),
                    ("gen_ai.usage.output_tokens", "llm.token_count.completion")):
        if isinstance(attributes.get(key), int):
            out[oi] = attributes[key]
    return out


_FLAT = re.compile(r"^llm\.(input|output)_messages\.(\d+)\.message\.(.+)$")
_CALL = re.compile(r"^tool_calls\.(\d+)\.tool_call\.(id|function\.name|function\.arguments)$")


def _from_flat(a: dict[str, Any], side: str) -> list[dict[str, Any]] | None:
    found: dict[int, dict[str, Any]] = {}
    calls: dict[tuple[int, int], dict[str, Any]] = {}
    for key, value in a.items():
        m = _FLAT.match(key)
        if m is None or m.group(1) != side:
            continue
        i, rest = int(m.group(2)), m.group(3)
        msg = found.setdefault(i, {})
        if rest in ("role", "content", "tool_call_id"):
            msg[rest] = value
        elif (c := _CALL.match(rest)) is not None:
            call = calls.setdefault((i, int(c.group(1))), {"type": "function", "function": {}})
            if c.group(2) == "id":
                call["id"] = value
            else:
                call["function"][c.group(2).removeprefix("function.")] = value
    if not found:
        return None
    for (i, _j), call in sorted(calls.items()):
        found[i].setdefault("tool_calls", []).append(call)
    return [found[i] for i in sorted(found)]


def _from_parts(messages: Any) -> list[dict[str, Any]] | None:
    """GenAI role + parts messages (or chat messages) as chat messages."""
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except ValueError:
            return None
    if not isinstance(messages, list):
        return None
    out: list[dict[str, Any]] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        if not isinstance(m.get("parts"), list):
            out.append(m)
            continue
        msg: dict[str, Any] = {"role": m.get("role") or "user"}
        texts = [str(p.get("content", "")) for p in m["parts"] if isinstance(p, dict) and p.get("type") == "text"]
        if texts:
            msg["content"] = "".join(texts)
        for p in m["parts"]:
            if not isinstance(p, dict):
                continue
            if p.get("type") == "tool_call":
                args = p.get("arguments")
                msg.setdefault("tool_calls", []).append({
                    "id": p.get("id"), "type": "function",
                    "function": {"name": p.get("name"), "arguments": args if isinstance(args, str) else _json(args)}})
            elif p.get("type") == "tool_call_response":
                msg["tool_call_id"] = p.get("id")
                response = p.get("response")
                msg["content"] = response if isinstance(response, str) else _json(response)
        out.append(msg)
    return out


def import_messages(a: dict[str, Any]) -> dict[str, Any]:
    """A model span's messages from OTLP attributes, as aeh's span attributes (empty when none)."""
    out: dict[str, Any] = {}
    for side, key in (("input", INPUT_MESSAGES), ("output", OUTPUT_MESSAGES)):
        messages = _from_flat(a, side)
        if messages is None:
            messages = _from_parts(a.get(key))
        if messages is not None:
            out[key] = messages
    tools = a.get(TOOL_DEFINITIONS)
    if isinstance(tools, str):
        try:
            tools = json.loads(tools)
        except ValueError:
            tools = None
    if isinstance(tools, list):
        out[TOOL_DEFINITIONS] = tools
    return out
