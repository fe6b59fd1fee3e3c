"""Deprecated: the tool set moved to `aeh.tools` (`from aeh.tools import ToolRegistry`).

Suites written against this module keep loading; each name read from here warns
(DeprecationWarning) and names its new home. Kept for one more release.
"""

from aeh._util.lazy import moved_getattr

__getattr__ = moved_getattr(__name__, dict.fromkeys(
    ["ToolEnv", "ToolInputError", "ToolRegistry", "ToolSpec", "ToolUnavailable", "WorkspaceEscape", "path_escape",
     "resolve_in_workspace"], "aeh.tools"))
