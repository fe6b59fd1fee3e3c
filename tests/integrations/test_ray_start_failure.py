"""A Ray cluster that fails to start: a clean error naming the cause and the way on, and none of
the processes Ray started (GCS, raylet, workers) outlives the failure.

The failure is Ray's own "timed out during startup", forced right where Ray raises it (after
it has started its processes, before its node object exists, so `ray.shutdown()` alone cannot
stop them), instead of waiting the 30 s Ray gives its raylet.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from aeh.cli import main as cli_main
from aeh.integrations import ray as ray_integration


def _ray_processes(pids: set[int]) -> list[str]:
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if ray_integration._alive(pid):
            out.append(f"{pid}: {cmd[:120]}")
    return out


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_ray_start_up_timeout_is_a_clean_error_and_leaves_no_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("a Ray cluster is already running in this process")
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)

    started: list[set[int]] = []

    def timed_out(*args: object, **kwargs: object) -> object:
        started.append(ray_integration._descendants())  # what Ray has started by now
        raise Exception("The current node timed out during startup. This could happen because some of the "
                        "raylet failed to startup or the GCS has become overloaded.")

    monkeypatch.setattr(ray._private.services, "get_node", timed_out)
    before = ray_integration._descendants()
    ray_env = ray_integration._ray_env()
    code = cli_main(["run", "--suite", "toy_math", "--attempts", "1", "--seed", "1", "--executor", "ray",
                     "--ray-workers", "1", "--log-level", "silent", "--db", str(tmp_path / "runs.db")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert "could not start a local Ray cluster: The current node timed out during startup" in err
    assert "none of its processes is left running" in err and "aeh run --resume" in err
    assert started and started[0] - before, "the forced failure came before Ray started anything"
    deadline = time.monotonic() + 10
    while (left := _ray_processes(ray_integration._descendants() - before)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == []
    assert _ray_processes(started[0] - before) == []
    assert not ray.is_initialized()
    # nothing the failed start set stays with the process: Ray's RAY_AUTH_MODE=token made the next
    # cluster this process joined (one without auth) cancel every actor
    assert ray_integration._ray_env() == ray_env


@pytest.mark.slow
def test_stop_ends_a_process_that_ignores_sigterm() -> None:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "import signal, time\n"
                             "signal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
                             "time.sleep(60)"], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        assert proc.pid in ray_integration._descendants()
        assert ray_integration._stop({proc.pid}, grace_s=0.5) == 0
        # killed by the SIGKILL that follows the ignored SIGTERM, not ended by its own sleep
        assert proc.poll() == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]
