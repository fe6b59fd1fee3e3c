"""The engine's side of tools: a registry of named callables with validated arguments.

Concrete tools live in suites. A tool is a function `fn(args, env)` (sync or async) where
`args` is an instance of the tool's pydantic params model (or a plain dict when it has none)
and `env` is a `ToolEnv` giving the attempt's workspace and the suite's live resources.

Async tools run on the engine's event loop. Sync tools run in a worker thread, so they may block
(a blocking client, a subprocess) without stalling other attempts; they must therefore be safe
to call from a thread other than the loop's. `timeout_s` is enforced for both: the attempt sees a
`timeout` at once, but a sync tool that overruns cannot be killed and keeps its thread until it
returns (give blocking clients their own timeouts too).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from aeh.tools.workspace import LazyWorkspace, workspace_path

__all__ = ["ToolEnv", "ToolInputError", "ToolRegistry", "ToolSpec", "ToolUnavailable", "WorkspaceEscape"]


class ToolUnavailable(Exception):
    """Raise from a tool that is deliberately unavailable (e.g. a suite's `broken_tool`)."""


class ToolInputError(ValueError):
    """Raise from a tool whose arguments fit the schema but make no sense (`1 +* 2`).

    The engine records it as `invalid_args`: the agent's malformed call, not a tool failure.
    """


class WorkspaceEscape(ToolInputError, PermissionError):
    """A path outside the attempt's workspace (absolute, `..`, a symlink out): refused."""


class ToolEnv:
    """What a tool may touch: its attempt's own workspace and the suite's resources.

    `workspace` is made on first use when the engine passes a `LazyWorkspace`.
    """

    __slots__ = ("_workspace", "resources", "rng")

    def __init__(self, workspace: Path | LazyWorkspace, resources: dict[str, Any] | None = None,
                 rng: random.Random | None = None) -> None:
        self._workspace = workspace
        self.resources = resources if resources is not None else {}
        self.rng = rng if rng is not None else random.Random()

    @property
    def workspace(self) -> Path:
        """The attempt's workspace directory."""
        return workspace_path(self._workspace)

    def resolve(self, path: str) -> Path:
        """`path` inside this attempt's workspace; absolute paths and escapes are refused.

        Raises WorkspaceEscape, which the engine records as the agent's invalid call.
        """
        return resolve_in_workspace(self.workspace, path)

    def __repr__(self) -> str:
        return f"ToolEnv(workspace={self._workspace!r}, resources=<{len(self.resources)}>)"


# Linux's PATH_MAX and NAME_MAX: a longer path fails in the OS (a tool-side error) instead of
# being refused as the agent's malformed argument.
_MAX_PATH_BYTES = 4096
_MAX_NAME_BYTES = 255
_ABSOLUTE = re.compile(r"^(?:/|~[/\\]|~$|[A-Za-z]:[\\/]|\\\\)")


def path_escape(path: str) -> str | None:
    """Why `path` would leave a workspace, or None — the one rule for tools, graders and invariants.

    Absolute paths (POSIX, home, a Windows drive or share) and any `..` segment are refused;
    `resolve_in_workspace` then also refuses a path that a symlink carries outside.
    """
    if not path.strip():
        return "must not be empty"
    if _ABSOLUTE.match(path.strip()):
        return "must be relative to the workspace, not absolute"
    if ".." in re.split(r"[\\/]", path):
        return "escapes the workspace with a '..' segment"
    return None


def _unusable(path: str) -> str | None:
    """Why the OS would reject `path` (a NUL byte, past PATH_MAX/NAME_MAX): the caller's bad argument."""
    if "\0" in path:
        return "contains a NUL byte"
    if len(path.encode("utf-8", "surrogatepass")) > _MAX_PATH_BYTES or any(
            len(part.encode("utf-8", "surrogatepass")) > _MAX_NAME_BYTES for part in re.split(r"[\\/]", path)):
        return f"is too long (at most {_MAX_PATH_BYTES} bytes, {_MAX_NAME_BYTES} per file or folder name)"
    return None


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """`path` inside `workspace`, resolved on disk; WorkspaceEscape (a PermissionError) otherwise,
    ToolInputError for a path no file system accepts."""
    problem = path_escape(path or "")
    if problem:
        raise WorkspaceEscape(f"path {path!r} {problem}")
    if unusable := _unusable(path):
        raise ToolInputError(f"path {path[:80]!r} {unusable}")
    root = workspace.resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise WorkspaceEscape(f"path {path!r} escapes the workspace: it resolves outside it")
    return target


@dataclass
class ToolSpec:
    name: str
    fn: Callable[..., Any]
    params: type[BaseModel] | None = None
    description: str = ""
    timeout_s: float = 10.0
    blocking: bool = True
    """False: a sync tool that only computes (no I/O, microseconds) runs on the event loop,
    skipping the worker-thread hand-off, which costs far more than such a tool. Its `timeout_s`
    cannot interrupt it there."""
    _schema_json: str | None = field(default=None, init=False, repr=False, compare=False)

    def json_schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema of this tool (a fresh copy: callers may change it)."""
        if self._schema_json is None:
            # Building a pydantic JSON schema costs ~1 ms; a model turn asks for it every time.
            self._schema_json = json.dumps(self._build_schema())
        schema: dict[str, Any] = json.loads(self._schema_json)
        return schema

    def _build_schema(self) -> dict[str, Any]:
        if self.params is not None:
            parameters = self.params.model_json_schema()
            parameters.pop("title", None)
        else:
            parameters = {"type": "object", "properties": {}}
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description or self.name,
                "parameters": parameters,
            },
        }


class ToolRegistry:
    """Named tools. Build one per suite; the engine wraps calls with tracing and faults."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}

    def register(
        self,
        name: str,
        fn: Callable[..., Any] | None = None,
        *,
        params: type[BaseModel] | None = None,
        description: str = "",
        timeout_s: float = 10.0,
        blocking: bool = True,
    ) -> Any:
        """Register `fn` as `name`; without `fn`, return a decorator.

        `blocking=False` declares a sync tool that never waits (a lookup, arithmetic): it runs
        on the event loop instead of a worker thread. Leave it True for anything touching files,
        the network or a subprocess.
        """

        def add(f: Callable[..., Any]) -> Callable[..., Any]:
            if name in self._tools:
                raise ValueError(f"tool {name!r} is registered twice")
            doc = description or (f.__doc__ or "").strip().split("\n")[0]
            self._tools[name] = ToolSpec(name, f, params, doc, timeout_s, blocking)
            return f

        return add(fn) if fn is not None else add

    tool = register

    def get(self, name: str) -> ToolSpec:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        return sorted(self._tools)

    def schemas(self, names: Iterable[str]) -> list[dict[str, Any]]:
        return [self._tools[n].json_schema() for n in names if n in self._tools]
