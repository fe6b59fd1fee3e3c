"""The public entry points that execute things: `run` and its async twin `run_async`."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from aeh._progress import BarProgress, interactive
from aeh._sync import run_sync
from aeh.adapters.base import Adapter, adapters, make_adapter
from aeh.adapters.callable import CallableAdapter
from aeh.analysis import RunResult, resumed, run_table
from aeh.engine._resume import check_resumable, resume_mismatches
from aeh.engine.runplan import build_run_options, check_against_suite
from aeh.engine.scheduler import RunOptions, RunProgress, execute_run
from aeh.errors import ConfigError
from aeh.grading._preflight import require_preflight
from aeh.integrations.ray import RayExecutor, WorkerSpec, price_fields, require_ray
from aeh.logs import RunLogger
from aeh.models import RunInfo
from aeh.pricing import load_price_table
from aeh.store import RedactingSink, Store, default_db, redaction_record, using_store
from aeh.store import open_store as _open_store
from aeh.suite._locate import reload_run_suite, suite_location
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import load_suite
from aeh.trace import SpanSink

__all__ = ["default_db", "open_store", "run", "run_async", "run_sync"]

T = TypeVar("T")


def open_store(db: str | Path | Store | None = None, *, secrets: list[str] | None = None,
               redact: bool = True, must_exist: bool = False) -> Store:
    """`aeh.store.open_store` with `must_exist=False` as before; readers should pass `must_exist=True`."""
    return _open_store(db, secrets=secrets, redact=redact, must_exist=must_exist)


def _check_options(options: dict[str, Any]) -> None:
    """Refuse unknown keywords with the valid names, instead of a TypeError deep in the engine."""
    allowed = ({n for n in inspect.signature(run_async).parameters if n not in ("options", "suite")}
               | set(inspect.signature(build_run_options).parameters))
    unknown = sorted(set(options) - allowed)
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(allowed), n=1)
        hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise ConfigError(f"aeh.run got unknown option(s) {', '.join(hints)} — valid options: "
                      f"{', '.join(sorted(allowed))}")


def _progress_for(progress: RunProgress | bool | None, log_level: str) -> RunProgress:
    if progress is not None and not isinstance(progress, bool):
        return progress  # any observer with RunProgress's methods
    if log_level != "silent" or progress is False:
        return RunLogger(level=log_level)
    if progress is True or interactive():
        return BarProgress()
    return RunLogger(level="silent")


async def run_async(
    suite: str | Path | EvalSuite | None = None,
    adapter: str | Adapter | None = None,
    attempts: int | None = None,
    concurrency: int | None = None,
    seed: int | None = None,
    db: str | Path | Store | None = None,
    *,
    model: str | None = None,
    price_table: str | Path | None = None,
    redact: bool = True,
    secrets: list[str] | None = None,
    log_level: str = "silent",
    progress: RunProgress | bool | None = None,
    sinks: list[Any] | None = None,
    tasks: list[str] | None = None,
    adapter_options: dict[str, Any] | None = None,
    agent: Callable[..., Any] | None = None,
    model_free: bool = False,
    resume: str | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    ray_workers: int | None = None,
    **options: Any,
) -> RunResult:
    """Execute a suite and return its `RunResult` (the per-task table as `.table`); `.run_id` names the stored run.

    Defaults: adapter "mock", 5 attempts, concurrency 4.

    `agent`: a plain function `agent(task, tools)` (sync or async) to run instead of an adapter;
    see `aeh.adapters.callable`. Its cost comes from the model calls it reports; an attempt that
    reported none is unpriced unless `model_free=True` says the agent calls no model.

    `progress`: None shows a bar in Jupyter or on a terminal and nothing elsewhere; True/False
    force it on/off; a RunProgress observes the run itself. `log_level` other than "silent"
    logs lines to stderr as the CLI does. An unknown keyword is a ConfigError naming the valid ones.

    `resume`: the id of a stored run that did not finish (interrupted, killed, store failure):
    run only its missing (task, attempt) pairs with its seed, into the same run. Suite, adapter
    and options default to the stored ones; any that are given must match them (ConfigError
    otherwise). A finished run is left alone: `.resume.note` says so.

    `executor="ray"`: run the attempts on Ray workers (extra `aeh[ray]`) at `ray_address`
    (`ray://host:10001`; default `RAY_ADDRESS`, else a local cluster), `ray_workers` actors
    (default one per CPU), each with `concurrency` attempts in flight; this process writes the store.
    `shard="i/n"` (with a seed) runs only shard i (1-based) of the plan under a run id every shard
    shares; `aeh merge` joins the shard stores. See docs/scale-out.md.
    """
    _check_options(options)
    if executor not in ("local", "ray"):
        raise ConfigError(f"executor must be 'local' or 'ray', got {executor!r}")
    if executor == "ray":
        require_ray()
    if resume is not None and options.get("shard") is not None:
        raise ConfigError("resume a shard without shard=: the stored run knows which shard it is")
    stored: RunInfo | None = None
    stored_attempts = 0
    reloaded: EvalSuite | None = None
    if resume is not None:
        stored, stored_attempts = _stored_run(resume, db)
        if not check_resumable(stored):
            return resumed(run_table(stored.run_id, db), stored_attempts, already_finished=True)
        if suite is None:  # the stored location, checked against the stored hash
            reloaded = reload_run_suite(stored, flag="--suite")
            suite = stored.config.get("suite_spec")
        if suite is None:
            raise ConfigError(f"run {stored.run_id} did not record its suite (no config.suite_spec) — "
                              "pass the suite it ran: `aeh run --resume ID --suite NAME_OR_DIR`")
        if adapter is None and agent is None:
            adapter, model = stored.adapter, model if model is not None else stored.model
            adapter_options = adapter_options if adapter_options is not None else (
                stored.config.get("adapter_options") or {})
    if suite is None:
        raise ConfigError("aeh.run needs a suite (a shipped name, entry point or directory), or resume=RUN_ID")
    loaded = reloaded if reloaded is not None else load_suite(suite)
    prices = load_price_table(price_table)
    suite_secrets = list(getattr(loaded, "secrets", lambda: [])()) + list(secrets or [])
    config = dict(options.pop("config", None) or {})
    if isinstance(suite, str | Path):
        config.setdefault("suite_spec", suite_location(suite))  # gate, score, replay find it from any folder
    config.setdefault("adapter_options", {k: v for k, v in (adapter_options or {}).items() if k != "api_key"})

    def plan(attempts: int | None, seed: int | None, tasks: list[str] | None, options: dict[str, Any]) -> RunOptions:
        return build_run_options(attempts=5 if attempts is None else attempts,
                                 concurrency=4 if concurrency is None else concurrency, seed=seed,
                                 tasks=tasks, config=config, **options)

    # Every option is checked before any adapter starts or the store exists: a typo leaves nothing behind.
    run_options = plan(attempts, seed, tasks, options)
    check_against_suite(loaded, run_options)
    require_preflight(loaded)  # a grader that cannot work here stops the run before any attempt
    if agent is not None:
        if adapter not in (None, "mock"):
            raise ConfigError("give either agent= (a function) or adapter=, not both")
        adapter = CallableAdapter(agent, model=model, model_free=model_free)
    elif model_free:
        raise ConfigError("model_free= describes a function agent: pass it together with agent=")
    elif adapter is None or isinstance(adapter, str):
        try:
            adapter = make_adapter(adapter or "mock", model=model, **(adapter_options or {}))
        except ConfigError as exc:
            if stored is None:
                raise
            raise ConfigError(f"run {stored.run_id} used adapter {stored.adapter!r}, which cannot be rebuilt "
                              f"from the store ({exc}) — pass the same adapter= or agent= to resume it") from exc
    if stored is not None:
        # the stored run's settings, now that the adapter they are compared with exists
        attempts, seed, tasks, options = _resume_settings(stored, loaded, adapter, attempts, seed, tasks, options)
        run_options = plan(attempts, seed, tasks, options)
        run_options.resume = stored
    preflight = getattr(adapter, "preflight", None)
    if callable(preflight):
        preflight()  # one clear error for a missing key, not a harness error per attempt
    warm_up = getattr(adapter, "warm_up", None)
    if callable(warm_up):
        await warm_up()  # client set-up is the harness's time, not the first attempt's
    if getattr(getattr(adapter, "options", None), "probe_tools", False):
        run_options.config["tools_probe"] = await adapter.probe_tools()  # type: ignore[attr-defined]
    if executor == "ray":
        run_options.executor = _ray_executor(suite, adapter, model, adapter_options, run_options, options,
                                             prices, ray_address, ray_workers)
    logger = _progress_for(progress, log_level)
    # a run creates the store; one opened here from a path is closed here
    with using_store(db, secrets=suite_secrets, redact=redact, must_exist=False) as store:
        # One redactor for every sink: the store's, whether `db` was a path or a Store.
        run_options.config["redaction"] = redaction_record(store.redactor)
        if isinstance(logger, RunLogger):
            logger.redactor = store.redactor
        span_sinks: list[SpanSink] = [RedactingSink(s, store.redactor) for s in sinks or []]
        span_sinks += [logger] if isinstance(logger, RunLogger) else []
        if isinstance(run_options.executor, RayExecutor):
            run_options.executor.sinks = span_sinks
        info = await execute_run(loaded, adapter, store, prices, run_options, sinks=span_sinks,
                                 progress=logger)
        table = run_table(info.run_id, store)
    return table if stored is None else resumed(table, stored_attempts)


def _resume_settings(stored: RunInfo, suite: EvalSuite, adapter: Adapter, attempts: int | None,
                     seed: int | None, tasks: list[str] | None, options: dict[str, Any],
                     ) -> tuple[int, int, list[str] | None, dict[str, Any]]:
    """The stored run's attempts, seed, tasks and options, after refusing any given one that differs."""
    given = {"attempts": attempts, "seed": seed, "tasks": tasks, "judge_model": options.get("judge_model")}
    problems = resume_mismatches(stored, suite, adapter, given)
    if problems:
        raise ConfigError(f"cannot resume run {stored.run_id} with different settings: " + "; ".join(problems)
                          + " — resume with the stored ones (leave these options out), or start a new run")
    fault_flags = sorted(k for k in ("fault_profile", "fault_rate", "fault_mode") if options.get(k) is not None)
    if fault_flags:
        raise ConfigError(f"cannot resume run {stored.run_id} with {', '.join(fault_flags)}: a resumed run "
                          "injects the faults it stored — leave these options out")
    options = {**options, "judge_model": stored.judge_model, "fault_profile": stored.fault_profile}
    if stored.config.get("judge_all"):
        options.setdefault("judge_all", True)
    return stored.attempts, stored.seed, stored.config.get("tasks"), {
        k: v for k, v in options.items() if v is not None}


