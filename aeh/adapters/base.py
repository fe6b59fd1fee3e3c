"""The adapter contract and the registry that resolves `--adapter NAME`."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from aeh.engine.context import AttemptContext
from aeh.errors import ConfigError
from aeh.models import AgentOutcome, Task

__all__ = ["Adapter", "BUILTIN_ADAPTERS", "adapter_names", "make_adapter"]


@runtime_checkable
class Adapter(Protocol):
    """Drives the agent under test through one attempt. It never grades.

    Tool calls go through `ctx.call_tool`, model calls through `ctx.model_call` +
    `ctx.record_usage`, so the engine observes everything the agent does.
    """

    name: str
    model: str | None

    async def run(self, task: Task, ctx: AttemptContext) -> AgentOutcome: ...


BUILTIN_ADAPTERS: dict[str, str] = {
    "mock": "aeh.adapters.mock:MockAdapter",
    "react": "aeh.adapters.react:ReactAdapter",
    "single_shot": "aeh.adapters.single_shot:SingleShotAdapter",
    "replay": "aeh.adapters.replay:ReplayAdapter",
    "command": "aeh.adapters.command:CommandAdapter",
}


def _targets() -> dict[str, str]:
    targets = dict(BUILTIN_ADAPTERS)
    for ep in entry_points(group="aeh.adapters"):
        targets.setdefault(ep.name, ep.value)
    return targets


def adapter_names() -> list[str]:
    return sorted(_targets())


def make_adapter(name: str, **options: Any) -> Adapter:
    """Build an adapter by name; imports lazily so unused providers cost nothing."""
    targets = _targets()
    if name not in targets:
        raise ConfigError(
            f"unknown adapter {name!r} — choose one of: {', '.join(sorted(targets))}"
        )
    module_name, _, attr = targets[name].partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"adapter {name!r} is not available here: {exc}") from exc
    return factory(**options)
