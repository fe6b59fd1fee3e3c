"""One way to talk to an OpenAI-compatible chat API, shared by live adapters and the judge.

The openai SDK's own retries are switched off so every retry is ours: bounded, backed off,
and recorded as a `model` span. Provider trouble that outlasts the retries raises
ProviderError, which the engine records as a harness error — never as the agent's failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, overload

from aeh.errors import AdapterError
from aeh.trace import RecordsSpans

if TYPE_CHECKING:
    # heavy: the SDK is imported on first use; only its types are named here
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion

__all__ = ["DEFAULT_BASE_URL", "PostsChat", "ProviderError", "RequestSlots", "chat_completion", "describe_failure",
           "endpoint_of", "make_client", "resolve_endpoint", "server_processing_s", "ssl_context"]

DEFAULT_TIMEOUT_S = 60.0
#: Where requests go when neither an argument nor OPENAI_BASE_URL names an endpoint.
DEFAULT_BASE_URL = "https://api.openai.com/v1"


class RequestSlots(Protocol):
    """Connection slots to one endpoint (`aeh.engine.connections.EndpointLimiter`): `slot()` holds
    one for a request and yields the seconds spent waiting for it."""

    def slot(self) -> AbstractAsyncContextManager[float]: ...


class PostsChat(Protocol):
    """A client that sends a chat-completions body itself (`aeh.adapters`' lean HTTP client): it
    raises the openai SDK's exception classes, so retries and failures read as with `AsyncOpenAI`."""

    @property
    def base_url(self) -> str: ...

    async def post_chat(self, body: dict[str, Any], *, streams: list[Any] | None = None) -> Any: ...


class ProviderError(Exception):
    """The model provider failed (transport, 429, 5xx, unparseable reply) after all retries.

    `status_code` is the last HTTP status when there was one; `kind` is a short reason
    (`timeout`, `http_error`, `connection`, `unparseable`, `refused` for a 4xx).
    """

    def __init__(self, message: str, *, status_code: int | None = None, kind: str = "provider") -> None:
        super().__init__(message)
        self.status_code = status_code
        self.kind = kind


def _kind(exc: BaseException | None) -> str:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIStatusError):
        return "http_error"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    return "unparseable"


def resolve_endpoint(base_url: str | None, api_key: str | None) -> tuple[str | None, str]:
    """The base URL and key a client uses: the arguments, else OPENAI_BASE_URL / OPENAI_API_KEY.
    No key is fine for a given endpoint (local servers ignore it); no key and no endpoint is an error."""
    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    api_key = api_key or os.environ.get("OPENAI_API_KEY")
    if not api_key:
        if not base_url:
            raise AdapterError(
                "no OPENAI_API_KEY set — export it, or point OPENAI_BASE_URL at an "
                "OpenAI-compatible server (a local one may need no key)"
            )
        api_key = "not-needed"  # local OpenAI-compatible servers usually ignore the key
    return base_url, api_key


def make_client(base_url: str | None = None, api_key: str | None = None,
                timeout_s: float = DEFAULT_TIMEOUT_S, *, ssl_context: Any = None) -> AsyncOpenAI:
    """An `AsyncOpenAI` from arguments or OPENAI_BASE_URL / OPENAI_API_KEY.

    `ssl_context` (from `ssl_context()`) lets several clients share one: building a fresh one
    (loading the CA bundle) is ~30 ms of CPU per client.
    """
    # heavy: loaded on first use
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient

    base_url, api_key = resolve_endpoint(base_url, api_key)
    http_client = DefaultAsyncHttpxClient(verify=ssl_context) if ssl_context is not None else None
    return AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0,
                       http_client=http_client)


def ssl_context() -> Any:
    """The SSL context the openai client would build for itself (CA bundle, SSL_CERT_* env)."""
    # heavy: loaded on first use; httpx2 is the openai SDK's own HTTP stack
    import httpx2

    return httpx2.create_ssl_context()


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return out


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    if body:
        return str(body)
    response = getattr(exc, "response", None)
    text = (getattr(response, "text", "") or "").strip() if response is not None else ""
    return text or "(empty body)"


def describe_failure(exc: BaseException, endpoint: str | None) -> str:
    """One line saying why a request failed and where: "connection refused at http://…/v1"."""
    # heavy: loaded on first use
    import openai

    where = endpoint or "the model provider"
    if isinstance(exc, openai.APITimeoutError):
        return f"request timed out at {where}"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code} from {where}: {_server_message(exc)[:300]}"
    if isinstance(exc, openai.APIConnectionError):
        chain = _chain(exc)
        for cause in chain:
            if isinstance(cause, ConnectionRefusedError):
                return f"connection refused at {where}"
            if isinstance(cause, socket.gaierror):
                return f"cannot resolve the host of {where} ({cause.strerror})"
            if isinstance(cause, ConnectionResetError):
                return f"connection reset by {where}"
            if isinstance(cause, TimeoutError):
                return f"connection timed out to {where}"
        return f"cannot reach {where}: {chain[-1]}"
    return f"unparseable reply from {where}: {str(exc)[:300]}"


def endpoint_of(client: AsyncOpenAI | PostsChat) -> str | None:
    base_url = getattr(client, "base_url", None)
    return str(base_url).rstrip("/") if base_url is not None else None


