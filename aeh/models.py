"""The schemas every part of aeh speaks: tasks, budgets, spans, tool calls, attempts, runs.

All are pydantic v2 models. Input schemas (what a suite author writes in YAML) forbid unknown
keys, so a typo fails validation instead of silently changing a measurement.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

__all__ = [
    "AgentOutcome",
    "AgentStatus",
    "TRAJECTORY_FIELDS",
    "Attempt",
    "Budget",
    "FailureBucket",
    "GoldenStep",
    "GoldenTrace",
    "GraderResult",
    "GraderSpec",
    "Invariant",
    "InvariantResult",
    "InjectedFault",
    "InvariantVerdict",
    "PlanStep",
    "HarnessHealth",
    "LEGACY_CONFIG_KEYS",
    "LiveChecks",
    "Provenance",
    "RedactionRecord",
    "RunConfig",
    "RunInfo",
    "RunWarning",
    "SuiteRef",
    "nest_legacy_config",
    "Span",
    "SpanCategory",
    "Task",
    "ToolCall",
    "ToolErrorKind",
    "Trace",
    "TraceView",
]


class _Strict(BaseModel):
    # inf/nan in a budget would disable it silently (`timeout_s: 1e400` is inf in YAML).
    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)


SpanCategory = Literal["tools", "model", "grading", "faults", "scheduler", "cost"]
SPAN_CATEGORIES: tuple[str, ...] = ("tools", "model", "grading", "faults", "scheduler", "cost")

ToolErrorKind = Literal[
    "timeout",  # the call hung until the tool timeout (injected or real)
    "500",  # the tool answered with a server error
    "garbage",  # the tool answered with malformed output
    "exception",  # the tool raised
    "unavailable",  # the tool is deliberately unavailable (broken_tool)
    "invalid_args",  # the agent's arguments did not validate: the agent's mistake
    "unknown_tool",  # the agent called a tool not on the task's allowlist: the agent's mistake
    "harness_stall",  # the call timed out while the harness itself stalled (machine load): not the agent's
]
#: Error kinds caused by the tool side, as opposed to the agent's own malformed calls.
TOOL_SIDE_ERROR_KINDS: frozenset[str] = frozenset(
    {"timeout", "500", "garbage", "exception", "unavailable"}
)


class FailureBucket(str, Enum):
    """Root cause of a failed attempt. Declared in priority order: the first that applies wins."""

    tool_error = "tool_error"
    malformed_tool_call = "malformed_tool_call"
    hallucinated_tool = "hallucinated_tool"
    budget_exhausted = "budget_exhausted"
    #: The judge could not parse its own verdict about the agent's answer (the answer talked it out
    #: of JSON): not passed, flagged for review — the agent's content, not the harness, broke it.
    judge_unparseable = "judge_unparseable"
    wrong_answer = "wrong_answer"
    no_answer = "no_answer"
    refusal = "refusal"
    harness_error = "harness_error"


FAILURE_PRIORITY: tuple[str, ...] = tuple(b.value for b in FailureBucket)


class Budget(_Strict):
    """Limits that end an attempt as `budget_exhausted` when crossed."""

    max_steps: int = Field(20, ge=1)
    """Most tool calls an attempt may make."""
    timeout_s: float = Field(60.0, gt=0, le=86_400)
    """Wall-clock limit for one attempt, in seconds (at most a day)."""
    max_tokens: int | None = Field(None, ge=1)
    """Most input+output tokens an attempt may use; None means no cap."""
    max_cost_usd: float | None = Field(None, gt=0)
    """Most an attempt may cost in USD; None means no cap."""


class GraderSpec(BaseModel):
    """One outcome grader as written in a task: `kind` plus that kind's own options.

    The options are validated by the grader registry against the kind's config model.
    """

    model_config = ConfigDict(extra="allow")

    kind: str
    """Registered grader kind, e.g. exact, contains, numeric, tool_sequence."""

    _parsed: Any = PrivateAttr(default=None)
    """(config model, options, parsed config) from the last validation: a run grades the same
    spec once per attempt, and its options do not change between attempts."""

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class PlanStep(_Strict):
    """One step of a known-good way to do a task: a tool call with its arguments."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    note: str | None = None


