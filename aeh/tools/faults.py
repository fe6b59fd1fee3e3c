"""Seeded tool-fault injection: profiles (`faults.yaml`), per-attempt injectors, run wiring.

The engine asks an attempt's injector, before every validated tool call, whether to fail it
(`AttemptContext._dispatch` → `next_fault(name)`), and `AttemptContext._inject` carries the
fault out: a `timeout` really sleeps the tool's `timeout_s`, a `500` returns a server error, a
`garbage` returns malformed output. Every injected fault is recorded on the ToolCall
(`injected_fault`, `error_kind`) and as a `faults` span, so reports keep injected failures
apart from the agent's own mistakes. Nothing here knows any concrete tool.

Two modes:

- ``uniform`` — each call to a targeted tool fails independently with probability ``p`` (the
  sum of the per-kind rates); the kind is drawn in proportion to the rates.
- ``burst`` — failures come in contiguous windows of ``burst_length`` targeted calls, one kind
  per window (real outages cluster). Outside a window each call starts a new window with
  probability ``q = p / (L·(1 − p) + p)``, which makes the long-run share of failed calls
  exactly ``p`` (a renewal cycle is a geometric run of ``(1 − q)/q`` good calls on average plus
  ``L`` failed ones, so the failed share is ``L / (L + (1 − q)/q) = p``). The injector starts
  in that chain's stationary state — with probability ``p`` the first call is already inside a
  window, at a uniformly random position — so every call, even in a short attempt, fails with
  probability exactly ``p``; only the correlation differs from uniform mode.

Seeding: the engine gives each attempt its own seed from (run seed, task, attempt, "faults"),
so the same run seed gives the same faults on the same sequence of calls, whatever the
scheduling order. Only calls to targeted tools advance the injector.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

import pydantic
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from aeh._util.problems import (  # the same `file:field: message — fix` as tasks
    display_path,
    pydantic_problems,
    read_yaml,
)
from aeh.errors import ConfigError, Problem, ValidationError
from aeh.models import Task

__all__ = [
    "FAULT_KINDS",
    "FaultInjector",
    "FaultKind",
    "FaultOptions",
    "FaultProfile",
    "burst_start_probability",
    "configure_faults",
    "load_fault_profile",
    "resolve_fault_profile",
]

FaultKind = Literal["timeout", "500", "garbage"]
FAULT_KINDS: tuple[str, ...] = ("timeout", "500", "garbage")


def burst_start_probability(rate: float, burst_length: int) -> float:
    """Chance that a call outside a window starts one, so the failed share equals `rate`.

    q = p / (L·(1 − p) + p); q = p when L = 1 (burst degenerates to uniform), q = 1 when p = 1.
    """
    if rate <= 0:
        return 0.0
    if rate >= 1:
        return 1.0
    return rate / (burst_length * (1.0 - rate) + rate)


class FaultProfile(BaseModel):
    """A fault profile as written in `faults.yaml` (unknown keys are errors).

    Give either `rates` (per kind) or a single `rate` split evenly over `kinds`.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str | None = None
    """A label recorded with the run (defaults to the file name when loaded from a file)."""
    description: str | None = None
    mode: Literal["uniform", "burst"] = "uniform"
    """uniform: independent per-call failures; burst: contiguous windows of failed calls."""
    rates: dict[FaultKind, float] | None = None
    """Per-call probability of each kind, e.g. {timeout: 0.05, "500": 0.1, garbage: 0.05}."""
    rate: float | None = Field(None, ge=0, le=1)
    """Total per-call fault probability, split evenly over `kinds` (alternative to `rates`)."""
    kinds: list[FaultKind] | None = None
    """With `rate`: which kinds to inject (default all three)."""
    burst_length: int = Field(5, ge=1, le=1000)
    """Burst mode: window length, in calls to targeted tools."""
    tools: list[str] | None = None
    """Tools whose calls may fail (default: every tool)."""
    timeout_s: float | None = Field(None, gt=0)
    """Optional override of how long an injected timeout hangs (default: the tool's timeout_s)."""

    @field_validator("rates", mode="before")
    @classmethod
    def _string_keys(cls, v: Any) -> Any:
        # YAML reads `500:` as the integer 500; the kind is the string "500".
        if isinstance(v, Mapping):
            return {str(k): val for k, val in v.items()}
        return v

    @field_validator("rates")
    @classmethod
    def _rates_in_range(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        if v is None:
            return v
        for kind, p in v.items():
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"rate of {kind!r} must be a probability in [0, 1], got {p}")
        if sum(v.values()) > 1.0 + 1e-9:
            raise ValueError(f"rates sum to {sum(v.values()):.4g}; a call fails at most once, so the "
                             "sum must be at most 1")
        return v

    @field_validator("kinds")
    @classmethod
    def _kinds_unique(cls, v: list[str] | None) -> list[str] | None:
        if v is not None:
            if not v:
                raise ValueError("kinds must name at least one of timeout, 500, garbage")
            if len(set(v)) != len(v):
                raise ValueError("kinds lists a kind twice")
        return v

    @field_validator("tools")
    @classmethod
    def _tools_named(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and (not v or not all(isinstance(t, str) and t for t in v)):
            raise ValueError("tools must be a non-empty list of tool names (omit it to target every tool)")
        return v

    @model_validator(mode="after")
    def _one_way_to_give_rates(self) -> FaultProfile:
        if self.rates is not None and self.rate is not None:
            raise ValueError("give either `rates` (per kind) or `rate` (+ `kinds`), not both")
        if self.rates is None and self.rate is None:
            raise ValueError("give `rates: {timeout: …, \"500\": …, garbage: …}` or `rate: …`")
        if self.kinds is not None and self.rate is None:
            raise ValueError("`kinds` goes with `rate`; with `rates`, list only the kinds you want")
        return self

    # -- derived ---------------------------------------------------------------------------
    def kind_rates(self) -> dict[str, float]:
        """Per-call probability of each injected kind (zero-rate kinds left out)."""
        if self.rates is not None:
            return {k: p for k, p in self.rates.items() if p > 0}
        kinds: list[str] = list(self.kinds or FAULT_KINDS)
        assert self.rate is not None
        return {k: self.rate / len(kinds) for k in kinds} if self.rate > 0 else {}

    @property
    def total_rate(self) -> float:
        return min(1.0, sum(self.kind_rates().values()))

    def with_rate(self, rate: float) -> FaultProfile:
        """The same profile at total rate `rate`, keeping the kinds' proportions."""
        if not 0.0 <= rate <= 1.0:
            raise ConfigError(f"--fault-rate must be a probability in [0, 1], got {rate}")
        data = self.model_dump()
        if self.rates is not None:
            positive = {k: p for k, p in self.rates.items() if p > 0}
            total = sum(positive.values())
            if total > 0:
                data["rates"] = {k: rate * p / total for k, p in positive.items()}
            else:  # no proportions to keep: split evenly over the kinds the profile names
                kinds: list[str] = list(self.rates) or list(FAULT_KINDS)
                data["rates"] = {k: rate / len(kinds) for k in kinds}
        else:
            data["rate"] = rate
        return FaultProfile.model_validate(data)

    def targets(self, tool_name: str) -> bool:
        return self.tools is None or tool_name in self.tools


class FaultInjector:
    """One attempt's seeded fault source: `next_fault(tool) -> "timeout" | "500" | "garbage" | None`.

    Only calls to targeted tools are counted and can fail. `history` keeps (tool, fault) for
    each counted call, for tests and debugging.
    """

    def __init__(self, profile: FaultProfile, seed: int) -> None:
        self.profile = profile
        self.seed = seed
        self.rng = random.Random(seed)
        self._kinds = profile.kind_rates()
        self._p = profile.total_rate
        self._q = burst_start_probability(self._p, profile.burst_length)
        self._window_left = 0  # calls still to fail in the current burst window
        self._window_kind: str | None = None
        self._started = False
        self.timeout_s: float | None = profile.timeout_s
        self.history: list[tuple[str, str | None]] = []

    def _draw_kind(self) -> str:
        u = self.rng.random() * self._p
        acc = 0.0
        for kind, p in self._kinds.items():
            acc += p
            if u < acc:
                return kind
        return next(reversed(self._kinds))  # float rounding at the top edge

    def _next_burst(self) -> str | None:
        if not self._started:
            # Stationary start: inside a window with probability p, at a uniform position.
            self._started = True
            if self.rng.random() < self._p:
                self._window_kind = self._draw_kind()
                self._window_left = self.rng.randint(1, self.profile.burst_length)
        elif self._window_left == 0 and self.rng.random() < self._q:
            self._window_kind = self._draw_kind()
            self._window_left = self.profile.burst_length
        if self._window_left > 0:
            self._window_left -= 1
            return self._window_kind
        return None

    def next_fault(self, tool_name: str) -> str | None:
        if not self.profile.targets(tool_name) or self._p <= 0:
            return None
        if self.profile.mode == "uniform":
            fault = self._draw_kind() if self.rng.random() < self._p else None
        else:
            fault = self._next_burst()
        self.history.append((tool_name, fault))
        return fault


# --- loading --------------------------------------------------------------------------------


def _problems(where: str, exc: pydantic.ValidationError) -> list[Problem]:
    problems = pydantic_problems(where, exc, FaultProfile)
    fixes = {
        "mode": "use mode: uniform or mode: burst",
        "rates": 'e.g. rates: {timeout: 0.05, "500": 0.1, garbage: 0.05}',
        "kinds": "kinds are timeout, 500 and garbage",
    }
    out = []
    for p in problems:
        head = p.field.split(".")[0].split("[")[0]
        if head in fixes and p.message != "missing required field":
            p = Problem(p.file, p.field, p.message, fixes[head])
        out.append(p)
    return out


def load_fault_profile(path: str | Path) -> FaultProfile:
    """Read and validate a `faults.yaml`; raises ValidationError listing every problem."""
    path = Path(path).expanduser()
    where = display_path(path)
    if not path.is_file():
        raise ValidationError([Problem(where, "(file)", "fault profile not found",
                                       "pass the path of a faults.yaml")], what="fault profile")
    data, problems = read_yaml(path)
    if data is None:
        raise ValidationError(problems, what=f"fault profile {where}")
    data.setdefault("name", path.stem)
    try:
        return FaultProfile.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ValidationError(_problems(where, exc), what=f"fault profile {where}") from None


def resolve_fault_profile(
    profile: str | Path | Mapping[str, Any] | FaultProfile | None,
    fault_rate: float | None = None,
    mode: str | None = None,
) -> FaultProfile | None:
    """A profile from a path, a dict or a FaultProfile, with `--fault-rate`/mode overrides.

    With no profile, a `fault_rate` means uniform (unless `mode` says burst) over all three kinds.
    """
    if isinstance(profile, FaultProfile):
        resolved: FaultProfile | None = profile
    elif isinstance(profile, Mapping):
        try:
            resolved = FaultProfile.model_validate(dict(profile))
        except pydantic.ValidationError as exc:
            raise ValidationError(_problems("<fault profile>", exc), what="fault profile") from None
    elif profile is not None:
        resolved = load_fault_profile(profile)
    elif fault_rate is not None:
        resolved = FaultProfile(name=f"rate {fault_rate}", rate=0.0)
    else:
        resolved = None
    if resolved is None:
        if mode is not None:
            raise ConfigError("a fault mode needs a fault profile or --fault-rate")
        return None
    if fault_rate is not None:
        resolved = resolved.with_rate(fault_rate)
    if mode is not None:
        if mode not in ("uniform", "burst"):
            raise ConfigError(f"fault mode must be uniform or burst, got {mode!r}")
        resolved = resolved.model_copy(update={"mode": mode})
    return resolved


class FaultOptions(Protocol):
    """What `configure_faults` fills in (`aeh.engine.wiring.RunWiring` is one)."""

    fault_factory: Callable[[Task, int], FaultInjector | None] | None
    fault_profile: dict[str, Any] | None


def configure_faults(
    options: FaultOptions,
    profile: str | Path | Mapping[str, Any] | FaultProfile | None,
    fault_rate: float | None = None,
    mode: str | None = None,
) -> FaultProfile | None:
    """Set `options.fault_factory` and `options.fault_profile` (recorded on the run).

    `fault_rate` overrides the profile's total rate, keeping the kinds' proportions; without a
    profile it means that rate split evenly over timeout, 500 and garbage.
    """
    resolved = resolve_fault_profile(profile, fault_rate=fault_rate, mode=mode)
    if resolved is None:
        options.fault_factory = None
        options.fault_profile = None
        return None

    def factory(task: Task, seed: int) -> FaultInjector:
        return FaultInjector(resolved, seed)

    options.fault_factory = factory
    options.fault_profile = resolved.model_dump(mode="json")
    return resolved


def example_profile_yaml(profile: FaultProfile) -> str:
    """The YAML text of a profile (for docs and `faults.yaml` generation)."""
    return yaml.safe_dump(profile.model_dump(mode="json", exclude_none=True), sort_keys=False)
