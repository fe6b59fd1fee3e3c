"""Registry of outcome grader kinds (tier 0). Suites and packages can add kinds.

A grader kind is a function `fn(config, ctx) -> GraderResult` (sync or async) registered with a
pydantic config model. The loader validates every task's grader options against that model,
so a misspelled option fails at load time, not mid-run.

Third-party kinds register through the `aeh.graders` entry-point group: each entry point names a
module whose import registers its kinds on `default_graders` with `@grader(...)`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from aeh.models import GoldenTrace, GraderResult, GraderSpec, Task, TraceView

__all__ = [
    "GradeContext",
    "GraderConfig",
    "GraderRegistry",
    "default_graders",
    "grader",
]


class GraderConfig(BaseModel):
    """Base for grader option models: unknown options are errors."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    """Optional label for reports; defaults to the kind."""


@dataclass
class GradeContext:
    """What a grader may look at for one attempt."""

    task: Task
    trace: TraceView
    workspace: Path
    resources: dict[str, Any] = field(default_factory=dict)
    suite_root: Path | None = None
    judge: Any = None
    """The LLM judge client when the run has one (used by the `judge` kind)."""
    recorder: Any = None
    """The attempt's SpanRecorder, for graders that want to record sub-spans."""
    golden: GoldenTrace | None = None
    """The task's golden trace, when it has one (tier-2 localization uses it)."""


@dataclass
class _Kind:
    fn: Callable[..., Any]
    config: type[GraderConfig]


class GraderRegistry:
    def __init__(self) -> None:
        self._kinds: dict[str, _Kind] = {}
        self._entry_points_seen: set[str] = set()
        self._scanned = False

    def register(self, kind: str, config: type[GraderConfig]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def add(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._kinds[kind] = _Kind(fn, config)
            return fn

        return add

    def _load_entry_points(self) -> None:
        """Import every `aeh.graders` entry point not imported yet (plugins installed later too)."""
        for ep in entry_points(group="aeh.graders"):
            key = f"{ep.name}={ep.value}"
            if key not in self._entry_points_seen:
                self._entry_points_seen.add(key)
                ep.load()

    def kinds(self) -> list[str]:
        self._ensure_builtin(rescan=True)
        return sorted(self._kinds)

    def __contains__(self, kind: object) -> bool:
        self._ensure_builtin()
        if kind not in self._kinds:
            self._ensure_builtin(rescan=True)  # a plugin may have been installed since
        return kind in self._kinds

    def config_model(self, kind: str) -> type[GraderConfig]:
        if kind not in self:
            raise KeyError(kind)
        return self._kinds[kind].config

    def validate(self, spec: GraderSpec) -> GraderConfig:
        """Parse a spec's options; raises KeyError (unknown kind) or pydantic ValidationError."""
        return self.config_model(spec.kind).model_validate(spec.options)

    async def grade(self, spec: GraderSpec, ctx: GradeContext) -> GraderResult:
        cfg = self.validate(spec)
        result = self._kinds[spec.kind].fn(cfg, ctx)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _ensure_builtin(self, rescan: bool = False) -> None:
        if self is not default_graders or (self._scanned and not rescan):
            return
        import aeh.grading._hidden_tests  # noqa: F401  (registers hidden_tests)
        import aeh.grading.judge_grader  # noqa: F401  (registers judge)
        import aeh.grading.outcome  # noqa: F401  (registers the built-in kinds)
        import aeh.grading.workspace_graders  # noqa: F401  (registers file and sql)

        self._load_entry_points()
        self._scanned = True


default_graders = GraderRegistry()
grader = default_graders.register


def result_name(kind: str, cfg: GraderConfig) -> str:
    return cfg.name or kind
