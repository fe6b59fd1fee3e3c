"""`ready()`: the viewer has rendered in this kernel — `aeh view` waits for it before it prints its
address; `load_compare_modules()`: what the clicks need (the scorecard's, compare's and the
trajectory diff's modules), loaded before the first click."""

from __future__ import annotations

import asyncio
import importlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["READY_ENV", "load_compare_modules", "load_scorecard_modules", "ready"]

#: The file a rendered viewer touches (`aeh view` sets it for its server's kernels).
READY_ENV = "AEH_VIEW_READY"
#: What the compare tab loads on its first click (~0.9 s of imports): `aeh.view()` in a notebook
#: loads it with the analysis as soon as the viewer is built (the kernel is idle while
#: the browser draws the run index, so the first paint is no slower: 0.88-0.95 s against 1.00-1.07 s
#: with the thread 3 s later, in JupyterLab on 100k attempts; compare then took 0.36-0.43 s against
#: 0.87-0.93 s). Under `aeh view` a pre-heated kernel loads it in `ready()` before a page asks, and a
#: kernel started for a waiting page does so 3 s later, after answering the page's widget requests.
_COMPARE_MODULES = ("scipy.stats", "statsmodels.stats.multitest")
#: The same imports, bottom-up in steps of at most ~0.1 s CPU, for a kernel's event loop to run one
#: at a time between its messages (a private name another scipy release lacks is skipped).
_COMPARE_STEPS = (
    "scipy._lib._util", "scipy.special", "scipy.linalg", "scipy.fft", "scipy.sparse", "scipy.sparse.linalg",
    "scipy.optimize", "scipy.integrate", "scipy.interpolate", "scipy.spatial.distance",
    "scipy.spatial.transform", "scipy.spatial", "scipy.ndimage", "scipy.stats._distn_infrastructure",
    "scipy.stats._continuous_distns", "scipy.stats.distributions", "scipy.stats._stats_py",
    "scipy.stats._morestats", *_COMPARE_MODULES)
#: What the clicks call from `aeh.analysis` (each name loads its module, and pandas, on first use).
_ANALYSIS_NAMES = ("scorecard_page", "BUCKET_ABBREVIATIONS", "compare", "drift", "gate", "trajectory_diff")
#: Between two steps the loop waits this long, so a message that came during a step is handled
#: before the next one starts (with no wait, the next step was queued ahead of the message).
_STEP_GAP_S = 0.02


def ready() -> None:
    """Say the viewer has rendered in this kernel (the last cell of `view.ipynb`); no-op elsewhere.

    In a kernel Voila pre-heats (no page waits for it yet) it first loads what the clicks need
    (pandas, the analysis, compare's modules), so a click soon after the first paint does not
    wait for imports running in a thread (seen: opening a run took 2.9 s instead of ~1 s when the
    click came while the thread was importing). A kernel started for a waiting page leaves that
    to the thread `aeh.view()` started."""
    path = os.environ.get(READY_ENV)
    if path:
        if os.environ.get("VOILA_PREHEAT") == "True":  # a pool kernel: no page waits for it yet
            _load_compare_modules()
        Path(path).touch()


def load_compare_modules(after_s: float = 0.0) -> None:
    """Import what the compare tab uses, starting `after_s` seconds from now.

    In a kernel (this thread runs an event loop: a Jupyter or Voila kernel's cell) the imports run
    on that loop one small step at a time, so a widget message that arrives meanwhile waits for
    one step, not for all of them: run in a thread, the imports held the interpreter while a click
    was handled (in JupyterLab on 100k attempts, opening a run at once took 0.75 s of wall time for
    0.09 s of CPU). Elsewhere they run in a thread. A click meanwhile imports what it needs itself
    (Python's import lock keeps a module from loading twice)."""
    loop = _this_threads_loop()
    if loop is not None:
        loop.call_later(after_s, _import_step, loop, _compare_steps())
        return
    timer = threading.Timer(after_s, _load_compare_modules)
    timer.name, timer.daemon = "aeh-view-compare-modules", True
    timer.start()


def _this_threads_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running this thread when it is the main one (a kernel's cell); else None."""
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _compare_steps() -> Iterator[None]:
    """Import compare's modules and then the analysis the clicks call, pausing after each."""
    for name in _COMPARE_STEPS:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional dependency missing: the compare tab says so when clicked
            pass
        yield
    # heavy: loaded on first use
    import aeh.analysis

    for name in _ANALYSIS_NAMES:
        getattr(aeh.analysis, name)
        yield


def _import_step(loop: asyncio.AbstractEventLoop, steps: Iterator[None]) -> None:
    """Run one step of `steps` and queue the next behind whatever the loop has to do meanwhile."""
    try:
        next(steps)
    except StopIteration:
        return
    if not loop.is_closed():
        loop.call_later(_STEP_GAP_S, _import_step, loop, steps)


def load_scorecard_modules() -> None:
    """Import what opening a run needs (pandas, the scorecard's analysis; ~0.4 s CPU). In JupyterLab
    on 100k attempts: the cell paints in 1.22-1.34 s instead of 1.01-1.45 s, and a run opened at once
    takes 0.46-0.58 s instead of 0.89-1.86 s (the thread's imports shared the kernel with it)."""
    import aeh.analysis

    for name in ("scorecard_page", "BUCKET_ABBREVIATIONS"):
        getattr(aeh.analysis, name)


def _load_compare_modules() -> None:
    """All of `_compare_steps` at once (in a thread, or in a pre-heated kernel before it is ready)."""
    for _ in _compare_steps():
        pass
