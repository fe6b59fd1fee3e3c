"""Engine-side tool machinery: the registry suites fill, and fault injection."""

from aeh.tools.registry import ToolEnv, ToolInputError, ToolRegistry, ToolSpec, ToolUnavailable, WorkspaceEscape

__all__ = ["ToolEnv", "ToolInputError", "ToolRegistry", "ToolSpec", "ToolUnavailable", "WorkspaceEscape"]