@overload
async def chat_completion(client: AsyncOpenAI, *, recorder: RecordsSpans | None = None, retries: int = 3,
                          backoff_s: float = 0.5, max_backoff_s: float = 8.0,
                          slot: Callable[[], AbstractAsyncContextManager[float]] | None = None,
                          timing: dict[str, float] | None = None, failures: list[str] | None = None,
                          streams: list[Any] | None = None,
                          **request: Any) -> ChatCompletion: ...


@overload
async def chat_completion(client: PostsChat, *, recorder: RecordsSpans | None = None, retries: int = 3,
                          backoff_s: float = 0.5, max_backoff_s: float = 8.0,
                          slot: Callable[[], AbstractAsyncContextManager[float]] | None = None,
                          timing: dict[str, float] | None = None, failures: list[str] | None = None,
                          streams: list[Any] | None = None,
                          **request: Any) -> Any: ...


async def chat_completion(client: AsyncOpenAI | PostsChat, *, recorder: RecordsSpans | None = None, retries: int = 3,
                          backoff_s: float = 0.5, max_backoff_s: float = 8.0,
                          slot: Callable[[], AbstractAsyncContextManager[float]] | None = None,
                          timing: dict[str, float] | None = None, failures: list[str] | None = None,
                          streams: list[Any] | None = None,
                          **request: Any) -> Any:
    """`client.chat.completions.create(**request)` (see `_create`) with bounded retries on provider trouble.

    Retries transport errors, timeouts, 429, 5xx and unparseable responses; other 4xx are
    configuration errors and raise at once.

    `slot`: a callable returning an async context manager that holds a connection slot for one
    try and yields the seconds waited for it (`aeh.engine.connections`). `timing`, when given,
    receives `wait_s` (all slot waits) and `request_s` (the successful try's request time).
    `failures`, when given, receives each failed try's cause as it happens: a caller cut off
    between tries learns that the provider was failing, not slow.
    `streams`, when given and the request streams (`"stream": true`) through a `PostsChat`
    client, receives each try's reply as it is read (`aeh.adapters._stream.StreamReply`): a
    caller cut off mid-reply knows what had arrived.
    Cancelling the awaiting task (an attempt's time budget running out) closes the connection.
    """
    # heavy: loaded on first use
    import openai

    endpoint = endpoint_of(client)
    last: Exception | None = None
    cause = ""
    timing = timing if timing is not None else {}
    timing.setdefault("wait_s", 0.0)
    for attempt in range(retries + 1):
        try:
            async with (slot() if slot is not None else _no_slot()) as waited:
                timing["wait_s"] += waited
                started = time.monotonic()
                try:
                    return await _create(client, request, streams)
                finally:
                    timing["request_s"] = time.monotonic() - started
        except openai.APIStatusError as exc:
            if exc.status_code != 429 and exc.status_code < 500:
                raise ProviderError(f"provider refused the request ({exc.status_code}): {exc.message}",
                                    status_code=exc.status_code, kind="refused") from exc
            last = exc
        except (openai.APIConnectionError, openai.APIResponseValidationError, ValueError) as exc:
            last = exc  # APITimeoutError is an APIConnectionError; ValueError: unparseable body
        kind = type(last).__name__
        status = getattr(last, "status_code", None)
        cause = describe_failure(last, endpoint)
        if failures is not None:  # read by a caller whose time runs out between tries
            failures.append(cause)
        if recorder is not None:
            recorder.event("model:retry", "model", status="error", attempt=attempt, error=cause[:500],
                           error_type=kind, http_status=status, will_retry=attempt < retries)
        if attempt < retries:
            wait = _retry_after(last) or min(max_backoff_s, backoff_s * 2**attempt)
            await asyncio.sleep(wait)
    raise ProviderError(f"model provider failed after {retries + 1} tries: {cause}",
                        status_code=getattr(last, "status_code", None), kind=_kind(last)) from last


async def _create(client: AsyncOpenAI | PostsChat, request: dict[str, Any], streams: list[Any] | None = None) -> Any:
    """What `client.chat.completions.create(**request)` sends and returns, without its body transform.

    `create()` walks every message and tool schema through the SDK's TypedDict transform, which
    changes nothing in a plain-JSON request like aeh's but costs ~1 ms of CPU a call (more with
    tools and long conversations). The documented `client.post` sends the same body to the same
    path with the same auth and parses the reply into the same `ChatCompletion`. A `PostsChat`
    client sends the same request itself.
    """
    # heavy: loaded on first use
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion

    if not isinstance(client, AsyncOpenAI):
        return await client.post_chat(request, streams=streams) if streams is not None \
            else await client.post_chat(request)

    return await client.post("/chat/completions", body=request, cast_to=ChatCompletion,
                             options={"security": {"bearer_auth": True}})


@contextlib.asynccontextmanager
async def _no_slot() -> AsyncIterator[float]:
    yield 0.0


def server_processing_s(response: Any) -> float | None:
    """Seconds the server says it spent on a request (llama.cpp's `timings`: prompt_ms +
    predicted_ms), or None when it reports no timings. Time queued at the server is excluded."""
    timings = getattr(response, "timings", None)
    if timings is None:
        extra = getattr(response, "model_extra", None) or {}
        timings = extra.get("timings")
    if not isinstance(timings, dict):
        return None
    try:
        return (float(timings.get("prompt_ms") or 0) + float(timings.get("predicted_ms") or 0)) / 1000
    except (TypeError, ValueError):
        return None
