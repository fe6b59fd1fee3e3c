"""`ready()`: the viewer has rendered in this kernel — `aeh view` waits for it before it prints its address."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["READY_ENV", "ready"]

#: The file a rendered viewer touches (`aeh view` sets it for its server's kernels).
READY_ENV = "AEH_VIEW_READY"


def ready() -> None:
    """Say the viewer has rendered in this kernel (the last cell of `view.ipynb`); no-op elsewhere."""
    path = os.environ.get(READY_ENV)
    if path:
        Path(path).touch()
