"""One way to talk to an OpenAI-compatible chat API, shared by live adapters and the judge.

The openai SDK's own retries are switched off so every retry is ours: bounded, backed off,
and recorded as a `model` span. Provider trouble that outlasts the retries raises
ProviderError, which the engine records as a harness error — never as the agent's failure.
"""

from __future__ import annotations

import asyncio
import os
import socket
from typing import Any

from aeh.errors import AdapterError

__all__ = ["ProviderError", "chat_completion", "describe_failure", "make_client"]

DEFAULT_TIMEOUT_S = 60.0


class ProviderError(Exception):
    """The model provider failed (transport, 429, 5xx, unparseable reply) after all retries."""


def make_client(base_url: str | None = None, api_key: str | None = None,
                timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
    """An `AsyncOpenAI` from arguments or OPENAI_BASE_URL / OPENAI_API_KEY."""
    # heavy: loaded on first use
    from openai import AsyncOpenAI

    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    api_key = api_key or os.environ.get("OPENAI_API_KEY")
    if not api_key:
        if not base_url:
            raise AdapterError(
                "no OPENAI_API_KEY set — export it, or point OPENAI_BASE_URL at an "
                "OpenAI-compatible server (a local one may need no key)"
            )
        api_key = "not-needed"  # local OpenAI-compatible servers usually ignore the key
    return AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)


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


async def chat_completion(client: Any, *, recorder: Any = None, retries: int = 3,
                          backoff_s: float = 0.5, max_backoff_s: float = 8.0, **request: Any) -> Any:
    """`client.chat.completions.create(**request)` with bounded retries on provider trouble.

    Retries transport errors, timeouts, 429, 5xx and unparseable responses; other 4xx are
    configuration errors and raise at once.
    """
    # heavy: loaded on first use
    import openai

    base_url = getattr(client, "base_url", None)
    endpoint = str(base_url).rstrip("/") if base_url is not None else None
    last: Exception | None = None
    cause = ""
    for attempt in range(retries + 1):
        try:
            return await client.chat.completions.create(**request)
        except openai.APIStatusError as exc:
            if exc.status_code != 429 and exc.status_code < 500:
                raise ProviderError(f"provider refused the request ({exc.status_code}): {exc.message}") from exc
            last = exc
        except (openai.APIConnectionError, openai.APIResponseValidationError, ValueError) as exc:
            last = exc  # APITimeoutError is an APIConnectionError; ValueError: unparseable body
        kind = type(last).__name__
        status = getattr(last, "status_code", None)
        cause = describe_failure(last, endpoint)
        if recorder is not None:
            recorder.event("model:retry", "model", status="error", attempt=attempt, error=cause[:500],
                           error_type=kind, http_status=status, will_retry=attempt < retries)
        if attempt < retries:
            wait = _retry_after(last) or min(max_backoff_s, backoff_s * 2**attempt)
            await asyncio.sleep(wait)
    raise ProviderError(f"model provider failed after {retries + 1} tries: {cause}") from last
