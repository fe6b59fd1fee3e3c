"""Engine-side tool machinery: the registry suites fill, and fault injection."""

from aeh.tools.registry import ToolEnv, ToolRegistry, ToolSpec, ToolUnavailable

__all__ = ["ToolEnv", "ToolRegistry", "ToolSpec", "ToolUnavailable"]
