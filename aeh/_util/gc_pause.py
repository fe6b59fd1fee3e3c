"""Pause CPython's cyclic garbage collector around one bounded burst of work.

A report imports some 1,700 modules (papermill, nbconvert, pandas, IPython, the store's polars)
and builds its pages within a second. Every object those imports leave alive survives into the
oldest generation, so the collector keeps re-walking all of them: three full collections and
~400 young ones cost 0.19 s of a 1.2 s smoke report (measured with `gc.callbacks`), and they
free almost nothing — reference counting frees the report's data as it goes, and with the
collector paused a core × 5 report's peak memory grew by 4–8 MB.

Leaving the pause must not undo the saving: every object allocated inside is still counted as
young, so the first allocation after `gc.enable()` starts a young collection that walks all of
them (0.08 s after a core × 5 report, in a process that is about to exit). They are moved to the
oldest generation instead, as a full collection would leave them (`gc.freeze()` then
`gc.unfreeze()`: two list splices, nothing walked), where the next full collection looks at them
if the process lives on. Only when nothing else had frozen objects: `gc.unfreeze()` releases all.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cyclic_gc_paused"]


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Inside: no automatic cyclic collection. After: the collector is as it was, and what was
    allocated inside waits in the oldest generation (nothing is collected on leaving: the next full
    collection does that, if the process lives on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()  # every tracked object to the permanent generation, the young count to 0
            gc.unfreeze()  # … and from there to the oldest generation
        if was_enabled:
            gc.enable()
