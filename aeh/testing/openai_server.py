"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for offline tests.

Live adapters and the judge talk to it through the real `openai` client, so tests exercise the
real HTTP path (retries, timeouts, status codes) without a key or the internet:

    with FakeOpenAIServer([Reply.text("42"), Reply.error(500), Reply.text("ok")]) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")

Replies are served in order (the last one repeats), or chosen by a function of the request.
Every request body is kept in `server.requests`.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAIServer", "Reply"]


@dataclass
class Reply:
    """One scripted answer: a chat completion, an HTTP error, or raw bytes — optionally delayed."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def text(cls, content: str | None, *, prompt_tokens: int = 50, completion_tokens: int = 10,
             model: str = "fake-model", delay_s: float = 0.0, finish_reason: str = "stop") -> Reply:
        return cls(body=_completion({"role": "assistant", "content": content}, prompt_tokens,
                                    completion_tokens, model, finish_reason), delay_s=delay_s)

    @classmethod
    def tool_calls(cls, calls: Sequence[tuple[str, Any]], *, content: str | None = None,
                   prompt_tokens: int = 60, completion_tokens: int = 15, model: str = "fake-model",
                   delay_s: float = 0.0) -> Reply:
        """`calls` are (name, arguments); arguments that are not a str are JSON-encoded."""
        message = {"role": "assistant", "content": content, "tool_calls": [
            {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
             "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for name, args in calls
        ]}
        return cls(body=_completion(message, prompt_tokens, completion_tokens, model, "tool_calls"),
                   delay_s=delay_s)

    @classmethod
    def error(cls, status: int, message: str = "scripted error", *, delay_s: float = 0.0,
              retry_after: float | None = None) -> Reply:
        headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
        return cls(status=status, body={"error": {"message": message, "type": "server_error",
                                                  "code": str(status)}},
                   delay_s=delay_s, headers=headers)

    @classmethod
    def garbage(cls, raw: bytes = b"{not json", status: int = 200) -> Reply:
        return cls(status=status, raw=raw)


def _completion(message: dict[str, Any], prompt_tokens: int, completion_tokens: int, model: str,
                finish_reason: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion",
        "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


Responder = Callable[[dict[str, Any]], Reply]


class FakeOpenAIServer:
    """Serves `/v1/chat/completions` and `/v1/models` on an ephemeral loopback port."""

    def __init__(self, replies: Sequence[Reply] | Responder = ()) -> None:
        self._script = list(replies) if not callable(replies) else []
        self._responder = replies if callable(replies) else None
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -----------------------------------------------------------------------
    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def _next(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._responder is not None:
                return self._responder(request)
            if not self._script:
                return Reply.text("")
            return self._script.pop(0) if len(self._script) > 1 else self._script[0]

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to deliver

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(Reply(body={"object": "list", "data": [{"id": "fake-model", "object": "model"}]}))
                else:
                    self._send(Reply.error(404, f"no route {self.path}"))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(Reply.error(400, "request body is not JSON"))
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(Reply.error(404, f"no route {self.path}"))
                    return
                self._send(server._next(body))

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
