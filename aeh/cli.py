"""The `aeh` command. Each subcommand parses, calls the library, and prints.

Exit codes:
    0   success
    1   `aeh compare` found at least one regressed task, or `aeh drift` a significant decline
    2   bad input: a suite, option, file or run id that does not validate (message says which)
    3   the run finished but is not a valid measurement (harness-error rate above 2%)
    4   `aeh drift` had too few runs to judge a trend (no verdict either way)
    130 interrupted
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from aeh.errors import AehError

__all__ = ["main"]

EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_INVALID_RUN, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_NOT_ENOUGH_RUNS = 4

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    def add(fn: Command) -> Command:
        _COMMANDS[name] = fn
        return fn

    return add


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help="SQLite store (default: $AEH_DB, else the nearest runs.db walking up "
                                "from the working directory, else ./runs.db)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aeh", description="Agent Eval Harness: run agents on task suites, many times, and report honest numbers.",
        epilog="Exit codes: 0 ok · 1 compare found a regression / drift found a decline · 2 bad input · "
               "3 run not a valid measurement (harness errors > 2%) · 4 drift: too few runs to judge · "
               "130 interrupted",
    )
    from aeh._version import __version__

    parser.add_argument("--version", action="version", version=f"aeh {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    tasks = sub.add_parser("tasks", help="validate or list a suite's tasks")
    tsub = tasks.add_subparsers(dest="tasks_command", required=True, metavar="ACTION")
    v = tsub.add_parser("validate", help="load suites and report every problem (default: all shipped suites)")
    v.add_argument("--suite", action="append", help="suite name or directory (repeatable)")
    ls = tsub.add_parser("list", help="list a suite's tasks")
    ls.add_argument("--suite", required=True)

    r = sub.add_parser("run", help="run a suite against an adapter and print the per-task table")
    r.add_argument("--suite", required=True, help="shipped name (smoke, toy_math, core), entry point, or directory")
    r.add_argument("--adapter", default="mock", help="mock | react | single_shot | replay | command | an installed adapter")
    r.add_argument("--model", help="model name (mock: mock-strong | mock-degraded)")
    r.add_argument("--adapter-option", action="append", default=[], metavar="KEY=VALUE",
                   help="adapter option (repeatable), e.g. base_url=http://127.0.0.1:8089/v1 or max_output_tokens=256")
    r.add_argument("--attempts", type=int, default=5, help="attempts per task (default 5)")
    r.add_argument("--concurrency", type=int, default=4, help="attempts in flight at once (default 4)")
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
    r.add_argument("--secret", action="append", dest="secrets", default=[], help="a value to redact from stored traces (repeatable)")
    r.add_argument("--keep-workspaces", action="store_true", help="keep each attempt's working directory")
    r.add_argument("--dry-run", action="store_true", help="validate, resolve config, estimate tokens and cost; call no model")
    r.add_argument("--log-level", default="progress", help="silent | progress | steps | calls | trace")
    r.add_argument("--log-only", type=_csv, default=[], help="only these span categories (tools,model,grading,faults,scheduler,cost)")
    r.add_argument("--log-exclude", type=_csv, default=[], help="hide these span categories")
    r.add_argument("--log-format", default="pretty", help="pretty | jsonl")
    from aeh.adapters._command_cli import add_run_arguments

    add_run_arguments(r)  # coding suites: --solver, --label, --price-in/out, sandbox and retention flags
    _add_db(r)

    runs = sub.add_parser("runs", help="list stored runs")
    _add_db(runs)

    from aeh import commands

    commands.register(sub, _add_db)
    return parser


@command("tasks")
def _tasks(args: argparse.Namespace) -> int:
    from aeh.suite.loader import load_suite

    if args.tasks_command == "list":
        suite = load_suite(args.suite)
        for t in suite.tasks():
            print(f"{t.id:<36} {t.category or '-':<20} tools={','.join(t.tools)}")
        return EXIT_OK
    names = args.suite or _shipped_suites()
    failed = 0
    for name in names:
        try:
            suite = load_suite(name)
        except AehError as exc:
            failed += 1
            print(f"✗ {name}: {exc}")
            continue
        from aeh.suite._coding import CodingSuite, check_contract

        if isinstance(suite, CodingSuite):  # the fixture contract, run for real
            text, ok = check_contract(suite)
            print(text)
            if not ok:
                failed += 1
                print(f"✗ {name}: fixtures break the contract")
                continue
        print(f"✓ {name}: {len(suite.tasks())} tasks valid")
    return EXIT_BAD_INPUT if failed else EXIT_OK


def _shipped_suites() -> list[str]:
    from aeh.suite.builtin import available_builtin_suites

    return available_builtin_suites()


@command("run")
def _run(args: argparse.Namespace) -> int:
    from aeh.analysis import format_run_table
    from aeh.api import run_sync, run_async
    from aeh.logs import RunLogger

    if args.dry_run:
        from aeh.dryrun import dry_run

        print(dry_run(args.suite, adapter=args.adapter, model=args.model, attempts=args.attempts,
                      price_table=args.price_table, fault_profile=args.fault_profile,
                      fault_rate=args.fault_rate, fault_mode=args.fault_mode))
        return EXIT_OK
    logger = RunLogger(args.log_level, args.log_format, args.log_only, args.log_exclude)
    adapter_options = _key_values(args.adapter_option, "--adapter-option")
    options: dict[str, Any] = {}
    for key in ("fault_profile", "fault_rate", "fault_mode", "judge_model", "tasks"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    if args.judge_all:
        options["judge_all"] = True
    from aeh.adapters._command_cli import run_notes, run_options

    coding_adapter_options, coding_options = run_options(args)
    adapter_options.update(coding_adapter_options)
    options.update(coding_options)
    table = run_sync(run_async(
        args.suite, args.adapter, attempts=args.attempts, concurrency=args.concurrency,
        seed=args.seed, db=args.db, model=args.model, price_table=args.price_table,
        redact=not args.no_redact, secrets=args.secrets, progress=logger,
        keep_workspaces=args.keep_workspaces, adapter_options=adapter_options, **options,
    ))
    print(format_run_table(table))
    for line in run_notes(table):
        print(line)
    return EXIT_INVALID_RUN if table.attrs.get("invalid_measurement") else EXIT_OK


def _key_values(items: list[str], flag: str) -> dict[str, Any]:
    """KEY=VALUE pairs; values are parsed as YAML scalars (256 → int, true → bool)."""
    import yaml

    from aeh.errors import ConfigError

    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} {item!r} is not KEY=VALUE — e.g. {flag} max_output_tokens=256")
        parsed[key.strip()] = yaml.safe_load(value)
    return parsed


@command("runs")
def _runs(args: argparse.Namespace) -> int:
    from aeh.store import open_store

    with open_store(args.db, must_exist=True) as store:
        for info in store.runs():
            print(f"{info.run_id}  {info.created_at}  {info.suite:<12} {info.adapter:<11} "
                  f"{info.model or '-':<16} seed={info.seed} attempts={info.attempts} {info.status}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    key = args.command
    try:
        from aeh import commands

        handler = _COMMANDS.get(key) or commands.COMMANDS[key]
        return handler(args)
    except AehError as exc:
        print(f"aeh: error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        print("aeh: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `aeh … | head` closed our stdout: stop quietly, as Unix tools do.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
