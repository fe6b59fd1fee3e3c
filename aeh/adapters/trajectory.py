"""Deprecated: trajectory playback moved to `aeh.adapters` (`from aeh.adapters import TrajectoryAdapter`).

Each name read from here warns (DeprecationWarning) and names its new home. Kept for one more release.
"""

from aeh._util.lazy import moved_getattr

__getattr__ = moved_getattr(__name__, dict.fromkeys(["TrajectoryAdapter", "number_attempts"], "aeh.adapters"))