class GoldenStep(_Strict):
    """A step of a golden trace: a tool call, optionally with its recorded result."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None


class GoldenTrace(_Strict):
    """A known-good trajectory for a task, used by the mock adapter and tier-2 localization."""

    steps: list[GoldenStep] = Field(default_factory=list)
    final_output: str | None = None


#: The specification's name for a golden trace: its suite contract reads `golden_traces() -> dict[str, Trace]`.
Trace = GoldenTrace


AgentStatus = Literal["answered", "declined", "gave_up", "budget_exhausted", "harness_error"]


class Task(_Strict):
    """One multi-step task of a suite, loaded from one YAML file."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    prompt: str = Field(min_length=1)
    description: str | None = None
    category: str | None = None
    """Free-form grouping, e.g. file_manipulation, retrieval, refusal."""
    tags: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    """The tool allowlist: the only tools the agent is offered."""
    budget: Budget = Field(default_factory=Budget)
    outcome_graders: list[GraderSpec] = Field(min_length=1, alias="graders")
    """All must pass for success. YAML may say `graders:`."""
    invariants: list[str] = Field(default_factory=list)
    """Names of tier-1 invariants checked on every trace of this task."""
    golden: str | None = None
    """Name of this task's golden trace, resolved through the suite."""
    fixtures: list[str] = Field(default_factory=list)
    """Files or folders (relative to the suite directory) copied into each attempt workspace."""
    plan: list[PlanStep] = Field(default_factory=list)
    """Known-good steps the mock adapter follows when there is no golden trace."""
    reference_answer: str | None = None
    """The answer a correct agent gives; the mock adapter answers with it."""
    expect_decline: bool = False
    """True for tasks whose correct behaviour is to decline or ask for clarification."""
    expected_tools: list[str] | None = None
    """The tools a good trajectory uses (`tool_selection`); None: the golden trace's, else the plan's."""
    forbidden_tools: list[str] = Field(default_factory=list)
    """Tools a good trajectory never calls; using one halves `tool_selection`."""
    optimal_steps: int | None = Field(default=None, ge=1)
    """Tool calls a good trajectory needs (`step_efficiency`); None: the golden trace's or plan's length."""
    acceptable_terminal_states: list[AgentStatus] | None = None
    """How the attempt may end and count as a good ending (`task_completion`); None: `declined` for
    `expect_decline` tasks, else `answered`."""
    weight: float | None = Field(default=None, gt=0)
    """The task's share of a weighted overall trajectory score; None counts as 1."""
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _accept_both_grader_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and "graders" in data and "outcome_graders" in data:
            raise ValueError("give either `graders` or `outcome_graders`, not both")
        return data

    @model_validator(mode="before")
    @classmethod
    def _lift_trajectory_metadata(cls, data: Any) -> Any:
        """Older suites put the trajectory facts under `metadata:`; they are task fields now."""
        if not isinstance(data, dict) or not isinstance(data.get("metadata"), dict):
            return data
        meta = dict(data["metadata"])
        lifted = {k: meta.pop(k) for k in TRAJECTORY_FIELDS if k in meta}
        clash = sorted(k for k in lifted if k in data)
        if clash:
            raise ValueError(f"{', '.join(clash)} given both as a field and under metadata: keep the field")
        return {**data, **lifted, "metadata": meta} if lifted else data

    @model_validator(mode="after")
    def _forbidden_is_not_expected(self) -> Task:
        both = sorted(set(self.forbidden_tools) & set(self.expected_tools or []))
        if both:
            raise ValueError(f"tool(s) {', '.join(both)} are both expected and forbidden")
        return self


TRAJECTORY_FIELDS: tuple[str, ...] = ("expected_tools", "forbidden_tools", "optimal_steps",
                                      "acceptable_terminal_states", "weight")
"""Task fields only the trajectory dimensions read (added after the first suite format)."""


