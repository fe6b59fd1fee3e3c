"""The context an adapter receives: traced, fault-wrapped tools, a seeded RNG, the budget.

It holds the task as the agent may see it (`_agent_view.agent_task`): no graders, goldens,
references or expected answers are reachable from it, except through `answer_key` for the
adapters that play answers back on purpose.

Adapters never touch a tool directly. Every call goes through `AttemptContext.call_tool`, which
checks the allowlist, validates arguments, injects faults, enforces the step budget, times the
call and records it as a `tools` span — so what the report says happened is what happened.
Sync tools run in worker threads (`toolthreads`), so their `timeout_s` holds and a blocking
tool never stalls the other attempts on the loop.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError as PydanticValidationError

from aeh.engine._agent_view import AnswerKey
from aeh.engine._health import STALL_S, HarnessHealth
from aeh.engine.budget import BudgetExceeded, BudgetTracker
from aeh.engine.connections import ConnectionLimits
from aeh.engine.toolthreads import WorkerTiming, start_in_worker
from aeh.models import Task, ToolCall
from aeh.pricing import PriceTable
from aeh.tools import ToolEnv, ToolInputError, ToolRegistry, ToolUnavailable
from aeh.tools.workspace import LazyWorkspace, workspace_path
from aeh.trace import SpanHandle, SpanRecorder, jsonable, model_input

__all__ = ["AttemptContext", "FaultSource", "GARBAGE_OUTPUT"]

#: What a tool "returns" under an injected garbage fault: truncated, unparseable output.
GARBAGE_OUTPUT = '{"status": "ok", "data": [{"id": 1, "val\x00\ufffd\ufffd<html><h1>502 Bad Ga'


class FaultSource(Protocol):
    """Decides, per tool call, whether to inject a fault (seeded, per attempt)."""

    def next_fault(self, tool_name: str) -> str | None: ...


def _is_async(fn: Any) -> bool:
    # An object with an `async def __call__` is an async tool too.
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


async def _invoke(fn: Any, args: Any, env: ToolEnv, timing: WorkerTiming | None = None) -> Any:
    """Call a tool: async ones on the loop, sync ones in a worker thread (see toolthreads).

    A tool that calls `sys.exit` raises SystemExit, which would end the whole run (or the
    process); it is the tool failing, so it becomes an ordinary exception here.
    """
    with _exit_is_failure():
        if _is_async(fn):
            return await fn(args, env)
        result = await start_in_worker(fn, args, env, timing=timing)
        if inspect.isawaitable(result):  # a sync wrapper around an async tool
            result = await result
        return result


def _call_inline(fn: Any, args: Any, env: ToolEnv) -> Any:
    """A non-blocking sync tool, called on the loop."""
    with _exit_is_failure():
        return fn(args, env)


@contextmanager
def _exit_is_failure() -> Iterator[None]:
    """A tool that calls `sys.exit` is the tool failing, not the run ending."""
    try:
        yield
    except SystemExit as exc:
        raise RuntimeError(f"the tool called sys.exit({exc.code!r})") from None


#: Most stall given back to one tool call: 20 × its timeout, within these bounds (seconds).
STALL_CAP_MIN_S = 5.0
STALL_CAP_MAX_S = 60.0


class _HarnessStall(Exception):
    """A tool timed out while the harness itself was stalled: a harness error, not the agent's."""


def _time_attributes(span: SpanHandle, given_back: float, timing: WorkerTiming | None) -> None:
    """A tool span's health figures: stall given back, worker-thread wait, CPU used by the call."""
    attrs: dict[str, Any] = {}
    if given_back:
        attrs["aeh.tool.stall_s"] = round(given_back, 4)
    if timing is not None:
        attrs["aeh.tool.worker_queue_s"] = round(timing.queue_s, 5)
        if time.monotonic() - timing.submitted > 0.01:  # a slow call: did it wait for a CPU? (a file read)
            attrs["aeh.tool.cpu_wait_s"] = round(timing.runqueue_wait_s(), 5)
        cpu = timing.cpu_so_far()
        if cpu is not None:
            attrs["aeh.tool.cpu_s"] = round(cpu, 5)
    if attrs:
        span.set(**attrs)


