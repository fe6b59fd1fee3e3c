"""Engine-side tool machinery: the registry suites fill, and fault injection."""

from aeh.tools._tools import (
    ToolEnv,
    ToolInputError,
    ToolRegistry,
    ToolSpec,
    ToolUnavailable,
    WorkspaceEscape,
    path_escape,
    resolve_in_workspace,
)
from aeh.tools.arithmetic import evaluate_arithmetic

__all__ = [
    "ToolEnv",
    "ToolInputError",
    "ToolRegistry",
    "ToolSpec",
    "ToolUnavailable",
    "WorkspaceEscape",
    "evaluate_arithmetic",
    "path_escape",
    "resolve_in_workspace",
]