InjectedFault = Literal["timeout", "500", "garbage"]
"""The failures the engine can inject into a tool call (`aeh.tools.faults`)."""


class ToolCall(BaseModel):
    """One call the agent made to a tool, as the engine observed it."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = None
    error_kind: ToolErrorKind | None = None
    injected_fault: InjectedFault | None = None
    """Set when the engine injected this failure, so reports keep it apart from agent mistakes."""
    span_id: str | None = None
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error_kind is None


class Span(BaseModel):
    """One node of an attempt's trace tree."""

    run_id: str
    task_id: str
    attempt: int
    span_id: str
    parent_span_id: str | None = None
    category: SpanCategory
    name: str
    start_ts: float
    end_ts: float | None = None
    status: Literal["ok", "error"] = "ok"
    attributes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("attributes", mode="before")
    @classmethod
    def _none_is_empty(cls, v: Any) -> Any:
        return {} if v is None else v




class AgentOutcome(BaseModel):
    """What an adapter hands back: the final output and how the attempt ended.

    Tool calls, tokens and cost are observed by the engine through the context, not reported here.
    """

    final_output: str | None = None
    status: AgentStatus = "answered"
    error: str | None = None
    """For harness_error: what broke, for the report."""


class GraderResult(BaseModel):
    """The verdict of one grader on one attempt, with the evidence it looked at."""

    tier: int = 0
    kind: str
    name: str
    passed: bool | None
    """None when the grader could not decide (e.g. the judge errored)."""
    evidence: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


class InvariantResult(BaseModel):
    name: str
    passed: bool
    detail: str | None = None


class Attempt(BaseModel):
    """One attempt of one task: the unit every statistic counts."""

    run_id: str
    task_id: str
    attempt: int
    seed: int
    success: bool
    status: AgentStatus
    failure_bucket: FailureBucket | None = None
    final_output: str | None = None
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0
    """None when a model used was missing from the price table (unpriced, not free)."""
    latency_s: float = 0.0
    """The agent's time (model + tools): wall-clock of the agent phase minus time queued for the
    model server; grading is not included. Runs before aeh 0.x stored the whole wall-clock."""
    agent_s: float | None = None
    queue_s: float | None = None
    """Time queued for the model server (client-side slot waits + server-reported queueing)."""
    grading_s: float | None = None
    """Time spent grading (graders, judge calls, localization) after the agent finished."""
    steps: int = 0
    tool_calls: list[ToolCall] = Field(default_factory=list)
    grader_results: list[GraderResult] = Field(default_factory=list)
    invariant_results: list[InvariantResult] = Field(default_factory=list)
    needs_human_review: bool = False
    root_span_id: str | None = None
    dimension_scores: list[dict[str, Any]] = Field(default_factory=list, exclude=True)
    """Trajectory dimension scores made as the attempt ended ({dimension, score, evidence});
    stored in their own table with the attempt, not as part of its record."""

    @property
    def is_harness_error(self) -> bool:
        return self.failure_bucket == FailureBucket.harness_error

    @property
    def clean_success(self) -> bool:
        return self.success and all(r.passed for r in self.invariant_results)


class RunWarning(str):
    """A warning's text with its `kind`: a stable name to match or filter on (`w.kind ==
    "unfinished"`), so no reader depends on the wording, which may change. It is a `str`, so
    everything that shows warnings shows it unchanged."""

    kind: str

    def __new__(cls, text: str, kind: str) -> RunWarning:
        self = super().__new__(cls, text)
        self.kind = kind
        return self

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]  # copy and pickle keep the kind
        return str(self), self.kind


