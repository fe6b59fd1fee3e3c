"""The pytest plugin that reports each test's outcome to aeh over a pipe aeh owns.

Loaded by the grading run with `-p` before any graded code is imported; it imports nothing of
aeh (it runs in the graded process). The write end of the pipe arrives as the descriptor in
`$AEH_VERDICT_FD`: the variable is removed at once and the descriptor is not inherited by
anything the graded code starts. One JSON line per test phase, one per failed collection, and a
last line with pytest's exit status; then the descriptor is closed, so nothing that runs later
(an `atexit` hook) can write to it. aeh treats a second report for a phase, or anything after
the last line, as forged.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

_fd: int | None = None


def _open() -> int | None:
    raw = os.environ.pop("AEH_VERDICT_FD", None)
    if raw is None:
        return None
    fd = int(raw)
    os.set_inheritable(fd, False)
    return fd


def _send(record: dict[str, Any]) -> None:
    if _fd is None:
        return
    data = (json.dumps(record) + "\n").encode()
    while data:
        data = data[os.write(_fd, data):]


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


_fd = _open()
