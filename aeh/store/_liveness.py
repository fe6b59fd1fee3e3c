"""Is a `running` run still alive? Its owner process and heartbeat say.

A run that is killed (SIGKILL, power loss) never stores its final status. Readers show such a
run as `stale`: its owner process is gone on this host, or — when the owner ran elsewhere or is
unknown — its last heartbeat is older than `STALE_AFTER_S`. A run with neither (stored before
aeh recorded them) keeps its stored status.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

from aeh.models import RunInfo

__all__ = ["HEARTBEAT_S", "STALE_AFTER_S", "executing", "host_name", "owner_alive", "run_is_dead",
           "with_liveness"]

#: How often a running run refreshes `heartbeat_at`.
HEARTBEAT_S = 10.0
#: A heartbeat older than this marks a run dead when its owner cannot be checked directly.
STALE_AFTER_S = 300.0


#: Runs this process is executing right now: a run owned by this very process (a notebook
#: kernel, a test) whose store write failed is dead as soon as it is no longer in here.
_EXECUTING: set[str] = set()


@contextmanager
def executing(run_id: str) -> Iterator[None]:
    """Marks `run_id` as executing in this process for the duration of a `with` block."""
    _EXECUTING.add(run_id)
    try:
        yield
    finally:
        _EXECUTING.discard(run_id)


def host_name() -> str:
    """This machine's name, as stored in `runs.owner_host`."""
    return socket.gethostname()


def owner_alive(pid: int | None, host: str | None) -> bool | None:
    """True/False when `pid` on `host` can be checked from here; None when it cannot."""
    if pid is None or host != host_name():
        return None
    try:
        os.kill(pid, 0)  # signal 0: existence check only
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return True


def _age_s(stamp: str | None, now: dt.datetime) -> float | None:
    if not stamp:
        return None
    try:
        then = dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if then.tzinfo is None:
        then = then.replace(tzinfo=dt.UTC)
    return (now - then).total_seconds()


def run_is_dead(info: RunInfo, now: dt.datetime | None = None, stale_after_s: float = STALE_AFTER_S) -> bool:
    """Whether a run stored as `running` has no live process behind it."""
    if info.status not in ("running", "stale"):
        return False
    if info.owner_pid == os.getpid() and info.owner_host == host_name():
        return info.run_id not in _EXECUTING
    alive = owner_alive(info.owner_pid, info.owner_host)
    if alive is not None:
        return not alive
    # No heartbeat (runs stored before aeh recorded one): nothing to judge by, trust the status.
    age = _age_s(info.heartbeat_at, now or dt.datetime.now(dt.UTC))
    return age is not None and age > stale_after_s


def with_liveness(info: RunInfo) -> RunInfo:
    """`info`, with status `stale` when it is stored as running but nobody runs it."""
    if info.status == "running" and run_is_dead(info):
        return info.model_copy(update={"status": "stale"})
    return info
