"""Stopping a server a test started: politely first, then for good."""

from __future__ import annotations

import subprocess


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Terminate `proc`, and kill it if it has not exited within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
