"""A seeded, stochastic, scripted agent for running aeh with no model, key or network.

It attempts a task by following the task's `plan` (or its golden trace) through the real tool
registry, and — with a profile's probabilities — makes the mistakes real agents make: a bad
tool argument, a tool that is not offered, giving up, a wrong answer, declining, looping until
the budget ends it, not recovering from a tool error. Every random draw comes from `ctx.rng`,
which the engine seeds from (run seed, task, attempt): the same triple gives the same
trajectory whatever the concurrency.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
import weakref
from dataclasses import dataclass, field, replace
from typing import Any

from aeh.adapters._tool_result import tool_result_content
from aeh.engine.context import AttemptContext
from aeh.errors import ConfigError
from aeh.models import TOOL_SIDE_ERROR_KINDS, AgentOutcome, PlanStep, Task, ToolCall
from aeh.trace import SpanHandle

__all__ = ["MockAdapter", "MockProfile", "PROFILES"]


@dataclass(frozen=True)
class MockProfile:
    """Per-attempt mistake probabilities, scaled per task by a fixed task difficulty."""

    name: str
    p_decline: float  # declines a task it should do
    p_give_up: float  # stops with no answer
    p_hallucinate: float  # calls a tool that is not offered, then guesses
    p_bad_args: float  # sends arguments that do not fit the tool's schema
    p_fix_bad_args: float  # … and then fixes them and goes on
    p_loop: float  # repeats one call until the step budget ends the attempt
    p_wrong: float  # answers, but wrongly
    p_recover: float  # retries / works around a failing tool
    p_comply_bad_request: float  # does what a should-decline task asks instead of declining
    latency_s: tuple[float, float] = (0.002, 0.01)
    p_stutter: float = 0.0  # once per attempt, repeats one call 2–3 extra times, then goes on


PROFILES: dict[str, MockProfile] = {
    "strong": MockProfile("strong", p_decline=0.005, p_give_up=0.01, p_hallucinate=0.01,
                          p_bad_args=0.03, p_fix_bad_args=0.85, p_loop=0.005, p_wrong=0.03,
                          p_recover=0.9, p_comply_bad_request=0.03),
    "degraded": MockProfile("degraded", p_decline=0.04, p_give_up=0.06, p_hallucinate=0.08,
                            p_bad_args=0.12, p_fix_bad_args=0.4, p_loop=0.06, p_wrong=0.15,
                            p_recover=0.35, p_comply_bad_request=0.3),
    # As accurate as `strong`, but it re-sends the same call before moving on: the success rate
    # barely moves while the trajectory gets longer and loops.
    "loopy": MockProfile("loopy", p_decline=0.005, p_give_up=0.01, p_hallucinate=0.01,
                         p_bad_args=0.03, p_fix_bad_args=0.85, p_loop=0.005, p_wrong=0.03,
                         p_recover=0.9, p_comply_bad_request=0.03, p_stutter=0.9),
}

DECLINE_MESSAGE = "I can't help with that request: it would break the rules I operate under."


@functools.cache
def _difficulty(task_id: str) -> float:
    """A stable per-task multiplier in [0.4, 2.0], so tasks differ as real ones do."""
    h = int(hashlib.sha256(task_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return 0.4 + 1.6 * h


def _wrong_answer(reference: str | None, rng: Any) -> str:
    if reference is None:
        return "The answer is unclear from the data."
    numbers = re.findall(r"-?\d+(?:\.\d+)?", reference)
    if numbers:
        off = numbers[-1]
        bumped = (
            str(int(float(off)) + rng.choice([-2, -1, 1, 3])) if "." not in off else str(round(float(off) * 1.1, 2))
        )
        head, _, tail = reference.rpartition(off)
        return f"{head}{bumped}{tail}"
    return f"I believe the answer is not {reference!r}; it is something else."


def _break_args(args: dict[str, Any]) -> dict[str, Any]:
    """The arguments a sloppy agent sends: required keys renamed, values of the wrong type."""
    if not args:
        return {"input": None, "unexpected": True}
    broken = {f"{k}_value": v for k, v in args.items()}
    return broken


@dataclass
class _Talk:
    """The conversation a mock attempt simulates, so its model spans show what a real agent's would:
    the task's prompt, then each tool call it made (as the assistant's) and the tool's result."""

    last: SpanHandle | None = None
    replied: int = 0
    """Tool calls already given as a turn's reply."""
    history: list[dict[str, Any]] = field(default_factory=list)
    """The conversation so far, built once per message: a turn sends it whole again."""

    def messages(self, ctx: AttemptContext) -> list[dict[str, Any]]:
        if not self.history:
            self.history.append({"role": "user", "content": ctx.task.prompt})
        for i in range((len(self.history) - 1) // 2, len(ctx.tool_calls)):
            call = ctx.tool_calls[i]
            self.history.append(_call_message(i, call))
            self.history.append({"role": "tool", "tool_call_id": f"call_{i}", "content": tool_result_content(call)})
        return list(self.history)

    def reply(self, ctx: AttemptContext, final: str | None = None) -> None:
        """Put the last turn's reply on its span: the tool calls that followed it, or the answer."""
        if self.last is None:
            return
        calls = [_call_message(i, c) for i, c in enumerate(ctx.tool_calls) if i >= self.replied]
        reply: dict[str, Any] = {"role": "assistant", "content": final or ""}
        if calls:
            reply["tool_calls"] = [c for m in calls for c in m["tool_calls"]]
        self.last.set(**{"gen_ai.output.messages": [reply]})
        self.replied, self.last = len(ctx.tool_calls), None


def _call_message(index: int, call: ToolCall) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{
        "id": f"call_{index}", "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.args, default=str)}}]}


@dataclass
class _Play:
    """One attempt in progress: the task, its context, the task's difficulty and the context size so far."""

    task: Task
    ctx: AttemptContext
    scale: float
    context: int

    def chance(self, prob: float) -> bool:
        """One seeded draw: True with `prob` scaled by the task's difficulty (at most 0.95)."""
        return self.ctx.rng.random() < min(0.95, prob * self.scale)


class MockAdapter:
    """`--adapter mock`; choose a profile with `--model mock-strong`, `mock-degraded` or `mock-loopy`."""

    name = "mock"
    uses_answer_key = True
    """It plays the task's plan or golden trace back: the engine hands it the answer key."""

    def __init__(self, model: str | None = None, profile: str | None = None, **options: Any) -> None:
        chosen = profile or (model.removeprefix("mock-") if model else "strong")
        if chosen not in PROFILES:
            raise ConfigError(f"unknown mock profile {chosen!r} — use --model mock-strong, mock-degraded or mock-loopy")
        base = PROFILES[chosen]
        overrides: dict[str, Any] = {k: float(v) for k, v in options.items() if k.startswith("p_")}
        if "latency_s" in options:  # one simulated model turn, e.g. 0 to time the harness alone
            latency = float(options["latency_s"])
            if not 0 <= latency <= 60:
                raise ConfigError(f"mock adapter option latency_s={latency}: use seconds from 0 to 60")
            overrides["latency_s"] = (latency, latency)
        unknown = sorted(set(options) - set(overrides))
        if unknown:
            raise ConfigError(f"unknown mock adapter option(s): {', '.join(unknown)} — use p_* probabilities "
                              "or latency_s")
        self.profile = replace(base, **overrides) if overrides else base
        self.model = f"mock-{chosen}"
        self._talks: weakref.WeakKeyDictionary[AttemptContext, _Talk] = weakref.WeakKeyDictionary()

    # -- one simulated model turn ------------------------------------------------------------
    async def _think(self, ctx: AttemptContext, context_chars: int, out_tokens: int) -> None:
        talk = self._talks.setdefault(ctx, _Talk())
        talk.reply(ctx)  # the calls made since the last turn were that turn's reply
        with ctx.model_call(self.model, messages=talk.messages(ctx), tools=ctx.tool_schemas(),
                            turn=ctx.budget.model_calls) as span:
            talk.last = span
            lo, hi = self.profile.latency_s
            delay = ctx.rng.uniform(lo, hi)
            if delay > 0:  # latency_s=0 times the harness alone: not even a turn of the event loop
                await asyncio.sleep(delay)
            ctx.record_usage(span, self.model, 120 + context_chars // 4, out_tokens)

    def _steps(self, task: Task, ctx: AttemptContext) -> list[PlanStep]:
        if task.plan:
            return list(task.plan)
        golden = ctx.answer_key.golden if ctx.answer_key is not None else None
        if golden is not None:
            return [PlanStep(tool=s.tool, args=s.args) for s in golden.steps]
        return []

    async def run(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        try:
            outcome = await self._run(task, ctx)
        finally:
            talk = self._talks.pop(ctx, None)
        if talk is not None:
            talk.reply(ctx, outcome.final_output)
        return outcome

    async def _run(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        play = _Play(task, ctx, _difficulty(task.id), len(task.prompt) + 200 * len(task.tools))
        await self._think(ctx, play.context, ctx.rng.randint(20, 60))
        declined = self._first_reply(play)
        if declined is not None:
            return declined
        steps = self._steps(task, ctx)
        stutter_at = None  # drawn only for stuttering profiles: the others keep their seeded trajectories
        if self.profile.p_stutter > 0 and steps and ctx.rng.random() < self.profile.p_stutter:
            stutter_at = ctx.rng.randrange(len(steps))
        for index, step in enumerate(steps):
            if index == stutter_at:
                await self._stutter(play, step)
            outcome = await self._play_step(play, step, index, len(steps))
            if outcome is not None:
                return outcome
        return await self._final_answer(play)

    def _first_reply(self, play: _Play) -> AgentOutcome | None:
        """Declining before any tool call: rightly (unless it complies) or wrongly."""
        p, task = self.profile, play.task
        if task.expect_decline and not play.chance(p.p_comply_bad_request):
            return AgentOutcome(final_output=DECLINE_MESSAGE, status="declined")
        if not task.expect_decline and play.chance(p.p_decline):
            return AgentOutcome(final_output=DECLINE_MESSAGE, status="declined")
        return None

    async def _stutter(self, play: _Play, step: PlanStep) -> None:
        for _ in range(play.ctx.rng.randint(2, 3)):  # re-sends the call it is about to make
            await play.ctx.call_tool(step.tool, step.args)
            await self._think(play.ctx, play.context, play.ctx.rng.randint(10, 30))

    async def _play_step(self, play: _Play, step: PlanStep, index: int, n_steps: int) -> AgentOutcome | None:
        """One plan step, with the mistakes a step can go wrong by; an outcome ends the attempt."""
        p, task, ctx, rng = self.profile, play.task, play.ctx, play.ctx.rng
        per_step = max(1, n_steps)
        if index and play.chance(p.p_give_up / per_step):
            return AgentOutcome(final_output="", status="gave_up")
        if play.chance(p.p_hallucinate / per_step):
            await ctx.call_tool("search_web", {"query": task.prompt[:60]})
            await self._think(ctx, play.context, rng.randint(20, 80))
            return AgentOutcome(final_output=_wrong_answer(task.reference_answer, rng))
        if play.chance(p.p_bad_args / per_step):
            bad = await ctx.call_tool(step.tool, _break_args(step.args))
            play.context += len(str(bad.error))
            await self._think(ctx, play.context, rng.randint(20, 60))
            if bad.error_kind and rng.random() >= p.p_fix_bad_args:
                return AgentOutcome(final_output=_wrong_answer(task.reference_answer, rng))
            # otherwise it read the error, fixed its arguments and goes on
        if play.chance(p.p_loop / per_step):
            while True:  # repeats the same call until the step budget ends the attempt
                await ctx.call_tool(step.tool, step.args)
                await self._think(ctx, play.context, rng.randint(10, 30))
        call = await ctx.call_tool(step.tool, step.args)
        play.context += len(json.dumps(call.result, default=str)) if call.result is not None else 0
        await self._think(ctx, play.context, rng.randint(20, 80))
        return await self._after_tool_error(task, ctx, step, call, p.p_recover**play.scale)

    async def _final_answer(self, play: _Play) -> AgentOutcome:
        """The answer after the last step: complying, giving up, wrong, or right."""
        p, task, rng = self.profile, play.task, play.ctx.rng
        await self._think(play.ctx, play.context, rng.randint(30, 120))
        if task.expect_decline:
            # It complied with a request it should have declined.
            return AgentOutcome(final_output=task.reference_answer or "Done as requested.")
        if play.chance(p.p_give_up):
            return AgentOutcome(final_output="", status="answered")
        if play.chance(p.p_wrong):
            return AgentOutcome(final_output=_wrong_answer(task.reference_answer, rng))
        return AgentOutcome(final_output=task.reference_answer or "")

    async def _after_tool_error(
        self, task: Task, ctx: AttemptContext, step: PlanStep, call: Any, p_recover: float
    ) -> AgentOutcome | None:
        """Retry (or, for an unavailable tool, work around it) — or fail like a real agent."""
        retries = 0
        while call.error_kind in TOOL_SIDE_ERROR_KINDS:
            if ctx.rng.random() < p_recover and retries < 3:
                if call.error_kind == "unavailable":
                    return None  # works around it: the plan's next steps are the fallback
                retries += 1
                call = await ctx.call_tool(step.tool, step.args)
                await self._think(ctx, 200, ctx.rng.randint(20, 60))
                continue
            if ctx.rng.random() < 0.5:
                return AgentOutcome(final_output="", status="gave_up")
            return AgentOutcome(final_output=_wrong_answer(task.reference_answer, ctx.rng))
        return None
