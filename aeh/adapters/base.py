"""Deprecated: the adapter registry moved to `aeh.adapters` (`from aeh.adapters import adapters`).

Adapters written against this module keep loading; each name read from here warns
(DeprecationWarning) and names its new home. Kept for one more release.
"""

from aeh._util.lazy import moved_getattr

__getattr__ = moved_getattr(__name__, dict.fromkeys(
    ["Adapter", "AdapterFactory", "adapter_names", "adapters", "make_adapter"], "aeh.adapters"))
