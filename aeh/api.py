"""The public entry points that execute things: `run` and its async twin `run_async`."""

from __future__ import annotations

import asyncio
import concurrent.futures
import difflib
import inspect
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from aeh._progress import BarProgress, interactive
from aeh.adapters.base import Adapter, make_adapter
from aeh.adapters.callable import CallableAdapter
from aeh.analysis import run_table, score_run
from aeh.engine.runplan import build_run_options, check_against_suite
from aeh.engine.scheduler import RunProgress, execute_run
from aeh.errors import ConfigError
from aeh.logs import RunLogger
from aeh.pricing import load_price_table
from aeh.store import Store, default_db, using_store
from aeh.store import open_store as _open_store
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import load_suite

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


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also inside a running Jupyter kernel's event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    # A loop is already running in this thread (Jupyter): run ours on a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def run_async(
    suite: str | Path | EvalSuite,
    adapter: str | Adapter = "mock",
    attempts: int = 5,
    concurrency: int = 4,
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
    **options: Any,
) -> pd.DataFrame:
    """Execute a suite and return its per-task table; `df.attrs["run_id"]` names the stored run.

    `agent`: a plain function `agent(task, tools)` (sync or async) to run instead of an adapter;
    see `aeh.adapters.callable`.

    `progress`: None shows a bar in Jupyter or on a terminal and nothing elsewhere; True/False
    force it on/off; a RunProgress observes the run itself. `log_level` other than "silent"
    logs lines to stderr as the CLI does. An unknown keyword is a ConfigError naming the valid ones.
    """
    _check_options(options)
    loaded = load_suite(suite)
    prices = load_price_table(price_table)
    suite_secrets = list(getattr(loaded, "secrets", lambda: [])()) + list(secrets or [])
    config = dict(options.pop("config", None) or {})
    if isinstance(suite, str | Path):
        config.setdefault("suite_spec", str(suite))  # lets `aeh replay` load the same suite
    config.setdefault("adapter_options", {k: v for k, v in (adapter_options or {}).items() if k != "api_key"})
    # Every option is checked before any adapter starts or the store exists: a typo leaves nothing behind.
    run_options = build_run_options(attempts=attempts, concurrency=concurrency, seed=seed,
                                    tasks=tasks, config=config, **options)
    check_against_suite(loaded, run_options)
    if agent is not None:
        if adapter != "mock":
            raise ConfigError("give either agent= (a function) or adapter=, not both")
        adapter = CallableAdapter(agent, model=model)
    elif isinstance(adapter, str):
        adapter = make_adapter(adapter, model=model, **(adapter_options or {}))
    preflight = getattr(adapter, "preflight", None)
    if callable(preflight):
        preflight()  # one clear error for a missing key, not a harness error per attempt
    warm_up = getattr(adapter, "warm_up", None)
    if callable(warm_up):
        await warm_up()  # client set-up is the harness's time, not the first attempt's
    if getattr(getattr(adapter, "options", None), "probe_tools", False):
        run_options.config["tools_probe"] = await adapter.probe_tools()  # type: ignore[attr-defined]
    logger = _progress_for(progress, log_level)
    span_sinks = list(sinks or []) + ([logger] if isinstance(logger, RunLogger) else [])
    # a run creates the store; one opened here from a path is closed here
    with using_store(db, secrets=suite_secrets, redact=redact, must_exist=False) as store:
        info = await execute_run(loaded, adapter, store, prices, run_options, sinks=span_sinks,
                                 progress=logger)
        score_run(info.run_id, store, suite=loaded)  # trajectory dimensions, stored beside the attempts
        return run_table(info.run_id, store)


def run(
    suite: str | Path | EvalSuite,
    adapter: str | Adapter = "mock",
    attempts: int = 5,
    concurrency: int = 4,
    seed: int | None = None,
    db: str | Path | Store | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Execute a suite and return its per-task table (works in scripts and in Jupyter).

    Keyword options are those of `run_async` (agent, model, progress, log_level, fault_profile, …);
    `agent=fn` runs a plain function `fn(task, tools)` as the agent, with no adapter class.
    """
    return run_sync(run_async(suite, adapter, attempts, concurrency, seed, db, **options))