class AttemptContext:
    """Everything one attempt of one task may use."""

    def __init__(
        self,
        *,
        task: Task,
        attempt: int,
        seed: int,
        workspace: Path | LazyWorkspace,
        registry: ToolRegistry,
        recorder: SpanRecorder,
        budget: BudgetTracker,
        prices: PriceTable,
        resources: dict[str, Any] | None = None,
        faults: FaultSource | None = None,
        connections: ConnectionLimits | None = None,
        health: HarnessHealth | None = None,
        answer_key: AnswerKey | None = None,
        private_paths: tuple[Path, ...] | Callable[[], tuple[Path, ...]] = (),
    ) -> None:
        self.task = task
        self.attempt = attempt
        self.seed = seed
        self.rng = random.Random(seed)
        self._workspace = workspace
        self.registry = registry
        self.recorder = recorder
        self.budget = budget
        self.prices = prices
        self.resources = dict(resources or {})
        self.faults = faults
        self.connections = connections
        """The run's `ConnectionLimits` (per-endpoint request slots), or None for no limit."""
        self.health = health
        """The run's event-loop monitor (`aeh.engine._health`), or None when nothing watches."""
        self.answer_key = answer_key
        """Grading material, only for adapters that declare `uses_answer_key` (the mock, the
        reference solver); None for every other adapter, which sees only its task."""
        self._private_paths = private_paths
        self._tool_schemas: list[dict[str, Any]] | None = None
        self.tool_calls: list[ToolCall] = []
        self._env = ToolEnv(workspace=workspace, resources=self.resources, rng=random.Random(seed ^ 0x5EED))

    @property
    def private_paths(self) -> tuple[Path, ...]:
        """Paths an adapter's processes must not be able to read (the suite directory, the run's
        workspace root); the command adapter hides them from its solver. Looked up when asked:
        only adapters that start processes need them, and finding them lists a directory."""
        if callable(self._private_paths):
            self._private_paths = self._private_paths()
        return tuple(self._private_paths)

    @property
    def workspace(self) -> Path:
        """The attempt's workspace directory (made on first use)."""
        return workspace_path(self._workspace)

    # -- tools -----------------------------------------------------------------------------
    def tool_schemas(self) -> list[dict[str, Any]]:
        """Function-calling schemas for the task's allowlisted tools (this attempt's own copies:
        an adapter changing them changes no other attempt)."""
        if self._tool_schemas is None:
            self._tool_schemas = self.registry.schemas(self.task.tools)
        return list(self._tool_schemas)

    async def call_tool(self, name: str, args: Any) -> ToolCall:
        """Call a tool as the agent asked. Never raises for tool-side trouble: the ToolCall says.

        Raises BudgetExceeded when the step budget is spent (the engine ends the attempt).
        """
        self.budget.check_time()
        self.budget.take_step()
        with self.recorder.span(f"tool:{name}", "tools", **{"gen_ai.tool.name": name}) as span:
            call = await self._dispatch(name, args, span)
            call.span_id = span.span_id
            span.set(args=jsonable(call.args), result=jsonable(call.result), latency_s=call.latency_s)
            if call.error_kind:
                span.fail(call.error or call.error_kind, error_kind=call.error_kind,
                          injected_fault=call.injected_fault)
        self.tool_calls.append(call)
        return call

    async def _dispatch(self, name: str, args: Any, span: SpanHandle) -> ToolCall:
        if not isinstance(args, dict):
            return ToolCall(name=name, args={"_raw": jsonable(args)}, error_kind="invalid_args",
                            error=f"arguments must be a JSON object, got {type(args).__name__}")
        if name not in self.task.tools or name not in self.registry:
            offered = ", ".join(self.task.tools) or "none"
            return ToolCall(name=name, args=args, error_kind="unknown_tool",
                            error=f"tool {name!r} is not available; offered: {offered}")
        spec = self.registry.get(name)
        parsed: Any = args
        if spec.params is not None:
            try:
                parsed = spec.params.model_validate(args)
            except PydanticValidationError as exc:
                return ToolCall(name=name, args=args, error_kind="invalid_args",
                                error=f"invalid arguments: {exc.errors(include_url=False)}")
        fault = self.faults.next_fault(name) if self.faults else None
        if fault:
            timeout_s = getattr(self.faults, "timeout_s", None) or spec.timeout_s
            return await self._inject(name, args, fault, timeout_s)
        start = time.monotonic()
        try:
            if spec.blocking or _is_async(spec.fn):
                result = await self._within_timeout(spec.fn, parsed, spec.timeout_s, start, span)
            else:
                result = _call_inline(spec.fn, parsed, self._env)
                if inspect.isawaitable(result):  # a sync wrapper around an async tool
                    result = await asyncio.wait_for(result, spec.timeout_s)
        except _HarnessStall as exc:
            return ToolCall(name=name, args=args, error_kind="harness_stall", error=str(exc),
                            latency_s=time.monotonic() - start)
        except TimeoutError:
            return ToolCall(name=name, args=args, error_kind="timeout",
                            error=f"tool timed out after {spec.timeout_s}s",
                            latency_s=time.monotonic() - start)
        except ToolInputError as exc:
            return ToolCall(name=name, args=args, error_kind="invalid_args", error=str(exc),
                            latency_s=time.monotonic() - start)
        except ToolUnavailable as exc:
            return ToolCall(name=name, args=args, error_kind="unavailable", error=str(exc),
                            latency_s=time.monotonic() - start)
        except Exception as exc:  # a tool that raises is a tool-side failure, not a harness crash
            return ToolCall(name=name, args=args, error_kind="exception",
                            error=f"{type(exc).__name__}: {exc}", latency_s=time.monotonic() - start)
        return ToolCall(name=name, args=args, result=jsonable(result),
                        latency_s=time.monotonic() - start)

    async def _within_timeout(self, fn: Any, parsed: Any, timeout_s: float, start: float,
                              span: SpanHandle) -> Any:
        """The tool's result within `timeout_s` of the time it had — not of the wall clock.

        Time the harness lost during the call (its event loop stalled, or the call waited for a
        worker thread or a CPU) is given back: the deadline moves by the stall measured, as often
        as new stall is measured, up to 20 × the timeout (within STALL_CAP_MIN_S..STALL_CAP_MAX_S).
        A timeout with no new stall is the tool's (TimeoutError); one still stalled past the cap is
        the harness's (_HarnessStall). See docs/reliability.md, "Machine load".
        """
        timing = None if _is_async(fn) else WorkerTiming()
        call = asyncio.ensure_future(_invoke(fn, parsed, self._env, timing))
        deadline, given_back = start + timeout_s, 0.0
        cap = min(max(20 * timeout_s, STALL_CAP_MIN_S), STALL_CAP_MAX_S)
        try:
            while True:
                done, _ = await asyncio.wait({call}, timeout=max(0.0, deadline - time.monotonic()))
                if done:
                    return call.result()
                owed = self._stall_since(start, timing) - given_back
                if owed < STALL_S:
                    raise TimeoutError
                if given_back + owed > cap:
                    if self.health is not None:
                        self.health.stall_timeouts += 1
                    raise _HarnessStall(
                        f"tool timed out after {timeout_s}s while the harness stalled "
                        f"{given_back + owed:.2f} s (machine load or a blocked event loop): not the agent's")
                given_back += owed
                deadline += owed
        finally:
            if not call.done():
                call.cancel()  # abandons a sync tool's thread (see toolthreads)
            elif given_back and not call.cancelled() and call.exception() is None and self.health is not None:
                self.health.extended_timeouts += 1
            self.budget.add_stall(given_back)  # not the agent's time either
            if timing is not None and self.health is not None:
                self.health.note_worker_queue(timing.queue_s)
            _time_attributes(span, given_back, timing)

    def _stall_since(self, start: float, timing: WorkerTiming | None) -> float:
        """Harness time lost since `start`: the loop's stalls, or — if longer — the call's wait for a
        worker thread plus its thread's wait for a CPU (the machine's load)."""
        loop = self.health.stalled_during(start) if self.health is not None else 0.0
        thread = timing.queue_s + timing.runqueue_wait_s() if timing is not None else 0.0
        return max(loop, thread)

    async def _inject(self, name: str, args: dict[str, Any], fault: str, timeout_s: float) -> ToolCall:
        self.recorder.event(f"fault:{fault}", "faults", status="error", tool=name, error_kind=fault)
        start = time.monotonic()
        if fault == "timeout":
            # The call really hangs until the tool's timeout, as a dead dependency would.
            await asyncio.sleep(timeout_s)
            return ToolCall(name=name, args=args, error_kind="timeout", injected_fault="timeout",
                            error=f"tool timed out after {timeout_s}s", latency_s=time.monotonic() - start)
        if fault == "500":
            return ToolCall(name=name, args=args, error_kind="500", injected_fault="500",
                            error="500 Internal Server Error", latency_s=time.monotonic() - start)
        return ToolCall(name=name, args=args, result=GARBAGE_OUTPUT, error_kind="garbage",
                        injected_fault="garbage", error="tool returned malformed output",
                        latency_s=time.monotonic() - start)

    # -- model calls -------------------------------------------------------------------------
    @contextmanager
    def model_call(self, model: str | None, *, messages: Sequence[Any] | None = None,
                   tools: Sequence[Any] | None = None, **attributes: Any) -> Iterator[SpanHandle]:
        """Open a `model` span for one model request; report usage with `record_usage`.

        `messages` (chat messages) and `tools` (function schemas) are what the request sends: the
        span keeps them as `gen_ai.input.messages` / `gen_ai.tool.definitions` (the store keeps a
        growing conversation once, see `aeh.trace.compact_inputs`); set the reply as
        `gen_ai.output.messages`.
        """
        self.budget.check_time()
        sent = model_input(messages, tools)
        with (self.budget.awaiting_model(),
              self.recorder.span("model:call", "model", **{"gen_ai.request.model": model}, **sent,
                                 **attributes) as span):
            yield span

    def record_usage(self, span: SpanHandle, model: str | None, tokens_in: int, tokens_out: int, *,
                     recorded_cost_usd: float | None = None) -> float | None:
        """Price a model call, put tokens and cost on its span, and enforce token/cost caps.

        `recorded_cost_usd`: the cost a replayed recording holds for the call; it is kept as
        recorded (`cost_source="recorded"`) instead of being priced again from the table.
        """
        recorded = recorded_cost_usd is not None
        cost = recorded_cost_usd if recorded else self.prices.price(model, tokens_in, tokens_out)
        span.set(**{
            "gen_ai.usage.input_tokens": tokens_in,
            "gen_ai.usage.output_tokens": tokens_out,
            "gen_ai.response.model": model,
            "cost_usd": cost,
            "priced": cost is not None,
            **({"cost_source": "recorded"} if recorded else {}),
        })
        self.budget.add_usage(model, tokens_in, tokens_out, cost)
        return cost

    def record_cut_off_usage(self, span: SpanHandle, model: str | None, tokens_in: int,
                             tokens_out: int = 0) -> float | None:
        """Price a model call cut off in flight: `tokens_in` estimated from the request (the server
        reported nothing), `tokens_out` the output that had arrived (a streamed reply; else 0);
        marked `usage_estimated`. Caps are not enforced here: the attempt is already ending."""
        cost = self.prices.price(model, tokens_in, tokens_out)
        span.set(**{"gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out,
                    "cost_usd": cost, "priced": cost is not None, "usage_estimated": True})
        with suppress(BudgetExceeded):
            self.budget.add_usage(model, tokens_in, tokens_out, cost)
        return cost
