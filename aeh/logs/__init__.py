"""Run logging: one stream of spans and progress events, filtered by level and category.

Levels, each including the ones before it:
    silent    nothing
    progress  one line per finished task (plus a progress bar on a terminal) — the default
    steps     one line per attempt, and the agent's steps (tool calls, faults) as a tree
    calls     every span (model calls, grading, cost …) with brief attributes
    trace     every span start and end with full attributes (a model call's whole input only here)
`--log-only` / `--log-exclude` filter span lines by category. `pretty` indents spans by depth;
`jsonl` writes one JSON object per event (spans carry run_id, task_id, attempt, span_id,
parent_span_id, category, so interleaved attempts can be reassembled).

Every level and format writes through a `Redactor` (the run's own — `aeh.run` hands over the
store's, configured secrets included), so a log line never holds what the store would not.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from aeh._util.figure import UNPRICED, money
from aeh.engine.scheduler import RunProgress
from aeh.errors import ConfigError
from aeh.models import SPAN_CATEGORIES, Attempt, RunInfo, Span, Task
from aeh.store import Redactor
from aeh.trace import INPUT_MESSAGES, TOOL_DEFINITIONS

__all__ = ["LEVELS", "RunLogger"]

LEVELS = ("silent", "progress", "steps", "calls", "trace")
_STEP_CATEGORIES = {"tools", "faults"}
_INPUT_KEYS = (INPUT_MESSAGES, TOOL_DEFINITIONS)


def _brief(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RunLogger(RunProgress):
    """Both a span sink and a progress observer, writing to one stream (stderr by default)."""

    def __init__(
        self,
        level: str = "progress",
        fmt: str = "pretty",
        only: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        stream: TextIO | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        if level not in LEVELS:
            raise ConfigError(f"unknown --log-level {level!r} — choose one of {', '.join(LEVELS)}")
        if fmt not in ("pretty", "jsonl"):
            raise ConfigError(f"unknown --log-format {fmt!r} — choose pretty or jsonl")
        only_set, exclude_set = set(only or ()), set(exclude or ())
        unknown = (only_set | exclude_set) - set(SPAN_CATEGORIES)
        if unknown:
            raise ConfigError(
                f"unknown log category {', '.join(sorted(unknown))} — choose from {', '.join(SPAN_CATEGORIES)}"
            )
        self.level = LEVELS.index(level)
        self.fmt = fmt
        self.only = only_set
        self.exclude = exclude_set
        self.stream = stream or sys.stderr
        self.redactor = redactor if redactor is not None else Redactor()
        self._total = 0
        self.run_id: str | None = None
        self._finished = 0
        self._bar = self.level == 1 and fmt == "pretty" and self.stream.isatty()

    # -- helpers --------------------------------------------------------------------------
    def _write(self, line: str) -> None:
        if self._bar:
            self.stream.write("\r\033[K")
        self.stream.write(line + "\n")
        if self._bar:
            self._draw_bar()
        self.stream.flush()

    def _emit(self, event: str, payload: dict[str, Any], pretty: str) -> None:
        if self.fmt == "jsonl":
            self._write(json.dumps({"event": event, **payload}, default=str))
        else:
            self._write(pretty)

    def _draw_bar(self) -> None:
        width = 30
        filled = int(width * self._finished / max(1, self._total))
        self.stream.write(f"[{'#' * filled}{'.' * (width - filled)}] {self._finished}/{self._total} attempts")

    def _wants_span(self, span: Span) -> bool:
        if self.only and span.category not in self.only:
            return False
        if span.category in self.exclude:
            return False
        if self.level >= 3:
            return True
        return self.level == 2 and (span.category in _STEP_CATEGORIES or bool(self.only))

    # -- span sink ------------------------------------------------------------------------
    @property
    def wants_spans(self) -> bool:
        """Does this logger write any span? (Below the `steps` level, none.)"""
        return self.level >= 2

    def span_started(self, span: Span, depth: int) -> None:
        if self.level >= 4 and self._wants_span(span):
            span = self.redactor.redact_span(span)
            self._emit("span_start", {**span.model_dump(mode="json"), "depth": depth},
                       f"{'  ' * (depth + 1)}▸ {span.name} [{span.category}] {span.task_id}#{span.attempt}")

    def span_ended(self, span: Span, depth: int) -> None:
        if not self._wants_span(span):
            return
        if self.level < 4 and any(k in span.attributes for k in _INPUT_KEYS):
            # A model call's whole input is for `trace`: below it, a long conversation would be
            # written (and redacted) again with every call.
            span = span.model_copy(update={"attributes": {k: v for k, v in span.attributes.items()
                                                          if k not in _INPUT_KEYS}})
        span = self.redactor.redact_span(span)  # before `_brief` cuts a secret out of a pattern's reach
        duration = (span.end_ts or span.start_ts) - span.start_ts
        mark = "✗" if span.status == "error" else "·"
        attrs = span.attributes if self.level >= 4 else {
            k: v for k, v in span.attributes.items()
            if k in ("args", "result", "error", "error_kind", "passed", "gen_ai.usage.input_tokens",
                     "gen_ai.usage.output_tokens", "cost_usd", "status", "broken")
        }
        detail = " ".join(f"{k}={_brief(v)}" for k, v in attrs.items() if v not in (None, [], {}))
        indent = "  " * (depth + 1)
        self._emit("span", {**span.model_dump(mode="json"), "depth": depth},
                   f"{indent}{mark} {span.name} [{span.category}] {span.task_id}#{span.attempt} "
                   f"{duration * 1000:.0f}ms {detail}".rstrip())

    # -- progress -------------------------------------------------------------------------
    def run_started(self, info: RunInfo, tasks: list[Task]) -> None:
        self._total = len(tasks) * info.attempts
        self.run_id = info.run_id  # what `aeh run` names on Ctrl-C: None until the run is stored
        if self.level >= 1:
            self._emit("run_start", self.redactor.redact_plain(info.model_dump(mode="json")),
                       f"run {info.run_id}: suite {info.suite} ({len(tasks)} tasks × {info.attempts}), "
                       f"adapter {info.adapter}, model {info.model or '-'}, seed {info.seed}")

    def attempt_finished(self, attempt: Attempt) -> None:
        self._finished += 1
        if self.level >= 2:
            verdict = (
                "✓ success"
                if attempt.success
                else f"✗ {attempt.failure_bucket.value if attempt.failure_bucket else 'failed'}"
            )
            cost = money(attempt.cost_usd, none=UNPRICED)
            self._emit(
                "attempt",
                self.redactor.redact_plain(attempt.model_dump(mode="json", exclude={"tool_calls"})),
                f"  {attempt.task_id}#{attempt.attempt} {verdict} steps={attempt.steps} "
                f"tokens={attempt.tokens_in + attempt.tokens_out} {cost} {attempt.latency_s:.2f}s",
            )
        elif self._bar:
            self.stream.write("\r\033[K")
            self._draw_bar()
            self.stream.flush()

    def task_finished(self, task_id: str, attempts: list[Attempt]) -> None:
        if self.level < 1:
            return
        from aeh.stats import wilson_interval  # heavy: numpy and scipy.special, only once a task has finished

        valid = [a for a in attempts if not a.is_harness_error]
        k, n = sum(a.success for a in valid), len(valid)
        low, high = wilson_interval(k, n)
        errors = len(attempts) - n
        extra = f", {errors} harness error(s)" if errors else ""
        rate = f"{k / n:.2f} [{low:.2f}, {high:.2f}]" if n else "n/a"
        self._emit(
            "task",
            {"task_id": task_id, "n": n, "successes": k, "low": low, "high": high, "harness_errors": errors},
            f"{'✓' if n and k == n else '·' if k else '✗'} {task_id:<32} {k}/{n} {rate}{extra}",
        )

    def run_finished(self, info: RunInfo) -> None:
        if self._bar:
            self.stream.write("\r\033[K")
            self.stream.flush()
        if self.level >= 1 and self.fmt == "jsonl":
            self._emit("run_end", self.redactor.redact_plain(info.model_dump(mode="json")), "")
