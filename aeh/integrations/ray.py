"""Scale-out on Ray: a run's attempts go to Ray workers, results come back to this process.

Each worker is a Ray actor that rebuilds the suite from its spec and the adapter from its name
and options, then builds its `AttemptSetup` with the same `build_attempt_setup` the local
scheduler uses and runs the same `run_attempt`: nothing unpicklable (clients, locks, the store)
crosses the wire, only plain specs out and `(Attempt, spans)` back. The driver is the only
writer of the store, so progress, resume, the heartbeat and Ctrl-C behave as in a local run.

A worker gets its share of the pending pairs in chunks of `concurrency` (one Ray call per
chunk, not per attempt: a call costs milliseconds) and runs each chunk's attempts concurrently
on its own event loop; a second chunk waits queued on the actor so it never idles.

Starting a worker process (and importing aeh, the suite and the adapter there) costs about a
second, so actors outlive the run: they go back to a pool of this process and the next run on
the same Ray connection takes them, sending its own spec with its chunks. The connection aeh
opened (a local cluster it started) stays open for them too; `stop_workers` ends both.
Needs the `ray` extra: `pip install -e '.[ray]'` in a checkout, `pip install 'aeh-harness[ray]'` otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aeh._util.hosts import is_loopback
from aeh._util.optional import require_extra
from aeh.errors import AehError
from aeh.integrations._workers import (
    Result,
    RunWorker,
    WorkerSpec,
    chunks,
    most_workers,
    price_fields,
    replay,
    worker_parts,
)
from aeh.models import Attempt, RunInfo, Span, Task
from aeh.trace import SpanSink

__all__ = ["RayExecutor", "RayStartError", "RayWorkerError", "WorkerSpec", "price_fields", "require_ray",
           "idle_workers", "stop_workers"]


class RayWorkerError(AehError):
    """A Ray worker could not build the run (suite, adapter) or died; the run stays resumable."""


class RayStartError(RayWorkerError):
    """The Ray cluster did not start (or could not be joined); nothing of it is left running."""


def require_ray() -> None:
    """MissingExtraError (exit 2, with the install command) when Ray is not installed."""
    require_extra("the Ray executor (--executor ray)", ("ray",), "ray")


class AttemptWorker(RunWorker):
    """The Ray actor: started once per driver process and reused by every run of it.

    A run's spec comes with each chunk (one object in Ray's store, shared by the run's calls), so
    a reused actor needs no set-up call: the first chunk of a new run closes the previous run's
    setup, if any, and builds this one's (`RunWorker`, shared with the local worker processes).
    """

    def identity(self) -> tuple[str, int]:
        """This actor's id and its process id (the process lives as long as the actor)."""
        import ray

        return str(ray.get_runtime_context().get_actor_id()), os.getpid()


@dataclass
class _Pool:
    """Idle actors of this driver process, for the Ray connection (job) they were started in."""

    job: tuple[str, ...] | None = None
    """The connection the idle actors belong to (`_connection`)."""
    idle: list[Any] = field(default_factory=list)
    connected_here: str | None = None
    """The address (or "" for a local cluster) aeh connected to itself; None: the caller's `ray.init`."""
    env_before: dict[str, str] = field(default_factory=dict)
    """The process's RAY_* variables before aeh connected (`_restore_ray_env` when it disconnects)."""


_pool = _Pool()


def _connection(ray: Any) -> tuple[str, ...]:
    """What tells this Ray connection from any earlier one of the process.

    A job id alone does not: every new cluster numbers its jobs from 01000000 again, so a run
    after a `ray.shutdown()` and a fresh `ray.init` would take actor handles of a dead cluster.
    The driver's node id is drawn at random when a node starts.
    """
    context = ray.get_runtime_context()
    return (str(context.gcs_address), str(context.get_node_id()), str(context.get_job_id()))


def _lease(ray: Any, count: int) -> list[Any]:
    """`count` actors: idle ones of this connection first, new ones for the rest."""
    job = _connection(ray)
    if _pool.job != job:  # a new connection: handles of the old one are void
        _pool.job, _pool.idle = job, []
    taken, _pool.idle = _pool.idle[:count], _pool.idle[count:]
    remote: Any = ray.remote(AttemptWorker)
    # One chunk at a time per actor: the chunk's own attempts are its concurrency.
    return taken + [remote.options(num_cpus=1, max_concurrency=1).remote() for _ in range(count - len(taken))]


def _give_back(ray: Any, actors: list[Any]) -> None:
    if _pool.job == _connection(ray):
        _pool.idle.extend(actors)


def idle_workers() -> list[tuple[str, int]]:
    """(actor id, process id) of each idle Ray worker this process keeps for its next runs."""
    if not _pool.idle:
        return []
    import ray

    if not ray.is_initialized() or _connection(ray) != _pool.job:
        return []
    return [(str(actor), int(pid)) for actor, pid in ray.get([a.identity.remote() for a in _pool.idle], timeout=60)]


