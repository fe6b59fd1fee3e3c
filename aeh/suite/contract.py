"""The suite plugin contract. The engine knows this and nothing about any domain."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from aeh.models import GoldenTrace, Invariant, InvariantVerdict, Task
from aeh.tools.registry import ToolRegistry

__all__ = ["EvalSuite", "Invariant", "InvariantVerdict"]



@runtime_checkable
class EvalSuite(Protocol):
    """What every suite provides. Optional extras an engine looks for with getattr:

    - `root: Path` — directory fixtures are copied from.
    - `lifespan() -> AbstractAsyncContextManager[dict]` — starts resources for a run (a
      fixture server …) and yields values tools see as `env.resources`.
    - `secrets() -> list[str]` — fixture tokens that must never leak.
    """

    name: str

    def tasks(self) -> list[Task]: ...

    def tool_registry(self) -> ToolRegistry: ...

    def invariants(self) -> dict[str, Invariant]: ...

    def golden_traces(self) -> dict[str, GoldenTrace]: ...


def suite_root(suite: Any) -> Path | None:
    root = getattr(suite, "root", None)
    return Path(root) if root is not None else None


def suite_lifespan(suite: Any) -> AbstractAsyncContextManager[dict[str, Any]] | None:
    factory = getattr(suite, "lifespan", None)
    return factory() if callable(factory) else None
