"""`aeh run --suite S --adapter A`: run a suite against an adapter and print the per-task table."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import yaml

from aeh.commands._coding_options import add_run_arguments, run_notes, run_options
from aeh.commands._exit import EXIT_INTERRUPTED, EXIT_INVALID_RUN, EXIT_OK
from aeh.errors import ConfigError

NAME = "run"
HELP = "run a suite against an adapter and print the per-task table"


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    r = parser
    r.add_argument("--suite", help="shipped name (smoke, toy_math, core), entry point, or directory "
                                   "(required unless --resume)")
    r.add_argument("--resume", metavar="RUN_ID",
                   help="finish a run that did not end (interrupted, killed, store failure): run only its "
                        "missing attempts, with its seed, into the same run; suite, adapter and options "
                        "default to the stored ones and must match them if given")
    r.add_argument("--adapter",
                   help="mock | react | single_shot | replay | command | an installed adapter (default mock)")
    r.add_argument("--agent", metavar="MODULE:FN",
                   help="run your own function fn(task, tools) as the agent instead of an adapter "
                        "(module:function or path/to/agent.py:function)")
    r.add_argument("--model-free", action="store_true",
                   help="with --agent: the function calls no model, so attempts without reported usage cost "
                        "$0 (otherwise they are unpriced)")
    r.add_argument("--model", help="model name (mock: mock-strong | mock-degraded)")
    r.add_argument("--adapter-option", action="append", default=[], metavar="KEY=VALUE",
                   help="adapter option (repeatable), e.g. base_url=http://127.0.0.1:8089/v1 or max_output_tokens=256")
    r.add_argument("--attempts", type=int, help="attempts per task (default 5)")
    r.add_argument("--concurrency", type=int, help="attempts in flight at once (default 4)")
    r.add_argument("--max-connections", type=int,
                   help="model requests in flight per endpoint (default: no limit beyond --concurrency); "
                        "1 for a server that handles one request at a time — time waiting for a slot "
                        "is queue time, not the agent's")
    r.add_argument("--judge-max-connections", type=int, default=2,
                   help="judge requests in flight to a judge endpoint the agent does not use (default 2); "
                        "on the agent's endpoint the judge shares --max-connections")
    r.add_argument("--seed", type=int, help="run seed; same seed, same trajectories (default: random, stamped)")
    r.add_argument("--task", action="append", dest="tasks", help="only this task id (repeatable)")
    r.add_argument("--fault-profile", help="faults.yaml with tool fault rates, mode and tools")
    r.add_argument("--fault-rate", type=float, help="override the profile's per-call fault rate")
    r.add_argument("--fault-mode", choices=["uniform", "burst"], help="override the fault profile's mode")
    r.add_argument("--judge-model", help="model for the judge grader and tier-2 localization")
    r.add_argument("--judge-all", action="store_true",
                   help="also have the judge grade every attempt (shadow: never counts toward success), "
                        "so judge-agreement has attempts graded both ways")
    r.add_argument("--price-table", help="your own price table YAML (default: the shipped one)")
    r.add_argument("--no-redact", action="store_true", help="store traces unredacted (off by default)")
    r.add_argument("--secret", action="append", dest="secrets", default=[],
                   help="a value to redact from stored traces (repeatable)")
    r.add_argument("--keep-workspaces", action="store_true", help="keep each attempt's working directory")
    r.add_argument("--dry-run", action="store_true",
                   help="validate, resolve config, estimate tokens and cost; call no model")
    r.add_argument("--log-level", default="progress", help="silent | progress | steps | calls | trace")
    r.add_argument("--log-only", type=_csv, default=[],
                   help="only these span categories (tools,model,grading,faults,scheduler,cost)")
    r.add_argument("--log-exclude", type=_csv, default=[], help="hide these span categories")
    r.add_argument("--log-format", default="pretty", help="pretty | jsonl")
    r.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="where attempts run: this process (default) or Ray workers (extra aeh[ray]); "
                        "this process writes the store either way")
    r.add_argument("--ray-address", metavar="ADDR",
                   help="with --executor ray: the cluster, e.g. ray://host:10001 (default: RAY_ADDRESS, "
                        "else a local cluster on this machine)")
    r.add_argument("--ray-workers", type=int, metavar="N",
                   help="with --executor ray: worker actors, one CPU each (default: one per CPU); each runs "
                        "--concurrency attempts at once")
    r.add_argument("--shard", metavar="I/N",
                   help="run only shard I of N (1-based) of the (task, attempt) plan, e.g. 1/4; needs --seed, "
                        "and every shard gets one derived run id (or --run-id); join stores with `aeh merge`")
    r.add_argument("--run-id", help="the new run's id (default: a timestamp, or for --shard one derived from "
                                    "suite, seed and plan)")
    add_run_arguments(r)  # coding suites: --solver, --label, --price-in/out, sandbox and retention flags
    add_db(r)


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use (pandas, polars and the engine stay out of `aeh --help`)
    from aeh.adapters.callable import load_agent
    from aeh.analysis import format_run_table
    from aeh.api import run_async, run_sync
    from aeh.dryrun import dry_run
    from aeh.logs import RunLogger

    if args.suite is None and args.resume is None:
        raise ConfigError("aeh run needs --suite NAME_OR_DIR (or --resume RUN_ID to finish a stored run)")
    if args.dry_run:
        if args.suite is None:
            raise ConfigError("--dry-run needs --suite")
        print(dry_run(args.suite, adapter=args.adapter or "mock", model=args.model, attempts=args.attempts or 5,
                      price_table=args.price_table, fault_profile=args.fault_profile,
                      fault_rate=args.fault_rate, fault_mode=args.fault_mode))
        return EXIT_OK
    options: dict[str, Any] = {}
    if args.agent:
        if args.adapter not in (None, "mock"):
            raise ConfigError("give either --agent MODULE:FN or --adapter, not both")
        options["agent"] = load_agent(args.agent)
        options["model_free"] = args.model_free
    elif args.model_free:
        raise ConfigError("--model-free describes a function agent: pass it together with --agent MODULE:FN")
    logger = RunLogger(args.log_level, args.log_format, args.log_only, args.log_exclude)
    adapter_options = key_values(args.adapter_option, "--adapter-option")
    for key in ("fault_profile", "fault_rate", "fault_mode", "judge_model", "tasks", "max_connections",
                "judge_max_connections", "shard", "run_id"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    if args.judge_all:
        options["judge_all"] = True
    coding_adapter_options, coding_options = run_options(args)
    adapter_options.update(coding_adapter_options)
    options.update(coding_options)
    try:
        table = run_sync(run_async(
            args.suite, args.adapter, attempts=args.attempts, concurrency=args.concurrency,
            seed=args.seed, db=args.db, model=args.model, price_table=args.price_table,
            redact=not args.no_redact, secrets=args.secrets, progress=logger,
            keep_workspaces=args.keep_workspaces, adapter_options=adapter_options or None,
            resume=args.resume, executor=args.executor, ray_address=args.ray_address,
            ray_workers=args.ray_workers, **options,
        ))
    except KeyboardInterrupt:
        if logger.run_id is None:  # e.g. while suite.py was imported: no run exists to resume
            print("aeh: interrupted before the run started; nothing was stored", file=sys.stderr)
        else:
            print("aeh: interrupted — the attempts that finished are stored; finish the run with "
                  f"`aeh run --resume {logger.run_id}` (`aeh runs` lists it as interrupted)", file=sys.stderr)
        return EXIT_INTERRUPTED
    if table.resume is not None:
        print(table.resume.note)
    print(format_run_table(table))
    for line in run_notes(table):
        print(line)
    return EXIT_INVALID_RUN if table.invalid_measurement else EXIT_OK


def key_values(items: list[str], flag: str) -> dict[str, Any]:
    """KEY=VALUE pairs; values are parsed as YAML scalars (256 → int, true → bool)."""
    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} {item!r} is not KEY=VALUE — e.g. {flag} max_output_tokens=256")
        parsed[key.strip()] = yaml.safe_load(value)
    return parsed