def stop_workers() -> None:
    """Stop the idle Ray workers; and the Ray connection (a local cluster) aeh opened, if it did.

    Runs keep their workers (and the local cluster aeh started) for the next run of this process,
    which then pays no start-up; they all end with the process anyway. Call this to free their CPUs
    sooner, or after editing a suite or adapter's code, which a running worker has already imported.
    """
    actors, _pool.idle, _pool.job = _pool.idle, [], None
    if not actors and _pool.connected_here is None:
        return
    import ray

    for actor in actors:
        with contextlib.suppress(Exception):
            ray.kill(actor)
    if _pool.connected_here is not None:
        _pool.connected_here = None
        ray.shutdown()
        _restore_ray_env(_pool.env_before)


@dataclass
class RayExecutor:
    """Runs a run's pending attempts on Ray actors (`RunWiring.executor`)."""

    spec: WorkerSpec
    address: str | None = None
    """`ray://host:10001`, `host:port`, `auto`, or None: `RAY_ADDRESS`, else a local cluster started here."""
    workers: int | None = None
    """Actors to use (one CPU each); None: one per CPU of the cluster."""
    sinks: list[SpanSink] = field(default_factory=list)
    """The driver's span sinks (log lines, user sinks): they see each attempt's spans as it returns."""
    _health: list[dict[str, Any]] = field(default_factory=list, init=False, repr=False)

    def worker_health(self) -> list[dict[str, Any]]:
        """Each actor's loop health in the last run, as the actor closed it."""
        return list(self._health)

    async def run(self, info: RunInfo, pending: list[tuple[Task, int]],
                  deliver: Callable[[Attempt, list[Span]], None]) -> None:
        """Spread `pending` over the workers and `deliver` every attempt as its chunk returns."""
        self._health = []
        if not pending:
            return
        require_ray()
        if not (self.address or os.environ.get("RAY_ADDRESS")):
            # A cluster started here listens on loopback only. Ray reads this when it is imported
            # (it is how Ray keeps single-machine clusters local on macOS and Windows).
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        import ray  # heavy: loaded on first use

        _connect(ray, self.address, self.workers)
        actors: list[Any] = []
        inflight: dict[asyncio.Future[Any], tuple[Any, int]] = {}
        done = False
        try:
            count = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[no-untyped-call]  # ray leaves cluster_resources() unannotated
            if self.workers is None:  # one per CPU, but no more than the connection limits can share
                count = min(count, most_workers(self.spec) or count)
            count = min(count, len(pending))
            actors = _lease(ray, count)
            # each actor runs --concurrency attempts at once, with its share of the connection limits
            parts = worker_parts(self.spec, count, share_concurrency=False)
            run_refs = [ray.put((part, info.run_id, info.seed)) for part in parts]
            size = max(1, self.spec.concurrency)
            queues = [chunks([(t.id, i) for t, i in pending[k::count]], size) for k in range(count)]

            def submit(k: int) -> None:
                if queues[k]:
                    ref = actors[k].run.remote(run_refs[k], queues[k].popleft())
                    inflight[asyncio.wrap_future(ref.future())] = (ref, k)

            for k in range(count):
                submit(k)
                submit(k)  # queued on the actor, so it starts the moment the first chunk ends
            while inflight:
                ready, _ = await asyncio.wait(list(inflight), return_when=asyncio.FIRST_COMPLETED)
                for future in ready:
                    _, k = inflight.pop(future)
                    for record, spans in _result(future):
                        replay(self.sinks, spans)
                        deliver(record, spans)
                    submit(k)
            closed = await asyncio.wait_for(asyncio.gather(*(asyncio.wrap_future(a.close.remote().future())
                                                             for a in actors)), timeout=60)
            self._health = [dict(health) for health in closed if health]  # each actor's loop stalls
            done = True
        finally:
            if done:
                _give_back(ray, actors)
            else:  # interrupted or failed: chunks may still be queued on them
                for ref, _ in inflight.values():
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=False)
                for actor in actors:
                    with contextlib.suppress(Exception):
                        ray.kill(actor)


def _connect(ray: Any, address: str | None, workers: int | None) -> None:
    """Join the cluster at `address` (or RAY_ADDRESS), or start a local one, unless connected already.

    The connection stays open for the next run of this process (its workers live in it); a run
    naming another cluster than the one aeh joined before closes that connection first.

    A start that fails (Ray's raylet has 30 s to register, which a loaded machine can miss) is a
    RayStartError, and every process the attempt left behind (GCS, raylet, workers) is stopped:
    Ray's own `shutdown` cannot, as its node object was never made.
    """
    target = address or os.environ.get("RAY_ADDRESS") or None
    if ray.is_initialized():
        if _pool.connected_here in (None, target or ""):
            return  # the caller's own `ray.init`, or the cluster this process joined for an earlier run
        stop_workers()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves the machine
    quiet: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    before = _descendants()
    ray_env = _ray_env()
    try:
        if target is not None:
            _join_this_machine(ray, target)
            ray.init(address=target, **quiet)
        else:
            # A cluster of this machine only, without the dashboard's web server; every CPU of it,
            # so a later run of this process may ask for more workers than this one.
            cpus = max(workers, os.cpu_count() or 1) if workers else None
            ray.init(num_cpus=cpus, include_dashboard=False, **quiet)
    except Exception as exc:  # noqa: BLE001 — Ray raises bare Exception, ConnectionError, RuntimeError …
        with contextlib.suppress(Exception):
            ray.shutdown()
        left = _stop(_descendants() - before)
        _restore_ray_env(ray_env)  # e.g. RAY_AUTH_MODE=token, which a later cluster without auth refuses
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        where = f"the Ray cluster at {target}" if target else "a local Ray cluster"
        raise RayStartError(
            f"could not start {where}: {cause}"
            + (f" ({left} of its processes would not stop)" if left else "; none of its processes is left running")
            + " — retry when the machine is less loaded, start Ray yourself (`ray start --head`) and pass "
            "--ray-address auto, or run without --executor ray; the run is stored and resumes with "
            "`aeh run --resume RUN_ID`") from None
    _pool.connected_here, _pool.env_before = target or "", ray_env


