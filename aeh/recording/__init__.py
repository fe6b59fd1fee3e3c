"""Record any Python agent: `aeh.Recorder` and `@aeh.record_step`.

    @aeh.record_step(kind="tool")
    def search(query: str) -> list[str]: ...

    with aeh.Recorder(task_id="find_the_capital", path="trajectories.jsonl") as rec:
        rec.answer(my_agent("What is the capital of Kenya?"))

`record_step` turns each call of the decorated function into an aeh span with the engine's
categories and attribute names (`tools` spans named `tool:<name>` with `gen_ai.tool.name`,
`args`, `result`; `model` spans with `gen_ai.request.model` and `gen_ai.usage.*`; other steps
`scheduler` spans named `step:<name>`). When no recorder is active it calls the function and
nothing else (one context-variable read), so instrumented production code runs unchanged.

A recorder is active inside `with Recorder(...)` and inside every attempt of
`aeh.run(suite, agent=fn)`, where the steps land in the attempt's own trace. A `Recorder`
outside a run builds an `aeh.trajectory.Trajectory` on exit and appends it, one line, to
`path`; `aeh grade --suite S FILE` grades such a file into a stored run.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar, overload

from aeh.models import Span
from aeh.trace import SpanHandle, SpanRecorder, jsonable
from aeh.trajectory import Step, Trajectory

__all__ = ["Recorder", "active_recorder", "activate", "record_step", "report_usage", "spans_to_steps", "usage_hook"]

F = TypeVar("F", bound=Callable[..., Any])
Kind = Literal["tool", "model", "step"]

_active: contextvars.ContextVar[SpanRecorder | None] = contextvars.ContextVar("aeh_active_recorder", default=None)


UsageHook = Callable[[SpanHandle, "str | None", int, int], Any]
_usage_hook: contextvars.ContextVar[UsageHook | None] = contextvars.ContextVar("aeh_usage_hook", default=None)


def usage_hook() -> UsageHook | None:
    """Inside an attempt: prices a model call's tokens and counts them against the budget."""
    return _usage_hook.get()


