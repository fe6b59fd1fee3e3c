"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for offline tests.

Live adapters and the judge talk to it through the real `openai` client, so tests exercise the
real HTTP path (retries, timeouts, status codes) without a key or the internet:

    with FakeOpenAIServer([Reply.text("42"), Reply.error(500), Reply.text("ok")]) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")

Replies are served in order (the last one repeats), or chosen by a function of the request.
Every request body is kept in `server.requests`, its headers (lower-cased names) in
`server.request_headers`, its method and path in `server.request_lines` and its bytes as sent
in `server.raw_bodies`.

Options that imitate a real single-process server (llama-cpp-python's, see docs/adapters.md):

- `count_prompt_tokens=True`: `usage.prompt_tokens` is computed from the request (characters
  of the message contents / 4, plus the tool schemas' JSON / 4 when they reach the "prompt").
- `drop_tools_without_choice=True`: with `tool_choice` unset the tools never reach the prompt
  (they are not counted), as llama-cpp-python's `chatml-function-calling` handler does.
- `serial=True`: one request is processed at a time; others wait in the server's queue.
- `timings=True`: replies carry llama.cpp's `timings` object (prompt_ms + predicted_ms = the
  time spent processing, excluding time queued).
- `reject_response_format={"json_schema"}`: a request whose `response_format.type` is listed
  is refused with HTTP 400, as servers without structured output do.
- Streaming: a request with `"stream": true` gets its reply as server-sent events, as llama.cpp
  and OpenAI send them (chunked; a role delta, the content a word a chunk, each tool call's name
  then its arguments in pieces, the finish reason, `usage` in a last chunk when
  `stream_options.include_usage` asks, `timings` in the finishing chunk, then `[DONE]`).
  `Reply.stream_delay_s` waits between chunks; a client that hangs up meanwhile is counted in
  `disconnects` and nothing more is sent (`server.chunks_sent` counts the content and tool-call
  chunks written). `ignore_stream=True` answers with plain JSON, as a server without streaming.

A client that closes the connection while its reply is delayed is noticed: `server.disconnects`
counts them (llama.cpp's server notices a non-streamed request's hang-up only when it polls,
which other traffic can postpone indefinitely; docs/adapters.md, "A budget cut stops the server").
"""

from __future__ import annotations

import contextlib
import json
import re
import select
import socket
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
    stream_delay_s: float = 0.0
    """Streamed: the wait before each chunk after the first."""

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


def prompt_tokens_for(request: dict[str, Any], *, drop_tools_without_choice: bool = False) -> int:
    """The fake's tokenizer: message content characters / 4 (+4 a message), plus the tools'
    JSON / 4 unless `drop_tools_without_choice` and the request sets no `tool_choice`."""
    chars = 0
    count = 0
    for message in request.get("messages") or []:
        count += 1
        content = message.get("content")
        chars += len(content) if isinstance(content, str) else len(json.dumps(content or ""))
        for call in message.get("tool_calls") or []:
            chars += len(json.dumps(call))
    tokens = chars // 4 + 4 * count
    tools = request.get("tools")
    if tools and not (drop_tools_without_choice and "tool_choice" not in request):
        tokens += len(json.dumps(tools)) // 4
    return max(1, tokens)


Responder = Callable[[dict[str, Any]], Reply]


class _Server(ThreadingHTTPServer):
    # The default listen backlog (5) resets connections when dozens of clients connect at once.
    request_queue_size = 256
    daemon_threads = True

    def __init__(self, address: tuple[str, int], fake: FakeOpenAIServer) -> None:
        self.fake = fake
        super().__init__(address, _Handler)


class FakeOpenAIServer:
    """Serves `/v1/chat/completions` and `/v1/models` on an ephemeral loopback port."""

    def __init__(self, replies: Sequence[Reply] | Responder = (), *, count_prompt_tokens: bool = False,
                 drop_tools_without_choice: bool = False, serial: bool = False,
                 timings: bool = False, reject_response_format: Sequence[str] = (),
                 ignore_stream: bool = False) -> None:
        self._script = list(replies) if not callable(replies) else []
        self._responder = replies if callable(replies) else None
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.request_lines: list[tuple[str, str]] = []
        self.raw_bodies: list[bytes] = []
        self.count_prompt_tokens = count_prompt_tokens
        self.drop_tools_without_choice = drop_tools_without_choice
        self.serial = serial
        self.timings = timings
        self.reject_response_format = set(reject_response_format)
        self.ignore_stream = ignore_stream
        self.chunks_sent = 0
        """Streamed content and tool-call chunks written (all requests)."""
        self._serial_lock = threading.Lock()
        self.disconnects = 0
        """Requests whose client closed the connection before the reply was sent."""
        self.in_flight = 0
        self.max_in_flight = 0
        self.queued_s: list[float] = []
        """Per chat request, in arrival order of processing: seconds it waited inside the server
        (behind another request, with `serial=True`) before it was processed."""
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -----------------------------------------------------------------------
    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def _next(self, request: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.request_headers.append(headers)
            if self._responder is not None:
                return self._responder(request)
            if not self._script:
                return Reply.text("")
            return self._script.pop(0) if len(self._script) > 1 else self._script[0]

    def _adjust(self, reply: Reply, request: dict[str, Any], queued_s: float) -> Reply:
        """Apply the server options (counted prompt tokens, llama timings) to a 200 reply."""
        if reply.status != 200 or not isinstance(reply.body, dict) or "choices" not in reply.body:
            return reply
        body = json.loads(json.dumps(reply.body))
        usage = body.setdefault("usage", {})
        if self.count_prompt_tokens:
            usage["prompt_tokens"] = prompt_tokens_for(
                request, drop_tools_without_choice=self.drop_tools_without_choice)
            usage["total_tokens"] = usage["prompt_tokens"] + int(usage.get("completion_tokens") or 0)
        if self.timings:
            # The whole delay is processing; the time spent waiting for the lock is not.
            body["timings"] = {"prompt_n": usage.get("prompt_tokens"), "prompt_ms": 1000 * reply.delay_s / 2,
                               "predicted_n": usage.get("completion_tokens"),
                               "predicted_ms": 1000 * reply.delay_s / 2, "queued_ms": 1000 * queued_s}
        return Reply(status=reply.status, body=body, raw=reply.raw, delay_s=reply.delay_s,
                     headers=dict(reply.headers), stream_delay_s=reply.stream_delay_s)

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._httpd = _Server(("127.0.0.1", 0), self)
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


class _Handler(BaseHTTPRequestHandler):
    """One connection to a FakeOpenAIServer (`self.fake`)."""

    protocol_version = "HTTP/1.1"

    @property
    def fake(self) -> FakeOpenAIServer:
        assert isinstance(self.server, _Server)
        return self.server.fake

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def setup(self) -> None:
        super().setup()
        # Without it every reply waits ~40 ms (Nagle + delayed ACK) on loopback.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _client_gone(self, seconds: float) -> bool:
        """Wait `seconds`, returning early (True) when the client closes the connection."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if ready:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return True
                except OSError:
                    return True
                time.sleep(min(left, 0.05))  # pipelined bytes: not a disconnect
        return False

    def _send(self, reply: Reply) -> None:
        if reply.delay_s and self._client_gone(reply.delay_s):
            with self.fake._lock:
                self.fake.disconnects += 1
            return
        payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            if "content-type" not in reply.headers:
                self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test); nothing to deliver

    def _send_stream(self, reply: Reply, request: dict[str, Any]) -> None:
        """`reply` (a 200 chat completion) as server-sent events (see the module docstring)."""
        if reply.delay_s and self._client_gone(reply.delay_s):
            with self.fake._lock:
                self.fake.disconnects += 1
            return
        body = reply.body
        top = {k: body.get(k) for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
        choice = body["choices"][0]
        message = choice.get("message") or {}
        deltas: list[tuple[dict[str, Any], bool]] = [({"role": "assistant", "content": None}, False)]
        for word in re.findall(r"\s*\S+\s*", message.get("content") or ""):
            deltas.append(({"content": word}, True))
        for index, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            deltas.append(({"tool_calls": [{"index": index, "id": call.get("id"), "type": "function",
                                            "function": {"name": function.get("name"), "arguments": ""}}]}, True))
            arguments = function.get("arguments") or ""
            for start in range(0, len(arguments), 8):
                piece = {"index": index, "function": {"arguments": arguments[start:start + 8]}}
                deltas.append(({"tool_calls": [piece]}, True))
        events = [top | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta, _ in deltas]
        last = top | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason")}]}
        if "timings" in body:
            last["timings"] = body["timings"]
        events.append(last)
        if (request.get("stream_options") or {}).get("include_usage"):
            events.append(top | {"choices": [], "usage": body.get("usage")})
        counts = [produced for _, produced in deltas] + [False] * (len(events) - len(deltas))
        try:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for i, (event, produced) in enumerate(zip(events, counts, strict=True)):
                if i and reply.stream_delay_s and self._client_gone(reply.stream_delay_s):
                    with self.fake._lock:
                        self.fake.disconnects += 1
                    return
                self._chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
                if produced:
                    with self.fake._lock:
                        self.fake.chunks_sent += 1
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")
        except (BrokenPipeError, ConnectionResetError):
            with self.fake._lock:
                self.fake.disconnects += 1

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(Reply(body={"object": "list", "data": [{"id": "fake-model", "object": "model"}]}))
        else:
            self._send(Reply.error(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        raw = self.rfile.read(length)
        with self.fake._lock:
            self.fake.request_lines.append((self.command, self.path))
            self.fake.raw_bodies.append(raw)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(Reply.error(400, "request body is not JSON"))
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(Reply.error(404, f"no route {self.path}"))
            return
        headers = {key.lower(): value for key, value in self.headers.items()}
        kind = (body.get("response_format") or {}).get("type")
        if kind in self.fake.reject_response_format:
            with self.fake._lock:
                self.fake.requests.append(body)
                self.fake.request_headers.append(headers)
            self._send(Reply.error(400, f"response_format type {kind!r} is not supported"))
            return
        queued = time.monotonic()
        lock = self.fake._serial_lock if self.fake.serial else contextlib.nullcontext()
        with lock:
            with self.fake._lock:
                self.fake.in_flight += 1
                self.fake.max_in_flight = max(self.fake.max_in_flight, self.fake.in_flight)
            try:
                started = time.monotonic()
                with self.fake._lock:
                    self.fake.queued_s.append(started - queued)
                reply = self.fake._adjust(self.fake._next(body, headers), body, started - queued)
                if (body.get("stream") is True and not self.fake.ignore_stream and reply.status == 200
                        and reply.raw is None and isinstance(reply.body, dict) and "choices" in reply.body):
                    self._send_stream(reply, body)
                else:
                    self._send(reply)
            finally:
                with self.fake._lock:
                    self.fake.in_flight -= 1