def _ray_executor(suite: Any, adapter: Adapter, model: str | None, adapter_options: dict[str, Any] | None,
                  run_options: RunOptions, options: dict[str, Any], prices: Any, address: str | None,
                  workers: int | None) -> RayExecutor:
    """Ray workers rebuild the suite from its spec and the adapter by name: refuse what cannot be."""
    if not isinstance(suite, str | Path):
        raise ConfigError("executor='ray' needs the suite as a name, entry point or directory (workers load "
                          "it themselves), not a suite object")
    if isinstance(adapter, CallableAdapter) or not isinstance(adapter.name, str) or adapter.name not in adapters:
        raise ConfigError("executor='ray' rebuilds the adapter by name on every worker: give adapter='NAME' "
                          "(with adapter_options), not agent= or an adapter object")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError(f"ray_workers must be an integer >= 1, got {workers!r}")
    dropped = ("fault_rate", "fault_mode", "workspace_retention", "run_id", "parent_run_id", "shard", "config")
    worker_options = {k: v for k, v in options.items() if k not in dropped}
    # The profile as resolved here (a file path may not exist on another node).
    worker_options.update(fault_profile=run_options.fault_profile, concurrency=run_options.concurrency)
    # A directory by absolute path: a worker's working directory need not be this one.
    local = Path(suite).expanduser()
    suite_spec = str(local.resolve()) if local.is_dir() else str(suite)
    spec = WorkerSpec(suite=suite_spec, adapter=adapter.name, model=model, adapter_options=dict(adapter_options or {}),
                      run_options=worker_options, prices=price_fields(prices), concurrency=run_options.concurrency)
    return RayExecutor(spec, address=address, workers=workers)


def _stored_run(run_id: str, db: str | Path | Store | None) -> tuple[RunInfo, int]:
    """The stored run `run_id` names (liveness applied) and how many attempts it has stored."""
    with using_store(db, must_exist=True) as store:
        info = store.run_info(run_id)
        return info, len(store.attempts_frame(info.run_id, columns=["attempt"]))


def run(
    suite: str | Path | EvalSuite | None = None,
    adapter: str | Adapter | None = None,
    attempts: int | None = None,
    concurrency: int | None = None,
    seed: int | None = None,
    db: str | Path | Store | None = None,
    **options: Any,
) -> RunResult:
    """Execute a suite and return its `RunResult`, the per-task table as `.table` (scripts and Jupyter).

    Keyword options are those of `run_async` (agent, model, progress, log_level, fault_profile, …);
    `agent=fn` runs a plain function `fn(task, tools)` as the agent, with no adapter class;
    `resume=RUN_ID` finishes a run that was interrupted, into the same run.
    """
    return run_sync(run_async(suite, adapter, attempts, concurrency, seed, db, **options))