#: Where each key of the flat run config aeh stored before migration 7 went: a typed part of
#: `RunConfig` (a dotted path), or `None` for a key dropped as a copy (the adapter options and
#: the connection limit are the stored spec's). Keys not listed are the suite's, adapter's or
#: caller's own facts (`RunConfig.facts`).
LEGACY_CONFIG_KEYS: dict[str, str | None] = {
    "run_spec": "spec", "suite_spec": "suite.location", "tasks": "tasks", "harness_health": "health",
    "redaction": "redaction", "shard": "provenance.shard", "merged_from": "provenance.merged_from",
    "live_checks": "live_checks", "judge_all": "judge_all", "workspace_root": "workspace_root",
    "tools_probe": "tools_probe", "scoring": "scoring", "task_weights": "task_weights",
    "cost_currency": "cost_currency", "suite_kind": "suite_kind",
    "adapter_options": None, "max_connections": None,
}


def nest_legacy_config(flat: dict[str, Any]) -> dict[str, Any]:
    """The typed shape (`RunConfig`) of a run config stored flat (aeh before store migration 7)."""
    out: dict[str, Any] = {"facts": {}}
    for key, value in flat.items():
        if key not in LEGACY_CONFIG_KEYS:
            out["facts"][key] = value
            continue
        path = LEGACY_CONFIG_KEYS[key]
        if path is None or value is None:
            continue
        head, _, leaf = path.partition(".")
        if leaf:
            out.setdefault(head, {})[leaf] = value
        else:
            out[head] = value
    return out


class SuiteRef(BaseModel):
    """Which suite a run ran: where to load it again (gate, score, replay, resume find it from any
    folder) and the hash of the definition it ran."""

    location: str | None = None
    hash: str | None = None


class RedactionRecord(BaseModel):
    """How a run's stored text was redacted: on or off, and salted fingerprints of its
    configured secrets, never the secrets themselves."""

    enabled: bool = True
    salt: str | None = None
    secret_fingerprints: list[str] = Field(default_factory=list)
    #: digest of the redaction rules every write of the run went through (`aeh.store.rules_digest`),
    #: set by the store that created the run; None when a write may have used other rules
    rules: str | None = None


class HarnessHealth(BaseModel):
    """The harness's own event-loop stalls during a run: machine load is not the agent's time."""

    stalled: bool = False
    max_loop_lag_s: float | None = None
    stall_s: float = 0.0
    stalls: int = 0
    stall_threshold_s: float | None = None
    run_s: float | None = None
    extended_tool_timeouts: int = 0
    stall_tool_timeouts: int = 0
    worker_queue_max_s: float | None = None
    load_average_start: float | None = None
    load_average_max: float | None = None
    worker_loops: int = 0
    """Worker loops (`--workers` processes, Ray actors) whose stalls are counted here beside the
    run's own loop; 0: the run's attempts ran on its own loop only."""


class LiveChecks(BaseModel):
    """What the run observed of its endpoint and judge while it went (aeh.engine.fidelity): the
    counts its warnings are made from. Newer keys are kept as they are."""

    model_config = ConfigDict(extra="allow")

    attempts: int = 0
    model_turns: int = 0
    tool_calls: int = 0
    faults_planned_rate: float | None = None
    faults_injected: int = 0
    judge_verdicts: dict[str, Any] = Field(default_factory=dict)
    time_s: dict[str, float] = Field(default_factory=dict)
    evaluation_spend: dict[str, Any] = Field(default_factory=dict)
    first_reply_exhausted: int = 0
    warnings: list[str] = Field(default_factory=list)


class Provenance(BaseModel):
    """Where a run's attempts came from beyond one process: the shard it ran, the stores merged in."""

    shard: str | None = None
    """`i/n`: this run is shard i of n of its plan (every shard shares the run id)."""
    merged_from: list[dict[str, Any]] = Field(default_factory=list)
    """One entry per store `aeh merge` took attempts from."""


