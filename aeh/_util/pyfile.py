"""Import a Python file by its path (a suite's suite.py, an agent named as file.py:function)."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib.util
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_IMPORT_TIME_LIMIT", "ImportTimedOut", "NotAPythonFile", "import_file", "import_time_limit"]

#: Seconds a suite.py may take to import (`AEH_SUITE_IMPORT_TIMEOUT`): long enough for heavy
#: imports (torch, transformers), short enough that a file looping at import does not hang a run.
DEFAULT_IMPORT_TIME_LIMIT = 120.0


class NotAPythonFile(ImportError):
    """The path cannot be loaded as Python source at all (no import machinery for it)."""


class ImportTimedOut(BaseException):
    """The file was still importing when its time limit ran out.

    A BaseException, like KeyboardInterrupt, so that an `except Exception` in the file being
    imported does not swallow it and loop on.
    """


def import_time_limit() -> float:
    """The suite.py import limit in seconds: `AEH_SUITE_IMPORT_TIMEOUT`, 120 by default."""
    raw = os.environ.get("AEH_SUITE_IMPORT_TIMEOUT", "").strip()
    try:
        value = float(raw) if raw else DEFAULT_IMPORT_TIME_LIMIT
    except ValueError:
        value = DEFAULT_IMPORT_TIME_LIMIT
    return value if 0 < value < float("inf") else DEFAULT_IMPORT_TIME_LIMIT


@contextlib.contextmanager
def _deadline(seconds: float | None) -> Iterator[None]:
    """Raise ImportTimedOut in this thread after `seconds`, from whichever thread imports.

    The main thread uses SIGALRM (it also ends a blocking system call); an alarm already set
    (pytest-timeout's, say) is put back with the time it had left. Any other thread gets a
    watchdog thread that raises ImportTimedOut in it (`PyThreadState_SetAsyncExc`) once the time
    is up, again every few milliseconds until the import has stopped.
    """
    if seconds is None:
        yield
    elif threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        with _alarm(seconds):
            yield
    else:
        with _watchdog(seconds):
            yield


#: How often the watchdog raises again in a thread that is still importing after its time.
_REPEAT_S = 0.05


@contextlib.contextmanager
def _watchdog(seconds: float) -> Iterator[None]:
    target = threading.get_ident()
    done = threading.Event()
    fired = threading.Event()

    def watch() -> None:
        if done.wait(seconds):
            return
        while not done.is_set():
            fired.set()
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target), ctypes.py_object(ImportTimedOut))
            done.wait(_REPEAT_S)

    watcher = threading.Thread(target=watch, name="aeh-import-deadline", daemon=True)
    watcher.start()
    try:
        yield
    except ImportTimedOut:
        raise ImportTimedOut(seconds) from None
    finally:
        done.set()
        watcher.join()
        if fired.is_set():  # one raised just as the import ended may still be pending: drop it
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target), None)


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    started = time.monotonic()
    owner_fired = False

    def expired(signum: int, frame: Any) -> None:
        nonlocal owner_fired
        elapsed = time.monotonic() - started
        if elapsed < seconds and not owner_fired:
            owner_fired = True  # the alarm set before ours was due first: it is its owner's
            signal.setitimer(signal.ITIMER_REAL, max(seconds - elapsed, 0.001))
            if callable(previous):
                previous(signum, frame)
            return
        raise ImportTimedOut(seconds)

    previous = signal.signal(signal.SIGALRM, expired)
    old_delay, old_interval = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, old_delay) if old_delay else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay and not owner_fired:
            left = old_delay - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), old_interval)


def import_file(path: Path, prefix: str, *, time_limit: float | None = None) -> types.ModuleType:
    """Execute `path` as a module registered in sys.modules under a name unique to the path.

    Registered before it runs, because dataclasses and pydantic look their module up while the
    file executes; removed again if it fails, so a fixed file imports afresh. With `time_limit`
    (seconds), an import still running then is stopped with ImportTimedOut.
    """
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    name = f"{prefix}_{path.parent.name}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise NotAPythonFile(f"{path} is not a Python file", path=str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with _deadline(time_limit):
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
