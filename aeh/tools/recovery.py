"""Deprecated: recovery curves moved to `aeh.experiments`, their chart to `aeh.report.views` and
`recovery_by_fault` to `aeh.analysis`.

Each name read from here warns (DeprecationWarning) and names its new home. Kept for one more release.
"""

from aeh._util.lazy import moved_getattr

__getattr__ = moved_getattr(__name__, {
    **dict.fromkeys(["format_recovery_table", "recovery_curve", "recovery_curve_async"], "aeh.experiments"),
    "plot_recovery_curve": "aeh.report.views",
    "recovery_by_fault": "aeh.analysis",
})
