"""Servers a test started: waiting until one answers, and stopping it, politely first, then for good."""

from __future__ import annotations

import subprocess
import time
import urllib.request


def wait_until_answering(url: str, proc: subprocess.Popen[bytes], timeout: float = 90) -> bool:
    """True once `url` answers; False when `proc` exits or `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.3)


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Terminate `proc`, and kill it if it has not exited within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
