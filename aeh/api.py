"""The public entry points that execute things: `run` and its async twin `run_async`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from aeh._util.sync import run_sync
from aeh.adapters import Adapter, adapters, make_adapter
from aeh.adapters.callable import CallableAdapter
from aeh.adapters.options import route_adapter_keywords
from aeh.engine import check_resumable, resume_mismatches, stored_options
from aeh.engine.progress import BarProgress, interactive
from aeh.engine.runplan import check_against_suite, wire_run
from aeh.engine.runspec import RunSpec, spec_docs, spec_signature
from aeh.engine.scheduler import RunProgress, execute_run, run_resources
from aeh.engine.wiring import RunWiring
from aeh.errors import ConfigError
from aeh.grading import require_confinement, require_preflight
from aeh.importers import write_run_cards
from aeh.integrations import WorkerSpec, price_fields
from aeh.integrations.processes import ProcessExecutor
from aeh.integrations.ray import RayExecutor, require_ray
from aeh.logs import RunLogger
from aeh.models import RunInfo
from aeh.pricing import PriceTable, load_price_table
from aeh.store import RedactingSink, Store, StoreLike, default_db, open_store, redaction_record, using_store
from aeh.suite import reload_run_suite, suite_location
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import load_suite
from aeh.trace import SpanSink

if TYPE_CHECKING:
    from aeh.analysis import RunResult

__all__ = ["default_db", "open_store", "run", "run_async", "run_sync"]

T = TypeVar("T")


def _progress_for(progress: RunProgress | bool | None, log_level: str) -> RunProgress:
    if progress is not None and not isinstance(progress, bool):
        return progress  # any observer with RunProgress's methods
    if log_level != "silent" or progress is False:
        return RunLogger(level=log_level)
    if progress is True or interactive():
        return BarProgress()
    return RunLogger(level="silent")


async def run_async(*args: Any, **options: Any) -> RunResult:
    """Execute a suite and return its `RunResult` (the per-task table as `.table`); `.run_id` names the stored run.

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

    `executor="ray"`: run the attempts on Ray workers (extra `aeh-harness[ray]`) at `ray_address`
    (`ray://host:10001`; default `RAY_ADDRESS`, else a local cluster), `ray_workers` actors
    (default one per CPU), each with `concurrency` attempts in flight; this process writes the store.
    `shard="i/n"` (with a seed) runs only shard i (1-based) of the plan under a run id every shard
    shares; `aeh merge` joins the shard stores. `workers=N`: run the attempts on N worker processes
    of this machine, each with its own event loop and its share of `concurrency` (past what one
    loop's CPU keeps up with); this process writes the store. See docs/scale-out.md.

    An adapter's own options (its options model, `aeh.adapters.options`) are keywords too:
    `aeh.run("coding", adapter="command", solver="reference")` is
    `adapter_options={"solver": "reference"}`, and the run options the adapter implies (the
    command adapter's workspace retention) apply as they do for `aeh run --adapter command`.

    `fail_under=RATE`: `.fail_under` (`rate`, `threshold`, `met`) says whether the suite success rate
    reached RATE (the CLI exits 1 when it did not).

    Options (name=default [CLI flag]: meaning), all declared in `aeh.engine.runspec.RunSpec`:
    """
    adapter_name = options.get("adapter", args[1] if len(args) > 1 else None)
    spec = RunSpec.build(*args, caller="aeh.run", **route_adapter_keywords(adapter_name, options))
    if spec.executor == "ray":
        require_ray()
        if spec.workers > 1:
            raise ConfigError(f"workers={spec.workers} runs attempts on processes of this machine; with "
                              "executor='ray' give the Ray actors as ray_workers= (--ray-workers N) instead")
    stored = _stored_run(spec.resume, spec.db) if spec.resume is not None else None
    if stored is not None and not check_resumable(stored[0]):
        return _already_finished(stored, spec.db)
    spec, problems = _resumed(spec, stored)
    loaded, spec = _load(spec, stored)
    prices = load_price_table(spec.price_table)
    # Every option is checked before any adapter starts or the store exists: a typo leaves nothing behind.
    wiring = wire_run(spec)
    adapter = _adapter(spec, stored)
    if stored is not None:
        _refuse_other_settings(stored[0], loaded, adapter, problems)
        wiring.resume = stored[0]
    check_against_suite(loaded, spec, wiring)
    require_preflight(loaded)  # a grader that cannot work here stops the run before any attempt
    require_confinement(loaded, run_resources(spec))  # so does graded code with no jail to run in
    await _prepare(adapter, wiring)
    if spec.executor == "ray":
        wiring.executor = RayExecutor(_worker_spec(spec, adapter, wiring, prices, "executor='ray'"),
                                      address=spec.ray_address, workers=spec.ray_workers)
    elif spec.workers > 1:
        wiring.executor = ProcessExecutor(_worker_spec(spec, adapter, wiring, prices, f"workers={spec.workers}"),
                                          workers=spec.workers)
    run_id = await _execute(spec, loaded, adapter, wiring, prices)
    return _result_table(run_id, spec, stored)


def _resumed(spec: RunSpec, stored: tuple[RunInfo, int] | None) -> tuple[RunSpec, list[str]]:
    """The spec continuing the stored run (its options where the spec says so) and what differs."""
    if stored is None:
        return spec, []
    if spec.shard is not None:
        raise ConfigError("resume a shard without shard=: the stored run knows which shard it is")
    info = stored[0]
    # A function agent replaces the stored adapter: its adapter, model and options are not the run's.
    skip = ("adapter", "model", "adapter_options") if spec.agent is not None or spec.adapter is not None else ()
    return spec.resumed(info.run_id, stored_options(info), skip=skip)


def _load(spec: RunSpec, stored: tuple[RunInfo, int] | None) -> tuple[EvalSuite, RunSpec]:
    """The suite (a resumed run's from its stored location, checked against the stored hash) and
    the spec with the run config every run records: where the suite is, the adapter options."""
    reloaded: EvalSuite | None = None
    suite = spec.suite
    if stored is not None and suite is None:
        reloaded = reload_run_suite(stored[0], flag="--suite")
        suite = stored[0].config.suite.location
        if suite is None:
            raise ConfigError(f"run {stored[0].run_id} did not record its suite (no config.suite.location) — "
                              "pass the suite it ran: `aeh run --resume ID --suite NAME_OR_DIR`")
    if suite is None:
        raise ConfigError("aeh.run needs a suite (a shipped name, entry point or directory), or resume=RUN_ID")
    loaded = reloaded if reloaded is not None else load_suite(suite)
    config = dict(spec.config or {})
    if isinstance(suite, str | Path):
        config.setdefault("suite_spec", suite_location(suite))  # gate, score, replay find it from any folder
    adapter_options = dict(spec.adapter_options or {})
    if not spec.solver_confinement and spec.adapter == "command":  # the adapter's own switch, kept on resume
        adapter_options["confine_solver"] = False
    config.setdefault("adapter_options", {k: v for k, v in adapter_options.items() if k != "api_key"})
    return loaded, spec.model_copy(update={"suite": suite, "config": config, "adapter_options": adapter_options})


def _adapter(spec: RunSpec, stored: tuple[RunInfo, int] | None) -> Adapter:
    """The adapter the spec names, or the function agent wrapped as one."""
    if spec.agent is not None:
        if spec.adapter not in (None, "mock"):
            raise ConfigError("give either agent= (a function) or adapter=, not both")
        return CallableAdapter(spec.agent, model=spec.model, model_free=spec.model_free)
    if spec.model_free:
        raise ConfigError("model_free= describes a function agent: pass it together with agent=")
    if spec.adapter is not None and not isinstance(spec.adapter, str):
        return spec.adapter
    try:
        return make_adapter(spec.adapter or "mock", model=spec.model, **(spec.adapter_options or {}))
    except ConfigError as exc:
        if stored is None:
            raise
        raise ConfigError(f"run {stored[0].run_id} used adapter {stored[0].adapter!r}, which cannot be rebuilt "
                          f"from the store ({exc}) — pass the same adapter= or agent= to resume it") from exc


def _refuse_other_settings(stored: RunInfo, suite: EvalSuite, adapter: Adapter, problems: list[str]) -> None:
    """A resumed run must equal an uninterrupted one: refuse a suite, adapter or option that differs."""
    problems = resume_mismatches(stored, suite, adapter) + problems
    if problems:
        raise ConfigError(f"cannot resume run {stored.run_id} with different settings: " + "; ".join(problems)
                          + " — resume with the stored ones (leave these options out), or start a new run")


async def _prepare(adapter: Adapter, wiring: RunWiring) -> None:
    """The adapter's own checks and set-up, before the first attempt."""
    preflight = getattr(adapter, "preflight", None)
    if callable(preflight):
        preflight()  # one clear error for a missing key, not a harness error per attempt
    warm_up = getattr(adapter, "warm_up", None)
    if callable(warm_up):
        await warm_up()  # client set-up is the harness's time, not the first attempt's
    if getattr(getattr(adapter, "options", None), "probe_tools", False):
        wiring.facts["tools_probe"] = await adapter.probe_tools()  # type: ignore[attr-defined]


async def _execute(spec: RunSpec, suite: EvalSuite, adapter: Adapter, wiring: RunWiring,
                   prices: PriceTable) -> str:
    """Run it into the store (a run creates the store; one opened here from a path is closed here)."""
    suite_secrets = list(getattr(suite, "secrets", lambda: [])()) + list(spec.secrets or [])
    logger = _progress_for(spec.progress, spec.log_level)
    with using_store(spec.db, secrets=suite_secrets, redact=spec.redact, must_exist=False) as store:
        # One redactor for every sink: the store's, whether `db` was a path or a Store.
        wiring.facts["redaction"] = redaction_record(store.redactor)
        if isinstance(logger, RunLogger):
            logger.redactor = store.redactor
        span_sinks: list[SpanSink] = [RedactingSink(s, store.redactor) for s in spec.sinks or []]
        span_sinks += [logger] if isinstance(logger, RunLogger) and logger.wants_spans else []
        if isinstance(wiring.executor, RayExecutor | ProcessExecutor):
            wiring.executor.sinks = span_sinks
        info = await execute_run(suite, adapter, store, prices, spec, wiring, sinks=span_sinks, progress=logger)
        return info.run_id


def _result_table(run_id: str, spec: RunSpec, stored: tuple[RunInfo, int] | None) -> RunResult:
    """The run's result, with what a resume ran and the --fail-under verdict."""
    from aeh.analysis import resumed, run_table, with_fail_under  # heavy: loaded once the attempts are done

    result = run_table(run_id, spec.db)
    if stored is not None:
        result = resumed(result, stored[1])
    if spec.run_card is not None:
        write_run_cards(run_id, spec.run_card, spec.db)
    return result if spec.fail_under is None else with_fail_under(result, spec.fail_under)


def _already_finished(stored: tuple[RunInfo, int], db: StoreLike) -> RunResult:
    from aeh.analysis import resumed, run_table  # heavy: loaded on first use

    info, count = stored
    return resumed(run_table(info.run_id, db), count, already_finished=True)


def _worker_spec(spec: RunSpec, adapter: Adapter, wiring: RunWiring, prices: PriceTable, what: str) -> WorkerSpec:
    """What worker processes (Ray's or this machine's) rebuild the run from: they load the suite
    from its spec and make the adapter by name, so refuse what cannot be rebuilt that way."""
    suite = spec.suite
    if not isinstance(suite, str | Path):
        raise ConfigError(f"{what} needs the suite as a name, entry point or directory (workers load "
                          "it themselves), not a suite object")
    if isinstance(adapter, CallableAdapter) or not isinstance(adapter.name, str) or adapter.name not in adapters:
        raise ConfigError(f"{what} rebuilds the adapter by name on every worker: give adapter='NAME' "
                          "(with adapter_options), not agent= or an adapter object")
    workers = spec.ray_workers if spec.executor == "ray" else spec.workers
    for name in ("max_connections", "judge_max_connections"):
        cap = getattr(spec, name)
        if cap is not None and workers is not None and cap < workers:
            flag = "--ray-workers" if spec.executor == "ray" else "--workers"
            raise ConfigError(f"{name}={cap} cannot be shared by {workers} workers (each needs a connection) "
                              f"— give {flag} at most --{name.replace('_', '-')}")
    # A directory by absolute path: a worker's working directory need not be this one.
    local = Path(suite).expanduser()
    suite_spec = str(local.resolve()) if local.is_dir() else str(suite)
    return WorkerSpec(suite=suite_spec, adapter=adapter.name, model=spec.model,
                      adapter_options=dict(spec.adapter_options or {}),
                      run_options=spec.for_worker(wiring.fault_profile), prices=price_fields(prices),
                      concurrency=spec.concurrency)


def _stored_run(run_id: str, db: str | Path | Store | None) -> tuple[RunInfo, int]:
    """The stored run `run_id` names (liveness applied) and how many attempts it has stored."""
    with using_store(db, must_exist=True) as store:
        info = store.run_info(run_id)
        return info, len(store.attempts_frame(info.run_id, columns=["attempt"]))


def run(*args: Any, **options: Any) -> RunResult:
    """Execute a suite and return its `RunResult`, the per-task table as `.table` (scripts and Jupyter).

    The options are those of `run_async` (agent, model, progress, log_level, fault_profile, …);
    `agent=fn` runs a plain function `fn(task, tools)` as the agent, with no adapter class;
    `resume=RUN_ID` finishes a run that was interrupted, into the same run.

    Options (name=default [CLI flag]: meaning), all declared in `aeh.engine.runspec.RunSpec`:
    """
    return run_sync(run_async(*args, **options))


for _fn in (run, run_async):
    # help(), inspect.signature and Jupyter's tooltip show every option with its type and default.
    _fn.__signature__ = spec_signature(returns="RunResult")  # type: ignore[union-attr]
    _fn.__doc__ = f"{_fn.__doc__ or ''}\n{spec_docs()}\n"
