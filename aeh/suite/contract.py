"""The suite plugin contract. The engine knows this and nothing about any domain."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from aeh.errors import Problem, SuiteLoadError
from aeh.models import GoldenTrace, Invariant, InvariantVerdict, Task
from aeh.tools import ToolRegistry

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


def suite_root(suite: EvalSuite) -> Path | None:
    root = getattr(suite, "root", None)
    return Path(root) if root is not None else None


def suite_lifespan(suite: EvalSuite) -> AbstractAsyncContextManager[dict[str, Any]] | None:
    """The suite's lifespan, whose failure to start is a SuiteLoadError naming the suite, not a crash."""
    factory = getattr(suite, "lifespan", None)
    return _CheckedLifespan(suite, factory) if callable(factory) else None


class _CheckedLifespan(AbstractAsyncContextManager[dict[str, Any]]):
    """Starts the suite's resources; an exception while starting them is the suite's problem."""

    def __init__(self, suite: EvalSuite,
                 factory: Callable[[], AbstractAsyncContextManager[dict[str, Any]] | None]) -> None:
        self._suite, self._factory = suite, factory
        self._inner: AbstractAsyncContextManager[dict[str, Any]] | None = None

    def _problem(self, what: str) -> SuiteLoadError:
        name = str(getattr(self._suite, "name", "suite"))
        root = suite_root(self._suite)
        where = str(root / "suite.py") if root is not None and (root / "suite.py").is_file() else name
        return SuiteLoadError([Problem(where, "lifespan", what, "fix the suite's lifespan() so it starts "
                                       "its resources, or raise a clear error there")], suite=name)

    async def __aenter__(self) -> dict[str, Any]:
        try:
            self._inner = self._factory()
            if self._inner is None:  # a DirectorySuite whose suite.py has no lifespan
                return {}
            if not hasattr(self._inner, "__aenter__"):
                raise self._problem(f"lifespan() returned {type(self._inner).__name__}, not an async "
                                    "context manager")
            return await self._inner.__aenter__()
        except SuiteLoadError:
            raise
        except (Exception, SystemExit) as exc:
            raise self._problem(f"lifespan() failed to start: {type(exc).__name__}: {exc}") from exc

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        if self._inner is None:
            return None
        return await self._inner.__aexit__(*exc_info)
