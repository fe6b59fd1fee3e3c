"""Run a plain Python function as the agent: `aeh.run("core", agent=my_fn)`.

`my_fn(task, tools)` receives the `Task` and a `Tools` namespace whose members are plain
callables — `tools.calculator(expression="2+2")`, `tools["calculator"]({...})` — each routed
through `AttemptContext.call_tool`, so every call is recorded, budgeted and fault-injected as
under any adapter. A successful call returns the tool's result; a failed one raises
`ToolCallError` (the agent may catch it and carry on, as it would with its own tools).

`my_fn` may be sync or async. A sync one runs in a worker thread and its tool calls hop back to
the event loop (`asyncio.run_coroutine_threadsafe`); an async one is awaited on the loop and its
tools are awaitables. It returns the answer: a string, an `AgentOutcome`, or None (no answer).

Cost: the harness sees the model calls a function reports (`@aeh.record_step(kind="model")`,
`Recorder.model_call`, the LangGraph handler). An attempt that reported none is *unpriced*
(cost None, `<model usage not reported>`), never $0, unless the agent is declared
`model_free=True` (a rule-based agent that calls no model).
An exception out of `my_fn` ends the attempt as `gave_up` with the error kept, not as a harness
error: the agent broke, not aeh.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from aeh._util.pyfile import NotAPythonFile, import_file
from aeh.engine.budget import BudgetExceeded
from aeh.engine.context import AttemptContext
from aeh.engine.toolthreads import run_in_worker
from aeh.errors import ConfigError
from aeh.models import AgentOutcome, Task, ToolCall
from aeh.recording import activate

__all__ = ["CallableAdapter", "ToolCallError", "Tools", "load_agent"]


class ToolCallError(Exception):
    """A tool call failed (bad arguments, tool error, injected fault); `.call` holds the details."""

    def __init__(self, call: ToolCall) -> None:
        super().__init__(f"{call.name}: {call.error_kind}: {call.error or ''}".rstrip(": "))
        self.call = call


def _arguments(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if args and kwargs:
        raise TypeError(f"tool {name!r} takes either one dict of arguments or keyword arguments, not both")
    if len(args) > 1:
        raise TypeError(f"tool {name!r} takes one dict of arguments, got {len(args)} positional")
    return args[0] if args else dict(kwargs)


class Tools(Mapping[str, Callable[..., Any]]):
    """The task's allowlisted tools as plain callables (attribute or item access)."""

    def __init__(self, ctx: AttemptContext, loop: asyncio.AbstractEventLoop | None, *, is_async: bool) -> None:
        self._ctx = ctx
        self._loop = loop
        self._async = is_async
        self._names = [n for n in ctx.task.tools if n in ctx.registry]
        self.budget_hit: BudgetExceeded | None = None

    def schemas(self) -> list[dict[str, Any]]:
        """Function-calling schemas of these tools, to hand to a model."""
        return self._ctx.tool_schemas()

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call a tool by name (also one outside the allowlist: the engine records the refusal)."""
        payload = _arguments(name, args, kwargs)
        if self._async:
            return self._call_async(name, payload)
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(self._ctx.call_tool(name, payload), self._loop)
        try:
            call = future.result()
        except BudgetExceeded as exc:
            self.budget_hit = exc
            raise
        return _result(call)

    async def _call_async(self, name: str, payload: Any) -> Any:
        try:
            call = await self._ctx.call_tool(name, payload)
        except BudgetExceeded as exc:
            self.budget_hit = exc
            raise
        return _result(call)

    def __getitem__(self, name: str) -> Callable[..., Any]:
        if name not in self._names:
            raise KeyError(name)
        return lambda *args, **kwargs: self.call(name, *args, **kwargs)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no tool {name!r}; offered: {', '.join(self._names) or 'none'}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"Tools({', '.join(self._names)})"


def _result(call: ToolCall) -> Any:
    if call.error_kind is not None:
        raise ToolCallError(call)
    return call.result


def _outcome(value: Any) -> AgentOutcome:
    if isinstance(value, AgentOutcome):
        return value
    if value is None:
        return AgentOutcome(final_output=None, status="answered")
    return AgentOutcome(final_output=value if isinstance(value, str) else str(value), status="answered")


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


class CallableAdapter:
    """Drives `fn(task, tools)`; see the module docstring."""

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, model: str | None = None,
                 model_free: bool = False) -> None:
        if not callable(fn):
            raise TypeError(f"agent must be callable as fn(task, tools), got {type(fn).__name__}")
        self.fn = fn
        self.name = name or f"callable:{getattr(fn, '__qualname__', type(fn).__name__)}"
        self.model = model
        self.model_free = model_free

    async def run(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        try:
            return await self._run(task, ctx)
        finally:
            if ctx.budget.model_calls == 0 and not self.model_free:
                # A function's model calls are invisible unless it reports them; $0 would be a lie.
                ctx.budget.usage_not_reported()

    async def _run(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        is_async = _is_async(self.fn)
        tools = Tools(ctx, None if is_async else asyncio.get_running_loop(), is_async=is_async)
        try:
            # the agent's own @record_step steps join the attempt's trace, their tokens its budget
            with activate(ctx.recorder, on_usage=ctx.record_usage):
                if is_async:
                    value = await self.fn(task, tools)
                else:
                    value = await run_in_worker(self.fn, task, tools)
                    if inspect.isawaitable(value):
                        value = await value
        except BudgetExceeded:
            raise
        except Exception as exc:
            if tools.budget_hit is not None:
                raise tools.budget_hit from exc
            ctx.recorder.event("agent:raised", "scheduler", error=f"{type(exc).__name__}: {exc}")
            return AgentOutcome(status="gave_up", error=f"agent raised {type(exc).__name__}: {exc}")
        if tools.budget_hit is not None:  # the agent swallowed the budget stop: it still ends the attempt
            raise tools.budget_hit
        return _outcome(value)


def load_agent(spec: str) -> Callable[..., Any]:
    """The function named by `module:function` or `path/to/file.py:function` (`aeh run --agent`)."""
    target, sep, attr = spec.rpartition(":")
    fix = "write it as module:function (importable from here) or path/to/agent.py:function"
    if not sep or not target or not attr:
        raise ConfigError(f"--agent {spec!r}: no function named — {fix}")
    if target.endswith(".py") or "/" in target or "\\" in target:
        path = Path(target)
        if not path.is_file():
            raise ConfigError(f"--agent {spec!r}: file {target} not found — {fix}")
        sys.path.insert(0, str(path.resolve().parent))  # its own sibling imports work, as under `python file.py`
        try:
            module = import_file(path, "aeh_agent")
        except NotAPythonFile:
            raise ConfigError(f"--agent {spec!r}: {target} is not a Python file — {fix}") from None
        finally:
            sys.path.remove(str(path.resolve().parent))
    else:
        if "" not in sys.path and str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))  # as `python -m` would: the working directory's modules
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            raise ConfigError(f"--agent {spec!r}: module {exc.name!r} not found — {fix}") from None
    fn: object = getattr(module, attr, None)
    if fn is None:
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        raise ConfigError(f"--agent {spec!r}: {target} has no {attr!r}; its functions: {', '.join(names) or 'none'}")
    if not callable(fn):
        raise ConfigError(f"--agent {spec!r}: {attr} is a {type(fn).__name__}, not a function fn(task, tools)")
    return fn
