"""Engine-side tool machinery: the registry suites fill, and fault injection."""

from aeh.tools.arithmetic import evaluate_arithmetic
from aeh.tools._tools import ToolEnv, ToolInputError, ToolRegistry, ToolSpec, ToolUnavailable, WorkspaceEscape

__all__ = [
    "ToolEnv",
    "evaluate_arithmetic",
    "ToolInputError",
    "ToolRegistry",
    "ToolSpec",
    "ToolUnavailable",
    "WorkspaceEscape",
]
