"""A lean chat-completions client: the openai SDK's request and errors, without the SDK.

`HttpChatClient.post_chat(body)` sends what `AsyncOpenAI.post("/chat/completions", body=…)`
sends and returns the fields aeh reads (`aeh.adapters._reply`):

- the same request: `POST {base_url}/chat/completions`, the body serialised as the SDK does
  (compact JSON, non-ASCII kept, NaN refused), `Authorization: Bearer <key>`,
  `Content-Type: application/json`, `Accept: application/json`, `OpenAI-Organization` /
  `OpenAI-Project` from OPENAI_ORG_ID / OPENAI_PROJECT_ID, and `Accept-Encoding: gzip, deflate`.
  Not sent: the SDK's `X-Stainless-*` telemetry (language, OS, runtime, retry count, read
  timeout), which no server needs. `User-Agent` says `aeh/<version>`, not the SDK's name;
- the same failures, as the SDK's own exception classes (so `aeh.llm.chat_completion` retries
  and classifies them exactly as before): a timeout is `openai.APITimeoutError`, a transport
  failure `openai.APIConnectionError` (chained to httpx's error and the OS error beneath), a
  non-2xx status the SDK's status class (`RateLimitError`, `InternalServerError`,
  `BadRequestError` …) with the SDK's message, parsed body and an `httpx.Response` carrying
  `Retry-After`; a JSON reply that does not parse raises `ValueError`, and a reply that is not
  JSON at all is returned as text, as the SDK does. The SDK is imported only to raise one.

A body with `"stream": true` is read as server-sent events while the server generates
(`aeh.adapters._stream.StreamReply`, appended to `streams` when given, so a caller cut off
mid-reply knows what had arrived) and returned as the reply a plain request gets; an error event raises the SDK's
status error for its code, a stream cut short `openai.APIConnectionError`. A server that ignores
`stream` and answers with JSON is read as before.

Two transports: `aeh.adapters._http11.Http11Pool` (the default: O(1) keep-alive pool on
asyncio streams) or an `httpx.AsyncClient` (used when a proxy is configured in the environment,
or when asked for) — the SDK's own stack, with its per-request cost.
"""

from __future__ import annotations

import json
import os
import ssl
import urllib.request
from datetime import datetime
from typing import Any, Literal

import httpx

from aeh._version import __version__
from aeh.adapters._http11 import Http11Pool, RawResponse
from aeh.adapters._reply import parse_reply
from aeh.adapters._stream import StreamError, StreamReply, StreamTruncated

__all__ = ["HttpChatClient", "sdk_status_error", "uses_proxy"]

PATH = "chat/completions"


