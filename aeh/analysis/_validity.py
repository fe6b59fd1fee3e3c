"""Is there a measurement to judge? The one check `compare`, `gate` and `drift` make before a verdict.

A verdict needs a valid measurement on both sides: each run within the harness-error limit and
finished (or explicitly accepted), both runs of the same suite (or the user asked for the task
overlap), and at least `MIN_SHARED_TASKS` tasks with valid attempts in both. Anything less is
"cannot judge" — never a pass, never a regression — with each reason and its fix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from aeh.errors import HARNESS_ERROR_LIMIT, ConfigError, ExitCode
from aeh.store import Store

__all__ = ["CANNOT_JUDGE", "CANNOT_JUDGE_HEADLINE", "MIN_SHARED_TASKS", "CannotJudgeError", "Measurement", "Refusal",
           "cannot_judge_markdown", "cannot_judge_text", "check_range", "measurement", "measurement_refusals",
           "overlap_refusals", "suite_refusals"]

CANNOT_JUDGE = "cannot judge"
#: Fewer tasks with valid attempts in both runs than this and there is nothing to compare.
MIN_SHARED_TASKS = 1


class CannotJudgeError(ConfigError):
    """A run that cannot serve as a measurement where one is required (e.g. a baseline to save)."""

    exit_code = ExitCode.CANNOT_JUDGE


@dataclass(frozen=True)
class Refusal:
    """One reason a verdict cannot be given, and what to do about it."""

    check: str  # harness_errors | no_attempts | unfinished | suite_differs | too_few_tasks | too_few_runs
    reason: str
    fix: str

    def __str__(self) -> str:
        return f"{self.reason} — {self.fix}"

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "reason": self.reason, "fix": self.fix}


@dataclass(frozen=True)
class Measurement:
    """What the check reads of one run: its status, suite and harness-error count."""

    run_id: str
    status: str
    suite: str
    suite_hash: str
    attempts: int
    harness_errors: int

    @property
    def harness_error_rate(self) -> float:
        return self.harness_errors / self.attempts if self.attempts else 0.0

    @classmethod
    def of(cls, info: dict[str, Any], attempts: int, harness_errors: int) -> Measurement:
        """From a run's info (as `RunInfo.model_dump`) and its attempt counts."""
        return cls(str(info["run_id"]), str(info.get("status")), str(info.get("suite")),
                   str(info.get("suite_hash")), int(attempts), int(harness_errors))


def measurement(store: Store, run_id: str) -> Measurement:
    """Read one stored run's measurement (status as `aeh runs` shows it: a killed run is stale)."""
    info = store.run_info(run_id)
    buckets = store.attempts_frame(info.run_id, ["failure_bucket"])["failure_bucket"]
    errors = int((buckets == "harness_error").sum())
    return Measurement.of(info.model_dump(mode="json"), buckets.len(), errors)


def measurement_refusals(m: Measurement, label: str | None = None, *, allow_unfinished: bool = False,
                         flag: str = "--allow-unfinished") -> list[Refusal]:
    """Why run `m` (called `label`, e.g. "run B") is not a valid measurement; [] when it is."""
    name = f"{label} ({m.run_id})" if label else f"run {m.run_id}"
    out = []
    if m.attempts == 0:
        out.append(Refusal("no_attempts", f"{name} has no attempts stored",
                           f"run it to the end (`aeh run --resume {m.run_id}`) or choose another run"))
    elif m.harness_error_rate > HARNESS_ERROR_LIMIT:
        out.append(Refusal(
            "harness_errors",
            f"{name} has {m.harness_error_rate:.1%} harness errors ({m.harness_errors} of {m.attempts} "
            f"attempts, limit {HARNESS_ERROR_LIMIT:.0%}): not a valid measurement",
            f"fix the cause (`aeh report --run-id {m.run_id}` names the most common one) and run again"))
    if m.status != "finished" and not allow_unfinished:
        out.append(Refusal(
            "unfinished", f"{name} is {m.status}, not finished: some of its attempts may be missing",
            f"finish it with `aeh run --resume {m.run_id}`, or pass {flag} to judge the attempts it has"))
    return out


def suite_refusals(a: Measurement, b: Measurement, *, overlap: bool = False,
                   flag: str = "--overlap") -> list[Refusal]:
    """Refuse two runs of different suites (hash) unless the task overlap was asked for."""
    if overlap or a.suite_hash == b.suite_hash:
        return []
    return [Refusal(
        "suite_differs",
        f"the runs measured different suites: A {a.suite!r} (hash {a.suite_hash[:12]}), "
        f"B {b.suite!r} (hash {b.suite_hash[:12]})",
        f"compare two runs of one suite, or pass {flag} to judge only the tasks both ran")]


def overlap_refusals(shared: int, min_tasks: int = MIN_SHARED_TASKS, *, what: str = "both runs",
                     already: list[Refusal] | None = None) -> list[Refusal]:
    """Refuse when fewer than `min_tasks` tasks have valid attempts in both sides (unless `already`
    says a run has no valid attempts to speak of: that refusal is the cause, this one its echo)."""
    if shared >= max(1, min_tasks):  # 0 tasks compared is never a pass, whatever min_tasks says
        return []
    if any(r.check in ("harness_errors", "no_attempts") for r in already or []):
        return []
    return [Refusal(
        "too_few_tasks",
        f"{shared} task(s) have valid attempts in {what} (at least {max(1, min_tasks)} needed)",
        "compare runs that measured the same tasks")]


def check_range(name: str, value: float, low: float, high: float, *, low_open: bool = False,
                high_open: bool = True, example: str = "") -> None:
    """Raise ConfigError (exit 2) unless `value` is a number within [low, high) (or as opened)."""
    ok = (isinstance(value, int | float) and not math.isnan(value)
          and (value > low if low_open else value >= low) and (value < high if high_open else value <= high))
    if not ok:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ConfigError(f"{name} must be a number in {interval}, got {value}" + (f" — e.g. {example}" if example
                                                                                     else ""))


CANNOT_JUDGE_HEADLINE = "CANNOT JUDGE: no verdict either way — this is not a pass"


def cannot_judge_text(title: str | None, refusals: list[Refusal]) -> str:
    """The plain-text refusal: a title line (if any), the headline, then each reason and its fix."""
    lines = ([title] if title else []) + [CANNOT_JUDGE_HEADLINE]
    for r in refusals:
        lines += [f"  - {r.reason}", f"    fix: {r.fix}"]
    return "\n".join(lines)


def cannot_judge_markdown(title: str, refusals: list[Refusal]) -> str:
    """The same refusal as a PR comment."""
    out = ["### ⛔ **Cannot judge**: no verdict either way — this is not a pass", "", f"{title}.", ""]
    out += [f"- {r.reason} — **fix:** {r.fix}" for r in refusals]
    return "\n".join(out) + "\n"
