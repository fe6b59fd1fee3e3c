"""`replay`: re-execute a stored run from its recorded trajectories, calling no model.

For every (task_id, attempt) the adapter reads the ORIGINAL attempt from the store and plays it
back through the engine:

- each recorded model turn becomes a `model` span with `replayed_from` = the original span id,
  carrying the original response (`gen_ai.output.messages`) and token usage (priced again, so
  cost per task and token/cost caps behave as they did);
- each recorded tool call (name + arguments) is re-executed through `ctx.call_tool`, so tools,
  the allowlist, argument validation, seeded faults and the step budget run for real (a call
  whose arguments were not a JSON object is re-sent as the same raw value → invalid_args);
- the attempt ends as the original agent ended it: the same final output and status
  (`budget_exhausted` is re-raised with the original reason; a harness error stays one).

Model turns and tool calls are interleaved in their original order (from the span tree). The
graders, invariants and analysis are those of the suite loaded NOW, so changing a grader and
replaying shows exactly which verdicts the change flips on identical trajectories. Works for
any original adapter — mock, react, single_shot or an imported run — as long as its attempts
are in the store.

Caveat: stored traces are redacted on write; a replayed argument or answer holds the redacted
text (e.g. `[REDACTED:email]`) where the original held a secret or personal data. Graders
would judge the marker, not what the agent wrote, so for an attempt whose recorded answer was
redacted the engine keeps the stored verdict (`stored_verdict`) instead of grading it again.
"""

from __future__ import annotations

from typing import Any

from aeh._util.lazy import moved_getattr
from aeh.engine.budget import BudgetExceeded
from aeh.engine.context import AttemptContext
from aeh.errors import ConfigError
from aeh.models import AgentOutcome, Attempt, Span, Task, ToolCall
from aeh.store import MARKER, Store, StoreLike, open_store

__all__ = ["ReplayAdapter"]

_AGENT_STATUSES = ("answered", "declined", "gave_up", "budget_exhausted", "harness_error")


def _open(db: StoreLike) -> Store:
    return db if isinstance(db, Store) else open_store(db, must_exist=True)  # replays read a stored run