def _default(value: Any) -> Any:
    """What the SDK's JSON encoder does with the two non-JSON types it knows."""
    if isinstance(value, datetime):
        return value.isoformat()
    from pydantic import BaseModel  # noqa: PLC0415 — only reached for a non-JSON value

    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True, mode="json", by_alias=True)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(body: Any) -> bytes:
    """The request body exactly as openai's `openapi_dumps` writes it."""
    return json.dumps(body, default=_default, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode()


def uses_proxy(url: httpx.URL) -> bool:
    """True when the environment routes `url` through a proxy (HTTP(S)_PROXY / ALL_PROXY, NO_PROXY)."""
    proxies = urllib.request.getproxies()
    if not (proxies.get(url.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(url.host)


def _headers(api_key: str, netloc: str) -> list[tuple[str, str]]:
    headers = [("Host", netloc), ("Accept", "application/json"), ("Accept-Encoding", "gzip, deflate"),
               ("Connection", "keep-alive"), ("Content-Type", "application/json"),
               ("User-Agent", f"aeh/{__version__}"), ("Authorization", f"Bearer {api_key}")]
    for name, variable in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
        if value := os.environ.get(variable):
            headers.append((name, value))
    return headers


class HttpChatClient:
    """Chat completions to one OpenAI-compatible endpoint (see the module docstring)."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float, *,
                 ssl_context: ssl.SSLContext | None = None,
                 transport: Literal["aeh", "httpx"] | None = None) -> None:
        url = httpx.URL(base_url)
        # As the SDK: a trailing slash on the base, the path appended to it.
        self.base_url = str(url.copy_with(raw_path=url.raw_path.rstrip(b"/") + b"/"))
        self.url = httpx.URL(self.base_url + PATH)
        self.timeout = httpx.Timeout(timeout_s)
        self.transport = transport or ("httpx" if uses_proxy(url) else "aeh")
        headers = _headers(api_key, self.url.netloc.decode("ascii"))
        self._head = (f"POST {self.url.raw_path.decode('ascii')} HTTP/1.1\r\n"
                      + "".join(f"{k}: {v}\r\n" for k, v in headers)).encode("latin-1")
        self._headers = [(k, v) for k, v in headers if k not in ("Host", "Connection")]
        self._pool: Http11Pool | None = None
        self._httpx: httpx.AsyncClient | None = None
        if self.transport == "aeh":
            self._pool = Http11Pool(self.url, self.timeout, ssl_context)
        else:
            self._httpx = httpx.AsyncClient(timeout=self.timeout, follow_redirects=True,
                                            verify=ssl_context if ssl_context is not None else True,
                                            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100))
        self._closed = False

    async def post_chat(self, body: dict[str, Any], *, streams: list[Any] | None = None) -> Any:
        """POST one chat-completions request; the parsed reply (see the module docstring).

        `streams`: a streamed reply's state (`StreamReply`) is appended to it as reading starts.
        """
        content = dumps(body)
        stream = StreamReply() if body.get("stream") else None
        if stream is not None and streams is not None:
            streams.append(stream)
        try:
            raw = await self._send(content, stream)
            if stream is not None and 200 <= raw.status < 300 and (raw.streamed or _is_event_stream(raw)):
                if not raw.streamed:  # content-encoded: read whole, then decoded
                    stream.feed(raw.body)
                return parse_reply(stream.reply())
        except StreamError as exc:
            raise sdk_status_error(self._response(RawResponse(exc.status, {"content-type": "application/json"},
                                                              json.dumps(exc.body).encode()), content)) from exc
        except StreamTruncated as exc:
            import openai  # heavy: only to raise the SDK's error

            raise openai.APIConnectionError(message=f"Connection error: {exc}",
                                            request=self._request(content)) from exc  # type: ignore[arg-type]
        except httpx.TimeoutException as exc:
            import openai  # heavy: only to raise the SDK's error

            raise openai.APITimeoutError(request=self._request(content)) from exc  # type: ignore[arg-type]
        except httpx.TransportError as exc:
            import openai  # heavy: only to raise the SDK's error

            raise openai.APIConnectionError(request=self._request(content)) from exc  # type: ignore[arg-type]
        if not 200 <= raw.status < 300:
            raise sdk_status_error(self._response(raw, content))
        return _parse(raw)

    async def _send(self, content: bytes, stream: StreamReply | None) -> RawResponse:
        head = self._head + b"Content-Length: %d\r\n\r\n" % len(content)
        if self._pool is not None:
            if stream is None:
                return await self._pool.request(head, content)
            return await self._pool.request(head, content, sink=stream.feed)
        assert self._httpx is not None
        if stream is None:
            response = await self._httpx.post(self.url, content=content, headers=self._headers)
            return RawResponse(response.status_code, dict(response.headers.items()), response.content)
        async with self._httpx.stream("POST", self.url, content=content, headers=self._headers) as response:
            if 200 <= response.status_code < 300 \
                    and response.headers.get("content-type", "").lower().startswith("text/event-stream"):
                async for piece in response.aiter_bytes():
                    stream.feed(piece)
                return RawResponse(response.status_code, dict(response.headers.items()), b"", streamed=True)
            await response.aread()
            return RawResponse(response.status_code, dict(response.headers.items()), response.content)

    def _request(self, content: bytes) -> httpx.Request:
        return httpx.Request("POST", self.url, headers=self._headers, content=content)

    def _response(self, raw: RawResponse, content: bytes) -> httpx.Response:
        headers = [(k, v) for k, v in raw.headers.items() if k not in ("content-encoding", "transfer-encoding")]
        return httpx.Response(raw.status, headers=headers, content=raw.body, request=self._request(content))

    @property
    def connections_opened(self) -> int:
        """Connections the built-in pool has opened (0 through httpx)."""
        return self._pool.opened if self._pool is not None else 0

    def is_closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        """Close every connection."""
        self._closed = True
        if self._pool is not None:
            await self._pool.aclose()
        if self._httpx is not None:
            await self._httpx.aclose()


def _is_event_stream(raw: RawResponse) -> bool:
    return raw.headers.get("content-type", "").lower().startswith("text/event-stream")


def _parse(raw: RawResponse) -> Any:
    """The SDK's reading of a 2xx body: JSON by content type; other text is tried as JSON, else kept."""
    content_type = raw.headers.get("content-type", "*").split(";")[0]
    if content_type.endswith("json"):
        return parse_reply(json.loads(raw.body))  # a ValueError: unparseable, retried
    try:
        return parse_reply(json.loads(raw.body))
    except ValueError:
        return raw.body.decode("utf-8", errors="replace")


def sdk_status_error(response: httpx.Response) -> Exception:
    """The exception openai's client raises for a non-2xx `response` (same class, message, body)."""
    import openai  # heavy: only to raise the SDK's error

    message = f"Error code: {response.status_code}"
    body: Any = response.text.strip()
    try:
        body = json.loads(body)
    except ValueError:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        text = error.get("message") if isinstance(error, dict) else None
        if isinstance(text, str) and text:
            message += f" - {text}"
    data = body.get("error", body) if isinstance(body, dict) else body
    classes: dict[int, type[openai.APIStatusError]] = {
        400: openai.BadRequestError, 401: openai.AuthenticationError, 403: openai.PermissionDeniedError,
        404: openai.NotFoundError, 409: openai.ConflictError, 422: openai.UnprocessableEntityError,
        429: openai.RateLimitError}
    cls = classes.get(response.status_code) or (
        openai.InternalServerError if response.status_code >= 500 else openai.APIStatusError)
    return cls(message, response=response, body=data)  # type: ignore[arg-type]
