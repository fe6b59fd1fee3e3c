"""What the viewer's clicks need is imported before the first click without making that click wait:
in a kernel, one small step at a time on its event loop; elsewhere, in a thread."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading

import pytest

from aeh.viewer import _ready


def _steps(log: list[str], message: socket.socket) -> object:
    for n in range(1, 5):
        log.append(f"step {n}")
        if n == 2:  # a widget message arrives while step 2 runs
            message.send(b"click")
        yield


def test_in_a_kernel_a_message_waits_for_one_step_not_for_all(monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[str] = []
    kernel_end, browser_end = socket.socketpair()
    monkeypatch.setattr(_ready, "_compare_steps", lambda: _steps(log, browser_end))
    threads = set(threading.enumerate())

    async def kernel() -> None:
        loop = asyncio.get_running_loop()
        handled = asyncio.Event()

        async def dispatch(message: str) -> None:  # a kernel's handler, a few loop turns deep
            await asyncio.sleep(0)
            log.append(message)
            handled.set()

        def on_message() -> None:
            tasks.add(loop.create_task(dispatch(kernel_end.recv(16).decode())))

        tasks: set[asyncio.Task[None]] = set()
        loop.add_reader(kernel_end.fileno(), on_message)
        _ready.load_compare_modules(0.0)
        assert set(threading.enumerate()) == threads  # no thread: the loop runs the steps
        await asyncio.wait_for(handled.wait(), 30)
        while len(log) < 5:
            await asyncio.sleep(0.01)
        loop.remove_reader(kernel_end.fileno())

    try:
        asyncio.run(kernel())
    finally:
        kernel_end.close()
        browser_end.close()
    assert log == ["step 1", "step 2", "click", "step 3", "step 4"]


@pytest.mark.slow
def test_in_a_kernel_the_real_steps_import_what_compare_needs() -> None:
    probe = """
import asyncio, sys, threading
from aeh.viewer._ready import load_compare_modules

async def kernel():
    load_compare_modules(0.0)
    threads, ticks = threading.active_count(), 0
    while "aeh.analysis._compare" not in sys.modules or "aeh.analysis._trajectory_diff" not in sys.modules:
        await asyncio.sleep(0)
        ticks += 1
    await asyncio.sleep(0.2)  # the last step has run
    print(threads, ticks > 10, "scipy.stats" in sys.modules, "statsmodels.stats.multitest" in sys.modules)

asyncio.run(kernel())
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == 0, done.stderr[-2000:]
    # one thread (this one); the loop ran other work between the imports; all of them loaded
    assert done.stdout.split() == ["1", "True", "True", "True"]


def test_outside_a_kernel_a_thread_imports_them(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    monkeypatch.setattr(_ready, "_load_compare_modules", lambda: ran.append(threading.current_thread().name))
    _ready.load_compare_modules(0.0)
    for thread in threading.enumerate():
        if thread.name == "aeh-view-compare-modules":
            thread.join(30)
    assert ran == ["aeh-view-compare-modules"]
