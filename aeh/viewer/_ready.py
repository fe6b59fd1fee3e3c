"""`ready()`: the viewer has rendered in this kernel — `aeh view` waits for it before it prints its
address; `load_compare_modules()`: what the compare tab needs, loaded before its first click."""

from __future__ import annotations

import importlib
import os
import threading
from pathlib import Path

__all__ = ["READY_ENV", "load_compare_modules", "ready"]

#: The file a rendered viewer touches (`aeh view` sets it for its server's kernels).
READY_ENV = "AEH_VIEW_READY"
#: What the compare tab loads on its first click (~0.9 s of imports): `aeh.view()` loads it in a
#: thread a few seconds after the viewer is built (after the first paint, which it would slow), so
#: the click costs the comparison only.
_COMPARE_MODULES = ("scipy.stats", "statsmodels.stats.multitest")


def ready() -> None:
    """Say the viewer has rendered in this kernel (the last cell of `view.ipynb`); no-op elsewhere."""
    path = os.environ.get(READY_ENV)
    if path:
        Path(path).touch()


def load_compare_modules(after_s: float = 3.0) -> None:
    """Import what the compare tab uses in a thread, `after_s` seconds from now (a click meanwhile
    imports what it needs itself; Python's import lock keeps a module from loading twice)."""
    timer = threading.Timer(after_s, _load_compare_modules)
    timer.name, timer.daemon = "aeh-view-compare-modules", True
    timer.start()


def _load_compare_modules() -> None:
    import aeh.analysis

    for name in ("compare", "drift", "gate"):  # each loads its module on first use
        getattr(aeh.analysis, name)
    for name in _COMPARE_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional dependency missing: the compare tab says so when clicked
            continue
