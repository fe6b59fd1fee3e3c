"""`ready()`: the viewer has rendered in this kernel — `aeh view` waits for it before it prints its address."""

from __future__ import annotations

import importlib
import os
import threading
from pathlib import Path

__all__ = ["READY_ENV", "ready"]

#: The file a rendered viewer touches (`aeh view` sets it for its server's kernels).
READY_ENV = "AEH_VIEW_READY"
#: What the compare tab loads on its first click (~0.9 s of imports): a served kernel loads it once the
#: viewer has rendered, so the click costs the comparison only.
_COMPARE_MODULES = ("scipy.stats", "statsmodels.stats.multitest")


def ready() -> None:
    """Say the viewer has rendered in this kernel (the last cell of `view.ipynb`); no-op elsewhere."""
    path = os.environ.get(READY_ENV)
    if path:
        Path(path).touch()
        threading.Thread(target=_load_compare_modules, name="aeh-view-warm", daemon=True).start()


def _load_compare_modules() -> None:
    import aeh.analysis

    for name in ("compare", "drift", "gate"):  # each loads its module on first use
        getattr(aeh.analysis, name)
    for name in _COMPARE_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional dependency missing: the compare tab says so when clicked
            continue
