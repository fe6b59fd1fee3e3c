"""How an imported Terminal-Bench trial with `is_resolved: null` is counted.

Terminal-Bench writes `is_resolved: null` when the tests gave no verdict. Its leaderboard counts
every such trial as unresolved (`accuracy = n_resolved / len(results)`), so by default aeh does
the same: the attempt stays in n as a failure, in the bucket its `failure_mode` points to.
Excluding some modes as harness errors (the attempt leaves n) is an explicit choice.

| failure_mode | default status → bucket | why |
| --- | --- | --- |
| `unknown_agent_error` | gave_up → `no_answer` | Terminal-Bench's label for an agent crash: the agent's failure, it left no end state to judge |
| `agent_installation_failed`, `fatal_llm_parse_error` | gave_up → `no_answer` | the agent never ran, or could not read its own model's output: the agent's failure |
| `test_timeout` | budget_exhausted → `budget_exhausted` | the tests did not finish inside the task's time limit: a time-budget failure |
| `agent_timeout`, `context_length_exceeded`, `output_length_exceeded` | budget_exhausted → `budget_exhausted` | a budget (time, context, output) ran out |
| `parse_error` | answered → `wrong_answer` | the tests ran on the agent's end state and printed no verdict the parser could read; the end state did not demonstrably pass. The most arguable mode: a broken test run can also be harness trouble, so it is the first to exclude with `harness_error:parse_error` |
| anything else | gave_up → `no_answer` | no verdict and no known cause: the source counts it unresolved |
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from aeh.errors import Problem, ValidationError
from aeh.models import AgentStatus, FailureBucket

__all__ = ["NULL_OUTCOMES", "NullPolicy"]

#: failure_mode of a null result → (status, bucket) when it counts as a failure (the default).
NULL_OUTCOMES: dict[str, tuple[AgentStatus, FailureBucket]] = {
    "unknown_agent_error": ("gave_up", FailureBucket.no_answer),
    "agent_installation_failed": ("gave_up", FailureBucket.no_answer),
    "fatal_llm_parse_error": ("gave_up", FailureBucket.no_answer),
    "test_timeout": ("budget_exhausted", FailureBucket.budget_exhausted),
    "agent_timeout": ("budget_exhausted", FailureBucket.budget_exhausted),
    "context_length_exceeded": ("budget_exhausted", FailureBucket.budget_exhausted),
    "output_length_exceeded": ("budget_exhausted", FailureBucket.budget_exhausted),
    "parse_error": ("answered", FailureBucket.wrong_answer),
}
_OTHER: tuple[AgentStatus, FailureBucket] = ("gave_up", FailureBucket.no_answer)
_MODE = re.compile(r"[a-z][a-z0-9_]*")
_FIX = ("use --null-as failure (the source's definition), --null-as harness_error (every null), "
        "or --null-as harness_error:MODE[,MODE…] (e.g. harness_error:test_timeout,parse_error)")


class NullPolicy(BaseModel):
    """Which null results leave n as harness errors; every other null is a failure."""

    model_config = ConfigDict(frozen=True)

    all_harness_errors: bool = False
    """Every null is a harness error (`--null-as harness_error`)."""
    harness_error_modes: tuple[str, ...] = ()
    """Only these failure_modes are harness errors (`--null-as harness_error:a,b`)."""

    @classmethod
    def parse(cls, text: str | NullPolicy | None) -> NullPolicy:
        """`failure` | `harness_error` | `harness_error:MODE[,MODE…]` → a policy; ValidationError otherwise."""
        if isinstance(text, NullPolicy):
            return text
        value = (text or "failure").strip()
        if value == "failure":
            return cls()
        if value == "harness_error":
            return cls(all_harness_errors=True)
        head, _, tail = value.partition(":")
        modes = tuple(sorted({m.strip() for m in tail.split(",") if m.strip()}))
        if head != "harness_error" or not modes or not all(_MODE.fullmatch(m) for m in modes):
            raise ValidationError([Problem("-", "--null-as", f"{value!r} is not a null-result policy", _FIX)],
                                  "import option")
        return cls(harness_error_modes=modes)

    @property
    def label(self) -> str:
        """The option value that gives this policy back (`failure`, `harness_error`, `harness_error:a,b`)."""
        if self.all_harness_errors:
            return "harness_error"
        return f"harness_error:{','.join(self.harness_error_modes)}" if self.harness_error_modes else "failure"

    def is_harness_error(self, mode: str) -> bool:
        """True when a null result with this failure_mode leaves n."""
        return self.all_harness_errors or mode in self.harness_error_modes

    def outcome(self, mode: str) -> tuple[AgentStatus, FailureBucket]:
        """(status, bucket) of a null result with this failure_mode."""
        if self.is_harness_error(mode):
            return "harness_error", FailureBucket.harness_error
        return NULL_OUTCOMES.get(mode, _OTHER)

    def describe(self, null_modes: Iterable[str]) -> str:
        """One line for the run's metadata: the policy and where each null mode went, with counts."""
        counts = Counter(null_modes)
        where = ", ".join(f"{mode} {n} → {self.outcome(mode)[1].value}" for mode, n in sorted(counts.items()))
        kind = "source definition: a null counts as unresolved" if self.label == "failure" else (
            "nulls of the listed modes leave n")
        return f"null is_resolved as {self.label} ({kind}; {where or 'no null results'})"

    def record(self, null_modes: Iterable[str]) -> dict[str, Any]:
        """The structured policy stored in `run.config.facts["null_policy"]`."""
        counts = Counter(null_modes)
        return {"null_as": self.label, "null_counts": dict(sorted(counts.items())),
                "null_buckets": {mode: self.outcome(mode)[1].value for mode in sorted(counts)}}
