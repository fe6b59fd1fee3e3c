"""Deprecated: the span recorder moved to `aeh.trace` (`from aeh.trace import SpanRecorder`).

Each name read from here warns (DeprecationWarning) and names its new home. Kept for one more release.
"""

from aeh._util.lazy import moved_getattr

__getattr__ = moved_getattr(__name__, dict.fromkeys(["SpanHandle", "SpanRecorder", "SpanSink", "new_id"], "aeh.trace"))
