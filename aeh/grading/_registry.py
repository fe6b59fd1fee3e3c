"""Registry of outcome grader kinds (tier 0). Suites and packages can add kinds.

A grader kind is a function `fn(config, ctx) -> GraderResult` (sync or async) registered with a
pydantic config model. The loader validates every task's grader options against that model,
so a misspelled option fails at load time, not mid-run.

The built-in kinds are listed in `BUILTIN_GRADERS` (each function's config model is the type of
its first parameter) and imported on first use. Third-party kinds register through the
`aeh.graders` entry-point group: each entry point names a module whose import registers its
kinds on `default_graders` with `@grader(...)`.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from aeh._util.registry import Registry
from aeh.models import GoldenTrace, GraderResult, GraderSpec, Task, TraceView
from aeh.trace import RecordsSpans

if TYPE_CHECKING:
    from aeh.grading.judge import Judge

__all__ = [
    "BUILTIN_GRADERS",
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
    judge: Judge | None = None
    """The LLM judge client when the run has one (used by the `judge` kind)."""
    recorder: RecordsSpans | None = None
    """The attempt's SpanRecorder, for graders that want to record sub-spans."""
    golden: GoldenTrace | None = None
    """The task's golden trace, when it has one (tier-2 localization uses it)."""


@dataclass
class _Kind:
    fn: Callable[..., GraderResult | Awaitable[GraderResult]]
    config: type[GraderConfig]


def _kind_of(fn: Callable[..., Any]) -> _Kind:
    """A built-in kind: the function and the config model its first parameter is annotated with."""
    first = next(iter(inspect.signature(fn).parameters))
    return _Kind(fn, typing.get_type_hints(fn)[first])


#: The shipped grader kinds: kind → "module:function", imported when first used.
BUILTIN_GRADERS = {
    "exact": "aeh.grading.outcome:exact",
    "contains": "aeh.grading.outcome:contains",
    "regex": "aeh.grading.outcome:regex",
    "numeric": "aeh.grading.outcome:numeric",
    "declined": "aeh.grading.outcome:declined",
    "tool_sequence": "aeh.grading.outcome:tool_sequence",
    "file": "aeh.grading.workspace_graders:file_grader",
    "sql": "aeh.grading.workspace_graders:sql_grader",
    "judge": "aeh.grading.judge_grader:judge",
    "hidden_tests": "aeh.grading._hidden_tests:hidden_tests",
    "terminal_state": "aeh.grading._assertions:terminal_state",
    "artifact_exists": "aeh.grading._assertions:artifact_exists",
    "metric_present": "aeh.grading._assertions:metric_present",
    "output_contains": "aeh.grading._assertions:output_contains",
    "tool_called": "aeh.grading._assertions:tool_called",
    "tool_not_called": "aeh.grading._assertions:tool_not_called",
}


class GraderRegistry:
    """Grader kinds by name, each with its options model; `aeh.graders` entry points add kinds.

    An entry point names a module whose import registers its kinds with `@grader(...)`; those
    kinds are credited to the plugin's distribution in `aeh plugins`.
    """

    def __init__(self, group: str | None = None, builtins: dict[str, str] | None = None) -> None:
        self._kinds: Registry[_Kind] = Registry("grader kind", group=group, builtins=builtins, adapt=_kind_of)

    def register(self, kind: str, config: type[GraderConfig]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def add(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._kinds.register(kind, _Kind(fn, config))
            return fn

        return add

    def kinds(self) -> list[str]:
        return self._kinds.names()

    def describe(self) -> dict[str, str]:
        """Kind → where it came from."""
        return self._kinds.describe()

    def unregister(self, kind: str) -> None:
        """Forget a kind (a plugin uninstalled while running, in tests)."""
        self._kinds.unregister(kind)

    def __contains__(self, kind: object) -> bool:
        return kind in self._kinds  # unknown names re-scan entry points: plugins installed since

    def config_model(self, kind: str) -> type[GraderConfig]:
        return self._kinds.get(kind).config

    def validate(self, spec: GraderSpec) -> GraderConfig:
        """Parse a spec's options; raises KeyError (unknown kind) or pydantic ValidationError."""
        return self.config_model(spec.kind).model_validate(spec.options)

    def parsed(self, spec: GraderSpec) -> GraderConfig:
        """`validate(spec)`, remembered on the spec until its kind's model or its options change."""
        model = self.config_model(spec.kind)
        options = spec.model_extra or {}
        # Read from pydantic's private dict: `spec._parsed` goes through BaseModel.__getattr__ (~2.5 µs
        # a read, per grader per attempt) where this is a dict look-up.
        private = spec.__pydantic_private__ or {}
        cached: tuple[type[GraderConfig], dict[str, Any], GraderConfig] | None = private.get("_parsed")  # set only here
        if cached is not None and cached[0] is model and cached[1] == options:
            return cached[2]
        cfg = model.model_validate(options)
        spec._parsed = (model, dict(options), cfg)
        return cfg

    async def grade(self, spec: GraderSpec, ctx: GradeContext) -> GraderResult:
        cfg = self.parsed(spec)
        result = self._kinds.get(spec.kind).fn(cfg, ctx)
        if isinstance(result, Awaitable):
            return await result
        return result


#: The registry every run uses: the built-in kinds, then `aeh.graders` plugins.
default_graders = GraderRegistry(group="aeh.graders", builtins=BUILTIN_GRADERS)
grader = default_graders.register


def result_name(kind: str, cfg: GraderConfig) -> str:
    return cfg.name or kind
