"""A model span's messages as HTML: what was sent (role, content, tool calls) and what came back.

Shared by the static trace page and the TraceBrowser's detail pane. Everything collapses with
`<details>` (no script needed); text longer than `PREVIEW_CHARS` shows its start, and the rest
opens on a click. Messages an earlier call already sent are folded under one line.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from aeh.models import Span

__all__ = ["MESSAGES_CSS", "PREVIEW_CHARS", "message_keys", "messages_html"]

PREVIEW_CHARS = 600
_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.definitions")

MESSAGES_CSS = """
.aeh-msgs { margin: 4px 0 8px; font-size: 12px; }
.aeh-msgs > summary { cursor: pointer; color: #444; font-weight: 600; }
.aeh-msg { border-left: 3px solid #c9ced6; margin: 4px 0; padding: 2px 8px; background: #fafbfc; }
.aeh-msg .aeh-role { font-weight: 600; font-size: 11px; text-transform: uppercase; color: #555; }
.aeh-msg.aeh-user { border-color: #2f6fb5; } .aeh-msg.aeh-assistant { border-color: #5b6abf; }
.aeh-msg.aeh-tool { border-color: #2f8f6d; } .aeh-msg.aeh-system { border-color: #8a6d1d; }
.aeh-msg pre { white-space: pre-wrap; word-break: break-word; margin: 2px 0; font-size: 12px;
  background: none; border: none; padding: 0; max-height: none; }
.aeh-msg details > summary { cursor: pointer; color: #2f6fb5; }
.aeh-call { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; color: #333; }
.aeh-earlier > summary { cursor: pointer; color: #777; font-style: italic; }
"""


def message_keys() -> tuple[str, ...]:
    """The attributes `messages_html` shows (a detail pane leaves them out of its attribute dump)."""
    return _KEYS


def _text_html(text: str) -> str:
    if len(text) <= PREVIEW_CHARS:
        return f"<pre>{escape(text)}</pre>"
    head, rest = text[:PREVIEW_CHARS], text[PREVIEW_CHARS:]
    return (f"<pre>{escape(head)}</pre><details><summary>show all {len(text):,} characters</summary>"
            f"<pre>{escape(rest)}</pre></details>")


def _content(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts, or GenAI parts
        texts = [str(p.get("text", p.get("content", ""))) if isinstance(p, dict) else str(p) for p in value]
        return "\n".join(t for t in texts if t)
    return json.dumps(value, indent=2, default=str, ensure_ascii=False)


def _calls(message: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, arguments text) of a message's tool calls, chat or GenAI-parts shaped."""
    out = []
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            fn = call["function"] if isinstance(call.get("function"), dict) else call
            args = fn.get("arguments", fn.get("args"))
            out.append((str(fn.get("name") or "?"), args if isinstance(args, str) else json.dumps(args, default=str)))
    for part in message.get("parts") or []:
        if isinstance(part, dict) and part.get("type") == "tool_call":
            args = part.get("arguments")
            out.append((str(part.get("name") or "?"), args if isinstance(args, str) else json.dumps(args, default=str)))
    return out


def _message_html(message: Any) -> str:
    if not isinstance(message, dict):
        return f'<div class="aeh-msg">{_text_html(str(message))}</div>'
    role = str(message.get("role") or "?")
    text = _content(message.get("content"))
    if not text and isinstance(message.get("parts"), list):
        text = "\n".join(_content(p.get("response")) if p.get("type") == "tool_call_response" else
                         str(p.get("content", "")) for p in message["parts"]
                         if isinstance(p, dict) and p.get("type") != "tool_call")
    label = role + (f" · reply to {message['tool_call_id']}" if message.get("tool_call_id") else "")
    calls = "".join(f'<div class="aeh-call">→ {escape(name)}({escape(_short(args))})</div>'
                    for name, args in _calls(message))
    body = _text_html(text) if text else ("" if calls else "<pre>(empty)</pre>")
    return (f'<div class="aeh-msg aeh-{escape(role)}"><span class="aeh-role">{escape(label)}</span>'
            f"{body}{calls}</div>")


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def messages_html(span: Span) -> str:
    """The span's input and output messages as collapsible HTML; "" for a span that has none."""
    a = span.attributes
    sent, got = a.get("gen_ai.input.messages"), a.get("gen_ai.output.messages")
    parts = []
    if isinstance(sent, list):
        k = a.get("aeh.input.prefix_len")
        k = k if isinstance(k, int) and 0 < k <= len(sent) else 0
        earlier = ""
        if k:
            earlier = (f'<details class="aeh-earlier"><summary>{k} earlier message{"s" if k > 1 else ""}, '
                       "as sent by the previous call</summary>"
                       + "".join(_message_html(m) for m in sent[:k]) + "</details>")
        new = f" ({len(sent) - k} new)" if k else ""
        incomplete = " — earlier part missing from the store" if a.get("aeh.input.incomplete") else ""
        parts.append(f'<details class="aeh-msgs aeh-input" open><summary>input · {len(sent)} message'
                     f'{"s" if len(sent) != 1 else ""}{new}{incomplete}</summary>{earlier}'
                     + "".join(_message_html(m) for m in sent[k:]) + "</details>")
    if isinstance(got, list):
        parts.append('<details class="aeh-msgs aeh-output" open><summary>output</summary>'
                     + "".join(_message_html(m) for m in got) + "</details>")
    tools = a.get("gen_ai.tool.definitions")
    if isinstance(tools, list) and tools:
        names = [str((t.get("function") or {}).get("name") or t.get("name") or "?") if isinstance(t, dict) else "?"
                 for t in tools]
        parts.append(f'<details class="aeh-msgs aeh-tools"><summary>tools offered · {escape(", ".join(names))}'
                     f"</summary><pre>{escape(json.dumps(tools, indent=2, default=str, ensure_ascii=False))}</pre>"
                     "</details>")
    return "".join(parts)
