"""The pytest plugin that reports each test's outcome to aeh over a pipe aeh owns.

Loaded by the grading run with `-p` before any graded code is imported; it imports nothing of
aeh (it runs in the graded process). `$AEH_VERDICT_FD` names two descriptors: the write end of
the result pipe, and the read end of a pipe holding a one-time key aeh wrote before the run
started. The variable is removed at once, the key is read and its pipe closed (so the key is in
this plugin's memory only, not in the environment or any file), and the result descriptor is not
inherited by anything the graded code starts. Every line carries the key: one JSON line per test
phase, one per failed collection, and a last line with pytest's exit status; then the descriptor
is closed, so nothing that runs later (an `atexit` hook) can write to it. aeh treats a line
without the key, a second report for a phase, or anything after the last line, as forged.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

_fd: int | None = None
_key = ""


def _open() -> tuple[int | None, str]:
    raw = os.environ.pop("AEH_VERDICT_FD", None)
    if raw is None:
        return None, ""
    fd, key_fd = (int(part) for part in raw.split(","))
    os.set_inheritable(fd, False)
    key = b""
    while chunk := os.read(key_fd, 256):
        key += chunk
    os.close(key_fd)
    return fd, key.decode()


def _send(record: dict[str, Any]) -> None:
    if _fd is None:
        return
    data = (json.dumps({**record, "key": _key}) + "\n").encode()
    while data:
        data = data[os.write(_fd, data):]


def pytest_sessionstart(session: Any) -> None:
    _send({"started": True})


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _send({"collect_error": report.nodeid})


def pytest_runtest_logreport(report: Any) -> None:
    _send({"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome})


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    global _fd
    _send({"exitstatus": int(session.exitstatus), "collected": int(session.testscollected)})
    if _fd is not None:
        os.close(_fd)
        _fd = None


_fd, _key = _open()