def report_usage(handle: SpanHandle, model: str | None, tokens_in: int, tokens_out: int,
                 hook: UsageHook | None = None) -> None:
    """Put a model call's usage on its span; inside an attempt also price and count it."""
    hook = hook or _usage_hook.get()
    if hook is not None:
        hook(handle, model, tokens_in, tokens_out)
    else:
        handle.set(**{"gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out})


def active_recorder() -> SpanRecorder | None:
    """The span recorder steps go to now, or None (then `record_step` does nothing)."""
    return _active.get()


@contextmanager
def activate(recorder: SpanRecorder, on_usage: UsageHook | None = None) -> Iterator[SpanRecorder]:
    """Make `recorder` the one `record_step` writes to (and `on_usage` the pricer), for the block."""
    token = _active.set(recorder)
    hook_token = _usage_hook.set(on_usage)
    try:
        yield recorder
    finally:
        _usage_hook.reset(hook_token)
        _active.reset(token)


def usage_of(result: Any) -> tuple[int | None, int | None]:
    """(input, output) tokens from a model response, when it says (OpenAI, Anthropic, LangChain shapes)."""
    usage = getattr(result, "usage_metadata", None) or getattr(result, "usage", None)
    if usage is None and isinstance(result, dict):
        usage = result.get("usage_metadata") or result.get("usage")
    if usage is None:
        return None, None

    def pick(*names: str) -> int | None:
        for n in names:
            v = usage.get(n) if isinstance(usage, dict) else getattr(usage, n, None)
            if isinstance(v, int):
                return v
        return None

    return pick("input_tokens", "prompt_tokens"), pick("output_tokens", "completion_tokens")


def _open_args(kind: Kind, name: str, bound: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    if kind == "tool":
        return f"tool:{name}", "tools", {"gen_ai.tool.name": name, "args": jsonable(bound)}
    if kind == "model":
        model = bound.get("model") if isinstance(bound.get("model"), str) else None
        return "model:call", "model", {"gen_ai.request.model": model, "aeh.step": name}
    return f"step:{name}", "scheduler", {"aeh.step": name}


def _close(handle: SpanHandle, kind: Kind, result: Any) -> None:
    if kind == "model":
        tokens_in, tokens_out = usage_of(result)
        model = getattr(result, "model", None) or (result.get("model") if isinstance(result, dict) else None)
        if not isinstance(model, str):
            model = handle.span.attributes.get("gen_ai.request.model")
        if tokens_in is not None or tokens_out is not None:
            report_usage(handle, model, tokens_in or 0, tokens_out or 0)
        if isinstance(model, str):
            handle.set(**{"gen_ai.response.model": model})
    elif kind == "tool":
        handle.set(result=jsonable(result))


def _bind(sig: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    if sig is None:
        return {"args": list(args), **kwargs}
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return {"args": list(args), **kwargs}
    return {k: v for k, v in bound.arguments.items() if k not in ("self", "cls")}


@overload
def record_step(fn: F, *, kind: Kind = "step", name: str | None = None) -> F: ...
@overload
def record_step(fn: None = None, *, kind: Kind = "step", name: str | None = None) -> Callable[[F], F]: ...
def record_step(fn: Any = None, *, kind: Kind = "step", name: str | None = None) -> Any:
    """Record each call of the decorated function (sync or async) as a span of `kind`."""
    if kind not in ("tool", "model", "step"):
        raise ValueError(f"record_step kind must be 'tool', 'model' or 'step', got {kind!r}")

    def decorate(f: Callable[..., Any]) -> Any:
        step_name: str = name or str(getattr(f, "__name__", "step"))
        get = _active.get
        try:
            sig: inspect.Signature | None = inspect.signature(f)
        except (TypeError, ValueError):
            sig = None

        if inspect.iscoroutinefunction(f):
            @functools.wraps(f)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                recorder = get()
                if recorder is None:
                    return await f(*args, **kwargs)
                span_name, category, attrs = _open_args(kind, step_name, _bind(sig, args, kwargs))
                with recorder.span(span_name, category, **attrs) as handle:
                    result = await f(*args, **kwargs)
                    _close(handle, kind, result)
                    return result
            return async_wrapper

        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            recorder = get()
            if recorder is None:
                return f(*args, **kwargs)
            span_name, category, attrs = _open_args(kind, step_name, _bind(sig, args, kwargs))
            with recorder.span(span_name, category, **attrs) as handle:
                result = f(*args, **kwargs)
                _close(handle, kind, result)
                return result
        return wrapper

    return decorate(fn) if fn is not None else decorate


def spans_to_steps(spans: list[Span], root_id: str | None) -> list[Step]:
    """The span tree under `root_id` as trajectory steps (tool, model and other steps)."""
    children: dict[str | None, list[Span]] = {}
    for s in sorted(spans, key=lambda s: s.start_ts):
        children.setdefault(s.parent_span_id, []).append(s)

    def build(span: Span) -> Step:
        a = span.attributes
        error = a.get("error") if span.status == "error" else None
        kids = [build(c) for c in children.get(span.span_id, [])]
        common: dict[str, Any] = {"start_ts": span.start_ts, "end_ts": span.end_ts, "steps": kids,
                                  "error": str(error) if error is not None else None}
        if span.category == "tools":
            args = a.get("args")
            # how the call failed, and whether the harness injected it, survive the round trip
            failure = {k: a[k] for k in ("error_kind", "injected_fault") if a.get(k) is not None}
            return Step(kind="tool", name=str(a.get("gen_ai.tool.name") or span.name.removeprefix("tool:")),
                        args=args if isinstance(args, dict) else None, result=a.get("result"),
                        attributes=failure, **common)
        if span.category == "model":
            return Step(kind="model", name=str(a.get("aeh.step") or span.name),
                        model=a.get("gen_ai.response.model") or a.get("gen_ai.request.model"),
                        tokens_in=a.get("gen_ai.usage.input_tokens"), tokens_out=a.get("gen_ai.usage.output_tokens"),
                        cost_usd=a.get("aeh.cost_usd"), **common)
        extra = {k: jsonable(v) for k, v in a.items() if k not in ("aeh.step", "error")}
        return Step(kind="step", name=str(a.get("aeh.step") or span.name.removeprefix("step:")),
                    attributes=extra, **common)

    return [build(s) for s in children.get(root_id, [])]


class Recorder:
    """Record one attempt of an agent outside an aeh run; see the module docstring."""

    def __init__(self, task_id: str, *, path: str | Path | None = None, attempt: int | None = None,
                 agent: str | None = None, model: str | None = None,
                 metadata: dict[str, Any] | None = None) -> None:
        self.task_id = task_id
        self.path = Path(path) if path is not None else None
        self.attempt = attempt
        self.agent = agent
        self.model = model
        self.metadata = dict(metadata or {})
        self.final_output: str | None = None
        self.status: str = "answered"
        self.error: str | None = None
        self.trajectory: Trajectory | None = None
        self._spans = SpanRecorder("recorded", task_id, attempt or 0)
        self._token: contextvars.Token[SpanRecorder | None] | None = None
        self._started = 0.0

    # -- what the agent reports ----------------------------------------------------------------
    def answer(self, text: Any, status: str = "answered") -> None:
        """The agent's final answer (and how it ended: answered, declined, gave_up)."""
        self.final_output = None if text is None else str(text)
        self.status = status

    def tool(self, name: str, args: dict[str, Any] | None = None, result: Any = None,
             error: str | None = None) -> None:
        """Record a tool call made without a decorated function."""
        span = self._spans.event(f"tool:{name}", "tools", status="error" if error else "ok",
                                 **{"gen_ai.tool.name": name, "args": jsonable(args or {}),
                                    "result": jsonable(result)})
        if error:
            span.attributes["error"] = error

    def model_call(self, model: str | None, tokens_in: int | None = None, tokens_out: int | None = None,
                   name: str = "model:call", cost_usd: float | None = None) -> None:
        """Record a model call made without a decorated function; `cost_usd` is what the provider
        billed, kept as recorded when graded (otherwise the tokens are priced from the price table)."""
        attrs: dict[str, Any] = {"gen_ai.request.model": model, "aeh.step": name}
        if tokens_in is not None or tokens_out is not None:
            attrs.update({"gen_ai.usage.input_tokens": tokens_in or 0, "gen_ai.usage.output_tokens": tokens_out or 0})
        if cost_usd is not None:
            attrs["aeh.cost_usd"] = cost_usd
        self._spans.event("model:call", "model", **attrs)

    @contextmanager
    def step(self, name: str, **attributes: Any) -> Iterator[SpanHandle]:
        """A named step (a plan, a node) whose inner steps nest under it."""
        with self._spans.span(f"step:{name}", "scheduler", **{"aeh.step": name}, **attributes) as handle:
            yield handle

    # -- the context manager -------------------------------------------------------------------
    def __enter__(self) -> Recorder:
        self._token = _active.set(self._spans)
        self._started = time.time()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._token is not None:
            _active.reset(self._token)
            self._token = None
        if exc is not None and self.status == "answered" and self.final_output is None:
            self.status, self.error = "gave_up", f"{type(exc).__name__}: {exc}"
        self.trajectory = Trajectory(
            task_id=self.task_id, attempt=self.attempt, final_output=self.final_output,
            status=self.status,
            error=self.error, agent=self.agent, model=self.model, start_ts=self._started, end_ts=time.time(),
            steps=spans_to_steps(self._spans.spans, None), metadata=self.metadata,
        )
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(self.trajectory.model_dump_json(exclude_defaults=True) + "\n")

    async def __aenter__(self) -> Recorder:
        return self.__enter__()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.__exit__(exc_type, exc, tb)