class RunConfig(BaseModel):
    """What a run records beyond its columns, in typed parts; `facts` holds what the suite, the
    adapter or the caller add of their own (a coding suite's sandbox and hidden-set hashes, the
    command adapter's solver, an importer's source)."""

    model_config = ConfigDict(validate_assignment=True)

    spec: dict[str, Any] = Field(default_factory=dict)
    """The run's options as stored (`RunSpec.stored()`): what resume, replay and Ray rebuild from."""
    suite: SuiteRef = Field(default_factory=SuiteRef)
    tasks: list[str] | None = None
    """The task ids the run planned (resume and merge read the plan from it)."""
    health: HarnessHealth | None = None
    redaction: RedactionRecord | None = None
    provenance: Provenance = Field(default_factory=Provenance)
    live_checks: LiveChecks | None = None
    judge_all: bool = False
    workspace_root: str | None = None
    """Where the attempts' kept workspaces are (`aeh trace` points at them)."""
    tools_probe: dict[str, Any] | None = None
    scoring: str | None = None
    """The scoring profile the run is scored with (None: the default)."""
    task_weights: dict[str, float] = Field(default_factory=dict)
    cost_currency: str | None = None
    """The one currency the run keeps its costs in (None: USD)."""
    suite_kind: str | None = None
    facts: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any) -> Any:
        # A flat mapping (a store before migration 7, or a caller's `config={...}`) is nested here.
        if isinstance(data, dict) and not set(data) <= set(cls.model_fields):
            own = {k: v for k, v in data.items() if k in cls.model_fields and k not in LEGACY_CONFIG_KEYS}
            nested = nest_legacy_config({k: v for k, v in data.items() if k not in own})
            facts = {**dict(own.pop("facts", None) or {}), **nested.pop("facts")}
            return {**nested, **own, "facts": facts}
        return data

    @property
    def currency(self) -> str:
        return self.cost_currency or "USD"

    def add(self, values: dict[str, Any]) -> None:
        """Take these facts (flat, as a suite, adapter or caller gives them): a typed part's name
        (or its name before migration 7, `LEGACY_CONFIG_KEYS`) sets that part, the rest go to `facts`."""
        fields = type(self).model_fields
        flat = {("__" + k if k in fields and k not in LEGACY_CONFIG_KEYS else k): v for k, v in values.items()}
        nested = nest_legacy_config({k: v for k, v in flat.items() if not k.startswith("__")})
        nested.update({k[2:]: v for k, v in flat.items() if k.startswith("__")})
        self.facts.update(nested.pop("facts", {}))
        for key, value in nested.items():
            part = getattr(self, key)
            if isinstance(part, BaseModel) and isinstance(value, dict):
                setattr(self, key, part.model_copy(update=value))
            else:
                setattr(self, key, value)


class RunInfo(BaseModel):
    """Everything needed to know what a run measured and to compare it honestly."""

    run_id: str
    created_at: str
    finished_at: str | None = None
    aeh_version: str
    suite: str
    suite_hash: str
    adapter: str
    model: str | None = None
    seed: int
    attempts: int
    concurrency: int
    price_table_version: str
    price_table_date: str
    judge_model: str | None = None
    tier2_prompt_version: str | None = None
    fault_profile: dict[str, Any] | None = None
    parent_run_id: str | None = None
    """Set for replays and imports: the run this one was derived from."""
    status: Literal["running", "finished", "interrupted", "failed", "stale"] = "running"
    """`stale` is never stored: readers show it for a `running` run whose process is gone."""
    config: RunConfig = Field(default_factory=RunConfig)
    owner_pid: int | None = None
    """The process executing the run (None for imports and runs stored before aeh recorded it)."""
    owner_host: str | None = None
    heartbeat_at: str | None = None
    """Refreshed while the run executes; an old one on another host means the run is dead."""


class TraceView(BaseModel):
    """The read-only view of one attempt that graders and invariants judge.

    Invariants must be pure functions of this view: no I/O, independent of span order.
    """

    task_id: str
    final_output: str | None = None
    status: AgentStatus = "answered"
    tool_calls: list[ToolCall] = Field(default_factory=list)
    spans: list[Span] = Field(default_factory=list)
    allowed_tools: list[str] = Field(default_factory=list)
    secrets: list[str] = Field(default_factory=list)
    """Fixture tokens the suite declares secret; invariants may check nothing leaks them."""


#: An invariant returns True/False, or (passed, detail) to explain a violation.
InvariantVerdict = bool | tuple[bool, str]
Invariant = Callable[[TraceView], InvariantVerdict]
