"""A Ray head on loopback for tests: `ray start --head --block` as a child of the test process.

The raylet waits a fixed time for its agents (Python processes) to write their port files,
which a loaded 2-core machine misses ("The current node timed out during startup"); `ray start`
takes fixed agent ports, a longer wait and no log monitor, and is tried three times.
With `--block` the head's processes are its children: stopping it stops them, and whatever
outlives it is stopped by process id.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from aeh.integrations import ray as ray_integration

NO_IRI = Path(__file__).with_name("ray_no_iri")
"""A directory whose `rfc3987_syntax` cannot be imported, first on the head's PYTHONPATH."""


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _start(port: int, temp_dir: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    metrics, agent_grpc, agent_http, runtime_env = free_ports(4)
    ray_cli = Path(sys.executable).with_name("ray")
    with log.open("wb") as out:  # the head keeps its own copy of the file
        return subprocess.Popen(
            [str(ray_cli), "start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
             "--include-dashboard=false", "--num-cpus", "2", "--disable-usage-stats", "--temp-dir", temp_dir, "--include-log-monitor=false",
             "--metrics-export-port", str(metrics), "--dashboard-agent-grpc-port", str(agent_grpc),
             "--dashboard-agent-listen-port", str(agent_http), "--runtime-env-agent-port", str(runtime_env),
             "--block"],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env})


def _wait_started(head: subprocess.Popen[bytes], log: Path, timeout_s: float = 150) -> str:
    """'' once the head is up, else what it printed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        out = log.read_text(errors="replace")
        if "Ray runtime started" in out:
            return ""
        if head.poll() is not None:
            return out
        time.sleep(0.5)
    return log.read_text(errors="replace") or "no start within the time limit"


def _stop(head: subprocess.Popen[bytes]) -> None:
    started = ray_integration._descendants()  # the head and everything it started
    head.terminate()  # `ray start --block` stops its processes when it ends
    try:
        head.wait(timeout=30)
    except subprocess.TimeoutExpired:
        head.kill()
        head.wait(timeout=10)
    assert ray_integration._stop({pid for pid in started if ray_integration._alive(pid)}) == 0


@contextmanager
def loopback_head(**env: str) -> Iterator[int]:
    """A 2-CPU Ray head listening on 127.0.0.1 only; yields its GCS port. `env`: extra for the head."""
    # A longer wait for the agents' port files (where this Ray reads it) and no log monitor: one
    # Python process fewer importing Ray at start-up.
    # And no IRI checker for jsonschema: every Ray process imports jsonschema, which imports
    # rfc3987-syntax (a dev dependency of the notebook stack) if it can, and that builds a grammar
    # for ~2 s of CPU (6 s on a loaded machine) in each of the head's half-dozen processes.
    head_env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
                "RAY_agent_register_timeout_ms": "120000",
                "PYTHONPATH": os.pathsep.join(filter(None, [str(NO_IRI), os.environ.get("PYTHONPATH")])), **env}
    with tempfile.TemporaryDirectory(prefix="r", dir="/tmp") as temp_dir:  # short: Ray's socket paths
        for attempt in range(3):  # a loaded machine may still miss one of Ray's deadlines
            (port,) = free_ports(1)
            log = Path(temp_dir) / f"head-{attempt}.log"
            head = _start(port, temp_dir, head_env, log)
            try:
                failure = _wait_started(head, log)
            except BaseException:
                _stop(head)
                raise
            if not failure:
                break
            _stop(head)
            if attempt == 2:
                pytest.fail(f"`ray start --head` did not start: {failure[-2000:]}")
        try:
            yield port
        finally:
            _stop(head)


@contextmanager
def driver_node_ip(*, loopback: bool) -> Iterator[Any]:
    """Ray, imported, with its driver resolving node addresses to 127.0.0.1 (`loopback`) or to the
    machine's outward IP; yields the `ray` module and restores the setting after.

    Ray reads RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER once, when it is first imported, into
    `ray_constants.ENABLE_RAY_CLUSTER`: setting the variable cannot help once any earlier test in
    the same process has imported Ray, so the constant itself is set here.
    """
    ray = pytest.importorskip("ray")
    constants = ray._private.ray_constants
    saved = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = not loopback
    try:
        yield ray
    finally:
        constants.ENABLE_RAY_CLUSTER = saved