def _ray_env() -> dict[str, str]:
    """The process's RAY_* environment variables."""
    return {k: v for k, v in os.environ.items() if k.startswith("RAY_")}


def _restore_ray_env(saved: dict[str, str]) -> None:
    """The process's RAY_* variables as they were before aeh's `ray.init` (one that failed, or a
    connection aeh now closes), and Ray's cached view of them: starting or joining a cluster with
    token auth turns it on for the process (RAY_AUTH_MODE=token, read into Ray's config and token
    cache), and a cluster joined later without auth would then cancel every actor it creates."""
    now = _ray_env()
    if now == saved:
        return
    for key in now.keys() - saved.keys():
        del os.environ[key]
    os.environ.update(saved)
    # what Ray itself calls after changing the auth mode (`authentication_token_setup`), and
    # resets in its own tests; private, so a Ray without it is left as it is
    with contextlib.suppress(Exception):
        from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

        Config.initialize("")
        AuthenticationTokenLoader.instance().reset_cache()


def _join_this_machine(ray: Any, target: str) -> None:
    """Let Ray join a cluster of this machine at a loopback address (`ray start --head` here).

    Two things in Ray stop it. It rewrites a loopback address to this machine's outward IP (so
    that other nodes could use it), and a head started on loopback only
    (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 ray start --node-ip-address 127.0.0.1`) does not
    answer there: when the cluster answers on loopback and not on the outward IP, the address
    is kept. And a head started with a token present (`~/.ray/auth_token`) enables token
    authentication, which Ray's driver turns on by itself only for `address="auto"`: for a
    cluster of this machine the same rule applies to its explicit address.
    """
    services = ray._private.services
    address = target
    if target == "auto":
        with contextlib.suppress(Exception):  # no cluster recorded: Ray's own error follows
            address = services.get_ray_address_from_environment("auto", None) or target
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    if address.startswith("ray://") or not port.isdigit() or not is_loopback(host):
        return
    if os.environ.get("RAY_AUTH_MODE") is None:
        with contextlib.suppress(ImportError):  # Ray before token authentication
            from ray._private.authentication.authentication_token_setup import (
                maybe_enable_token_auth_if_token_available,
            )
            maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    outward = services.get_node_ip_address()
    if not is_loopback(outward) and not _answers(outward, int(port)) and _answers(host, int(port)):
        # Read where Ray resolves a node's IP: its import-time setting, so set here, not in the env.
        ray._private.ray_constants.ENABLE_RAY_CLUSTER = False


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def _descendants() -> set[int]:
    """Process ids of every descendant of this process (children, their children …)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="utf-8") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = [os.getpid()]
    while todo:
        for pid in children.get(todo.pop(), []):
            if pid not in out:
                out.add(pid)
                todo.append(pid)
    return out


def _stop(pids: set[int], grace_s: float = 5.0) -> int:
    """SIGTERM `pids`, then SIGKILL what still runs after `grace_s`; how many would not go.

    Ray's `Popen` objects for them are reaped through `poll()`, so they record the exit and do
    not warn "still running" when the failed node is garbage-collected.
    """
    popens = {o.pid: o for o in _popens() if o.pid in pids}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace_s
        while pids and time.monotonic() < deadline:
            for pid in list(pids):
                with contextlib.suppress(ChildProcessError, OSError):
                    if pid in popens:
                        popens[pid].poll()
                    else:
                        os.waitpid(pid, os.WNOHANG)  # reap our own children, or they stay zombies
                if not _alive(pid):
                    pids.discard(pid)
            time.sleep(0.05)
    for popen in _popens():  # Ray's short-lived helpers that had already exited
        if popen.returncode is None and not _alive(popen.pid):
            popen.poll()
    return len(pids)


def _popens() -> list[subprocess.Popen[Any]]:
    return [o for o in gc.get_objects() if isinstance(o, subprocess.Popen)]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _result(future: asyncio.Future[Any]) -> list[Result]:
    try:
        return list(future.result())
    except AehError:
        raise
    except Exception as exc:  # RayTaskError, RayActorError: the worker's own traceback is in str(exc)
        raise RayWorkerError(f"a Ray worker failed: {exc}\nthe attempts that came back are stored; "
                             "fix the cause, then finish the run with `aeh run --resume RUN_ID`") from exc