class ReplayAdapter:
    """Plays back the attempts of `source_run_id` from the store `db` (path or Store)."""

    name = "replay"

    def __init__(self, model: str | None = None, source_run_id: str | None = None,
                 db: StoreLike = None, **options: Any) -> None:
        if options:
            raise ConfigError(f"unknown replay adapter option(s): {', '.join(sorted(options))}")
        if not source_run_id:
            raise ConfigError(
                "the replay adapter needs the run to replay — use `aeh replay --run-id ID`, or "
                "adapter_options={'source_run_id': ID} from Python"
            )
        self._store = _open(db)
        self._owns_store = self._store is not db
        self.source_run_id = self._store.resolve_run_id(source_run_id)
        self.source = self._store.run_info(self.source_run_id)
        self.model = model or self.source.model

    async def aclose(self) -> None:
        # The engine closes adapters at run end; a store we opened ourselves is ours to close.
        if self._owns_store:
            self._store.close()
            self._owns_store = False

    # -- reading the original ------------------------------------------------------------------
    def _original(self, task_id: str, attempt: int) -> tuple[Attempt, list[Span]]:
        record = self._store.attempt_record(self.source_run_id, task_id, attempt)
        spans = self._store.attempt_spans(self.source_run_id, task_id, attempt)
        return record, spans

    @staticmethod
    def _agent_spans(spans: list[Span]) -> tuple[Span | None, list[Span]]:
        """The original `agent` span and everything under it (not grading's judge calls)."""
        agent = next((s for s in spans if s.name == "agent" and s.category == "scheduler"), None)
        if agent is None:
            return None, [s for s in spans if s.category != "grading"]
        children: dict[str | None, list[Span]] = {}
        for s in spans:
            children.setdefault(s.parent_span_id, []).append(s)
        out, stack = [], [agent.span_id]
        while stack:
            for child in children.get(stack.pop(), []):
                out.append(child)
                stack.append(child.span_id)
        return agent, out

    @classmethod
    def plan(cls, record: Attempt, spans: list[Span]) -> tuple[Span | None, list[tuple[str, Any]]]:
        """The original's steps in order: ("model", Span) and ("tool", ToolCall)."""
        agent, under = cls._agent_spans(spans)
        order = {s.span_id: i for i, s in enumerate(spans)}
        under.sort(key=lambda s: (s.start_ts, order[s.span_id]))
        by_span = {c.span_id: c for c in record.tool_calls if c.span_id}
        steps: list[tuple[str, Any]] = []
        used: set[int] = set()
        for s in under:
            if s.category == "model" and s.name == "model:call":
                steps.append(("model", s))
            elif s.category == "tools" and s.span_id in by_span:
                call = by_span[s.span_id]
                steps.append(("tool", call))
                used.add(id(call))
        # Tool calls without a matching span (an imported run stores no span tree): in order, last.
        steps.extend(("tool", c) for c in record.tool_calls if id(c) not in used)
        return agent, steps

    def stored_verdict(self, task_id: str, attempt: int) -> Attempt | None:
        """The original attempt when its recorded answer was redacted (its verdict stands), else None.

        Not for an original harness error: that verdict is no verdict, so the graders run again."""
        record = self._store.attempt_record(self.source_run_id, task_id, attempt)
        redacted = MARKER in (record.final_output or "")
        return record if redacted and record.status != "harness_error" else None

    # -- playing it back ---------------------------------------------------------------------
    async def _model_turn(self, ctx: AttemptContext, original: Span) -> None:
        attrs = original.attributes
        requested = attrs.get("gen_ai.request.model") or self.model
        extra = {k: attrs[k] for k in ("turn", "gen_ai.output.messages", "gen_ai.response.finish_reasons",
                                       "gen_ai.request.messages") if k in attrs}
        with ctx.model_call(requested, messages=attrs.get("gen_ai.input.messages"),
                            tools=attrs.get("gen_ai.tool.definitions"), replayed_from=original.span_id,
                            **extra) as span:
            tokens_in = attrs.get("gen_ai.usage.input_tokens")
            tokens_out = attrs.get("gen_ai.usage.output_tokens")
            if tokens_in is None and tokens_out is None:
                return
            responded = attrs.get("gen_ai.response.model") or requested
            priced_as = requested if ctx.prices.lookup(requested) is not None else responded
            try:
                ctx.record_usage(span, priced_as, int(tokens_in or 0), int(tokens_out or 0))
            finally:
                span.set(**{"gen_ai.response.model": responded})

    @staticmethod
    async def _tool_call(ctx: AttemptContext, original: ToolCall) -> None:
        args: Any = original.args
        if original.error_kind == "invalid_args" and set(args) == {"_raw"}:
            args = args["_raw"]  # the model sent something that was not a JSON object: send it again
        await ctx.call_tool(original.name, args)

    async def run(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        record, spans = self._original(task.id, ctx.attempt)
        agent, steps = self.plan(record, spans)
        ctx.recorder.event("replay", "scheduler", source_run_id=self.source_run_id,
                           source_root_span_id=record.root_span_id, steps=len(steps))
        for kind, item in steps:
            if kind == "model":
                await self._model_turn(ctx, item)
            else:
                await self._tool_call(ctx, item)
        # How the AGENT ended (the agent span), not the attempt's final status, which a crashed
        # grader may have turned into harness_error: the graders are re-run now.
        status = record.status
        final_output = record.final_output
        error = record.error
        if agent is not None:
            status = agent.attributes.get("status", status)
            final_output = agent.attributes.get("final_output", final_output)
            error = agent.attributes.get("error", error) if agent.status == "error" else None
        if status not in _AGENT_STATUSES:
            status = record.status
        if status == "budget_exhausted":
            reason = f"replayed: {error or 'budget exhausted in the original attempt'}"
            ctx.budget.exhausted = reason
            raise BudgetExceeded(reason)
        if status == "harness_error":
            return AgentOutcome(final_output=final_output, status="harness_error",
                                error=f"replayed harness error: {error or 'unknown'}")
        return AgentOutcome(final_output=final_output, status=status)


# Whole-run replay moved to aeh.experiments, verdict_differences to aeh.analysis: kept here, with a
# DeprecationWarning, for one more release.
__getattr__ = moved_getattr(__name__, {"replay_run": "aeh.experiments", "replay_run_async": "aeh.experiments",
                                       "verdict_differences": "aeh.analysis"})
