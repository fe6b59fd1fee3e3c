"""The public entry points that execute things: `run` and its async twin `run_async`."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from aeh.adapters.base import Adapter, make_adapter
from aeh.engine.scheduler import RunProgress, execute_run
from aeh.pricing import load_price_table
from aeh.store import Store
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import load_suite

__all__ = ["default_db", "open_store", "run", "run_async", "run_sync"]

T = TypeVar("T")


def default_db() -> str:
    """The store path by the one rule (see `aeh.store.resolve_db_path`)."""
    from aeh.store import resolve_db_path

    return str(resolve_db_path())


def open_store(db: str | Path | Store | None = None, *, secrets: list[str] | None = None,
               redact: bool = True, must_exist: bool = False) -> Store:
    """`aeh.store.open_store`; kept here for existing imports. Readers should pass `must_exist=True`."""
    from aeh.store import open_store as _open_store

    return _open_store(db, secrets=secrets, redact=redact, must_exist=must_exist)


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
    progress: RunProgress | None = None,
    sinks: list[Any] | None = None,
    tasks: list[str] | None = None,
    adapter_options: dict[str, Any] | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Execute a suite and return its per-task table; `df.attrs["run_id"]` names the stored run."""
    from aeh.analysis import run_table
    from aeh.engine.runplan import build_run_options
    from aeh.logs import RunLogger

    loaded = load_suite(suite)
    if isinstance(adapter, str):
        adapter = make_adapter(adapter, model=model, **(adapter_options or {}))
    preflight = getattr(adapter, "preflight", None)
    if callable(preflight):
        preflight()  # one clear error for a missing key, not a harness error per attempt
    prices = load_price_table(price_table)
    suite_secrets = list(getattr(loaded, "secrets", lambda: [])()) + list(secrets or [])
    store = open_store(db, secrets=suite_secrets, redact=redact, must_exist=False)  # a run creates it
    config = dict(options.pop("config", None) or {})
    if isinstance(suite, str | Path):
        config.setdefault("suite_spec", str(suite))  # lets `aeh replay` load the same suite
    config.setdefault("adapter_options", {k: v for k, v in (adapter_options or {}).items() if k != "api_key"})
    run_options = build_run_options(attempts=attempts, concurrency=concurrency, seed=seed,
                                    tasks=tasks, config=config, **options)
    logger = progress or RunLogger(level=log_level)
    span_sinks = list(sinks or []) + ([logger] if isinstance(logger, RunLogger) else [])
    info = await execute_run(loaded, adapter, store, prices, run_options, sinks=span_sinks,
                             progress=logger)
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
    """Execute a suite and return its per-task table (works in scripts and in Jupyter)."""
    return run_sync(run_async(suite, adapter, attempts, concurrency, seed, db, **options))
